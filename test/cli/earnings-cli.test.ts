import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { cliDatabaseEnv, csvFile, ewa, ewaAt, inDatabase } from '../helpers/cli.ts';

/** A calendar day `days` from the real today (UTC): the CLI's today is the wall clock's. */
function day(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** An organization (default policy: New York) with an hourly job W-1 at 20.00 and a salaried one W-2. */
async function employer(t: TestContext, env: Record<string, string>): Promise<string> {
  const created = await ewa(
    env,
    'orgs',
    'create',
    '--name',
    `Employer ${randomUUID().slice(0, 8)}`,
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const organizationId = created.json().id as string;
  const tag = randomUUID().slice(0, 8);
  const roster = await ewa(
    env,
    'people',
    'import',
    csvFile(t, 'earnings.csv', [
      'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency',
      `W-1,Alex,Rivera,alex.${tag}@example.com,20.00,HOURLY`,
      `W-2,Blair,Stone,blair.${tag}@example.com,52000.00,ANNUALLY`,
    ]),
    '--organization',
    organizationId,
  );
  assert.equal(roster.code, 0, roster.stderr);
  return organizationId;
}

const HEADER = 'row_id,primary_identifier,date,hours,amount';

/** `ewa earnings import --org ORG FILE [flags]` of these lines, under the header. */
function importLines(
  t: TestContext,
  env: Record<string, string>,
  organizationId: string,
  lines: string[],
  ...flags: string[]
) {
  return ewa(
    env,
    'earnings',
    'import',
    '--org',
    organizationId,
    csvFile(t, 'earnings.csv', [HEADER, ...lines]),
    ...flags,
  );
}

test('earnings import: records the good lines, reports the bad ones on stderr, exit 1; again: duplicates', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await employer(t, env);
  // Two days back is not after today anywhere; two days ahead is after it everywhere.
  const path = csvFile(t, 'earnings.csv', [
    HEADER,
    `S-1,W-1,${day(-2)},8,`,
    `S-2,W-2,${day(-2)},,200.00`,
    `S-3,W-2,${day(-2)},4,`,
    `S-4,W-1,${day(2)},1,`,
    `S-5,W-9,${day(-2)},1,`,
  ]);
  const first = await ewa(env, 'earnings', 'import', '--org', organizationId, path);
  assert.equal(first.code, 1, 'a rejected line makes the exit code 1');
  assert.match(first.stdout, /: 5 lines in /);
  assert.match(
    first.stdout,
    /recorded\s+2\s+\(360\.00 USD\)\n\s+duplicates\s+0\n\s+rejected\s+3\n\s+credited\s+135\.00 USD to earnings balances/,
  );
  assert.match(first.stderr, /line 4: hours: job "W-2" is paid ANNUALLY, not by the hour/);
  assert.match(first.stderr, /line 5: date must not be after today/);
  assert.match(first.stderr, /line 6: primary_identifier "W-9" names no job of this organization/);
  assert.match(first.stderr, /Importing earnings \(lines\): \d+\/5 \(100%\)/);

  const state = await inDatabase(env, async (db) => ({
    paychecks: await db
      .selectFrom('paychecks')
      .innerJoin('jobs', 'jobs.id', 'paychecks.job_id')
      .select([
        'jobs.external_primary_identifier as pid',
        'paychecks.gross_earnings_minor as gross',
        'paychecks.net_earnings_minor as net',
        'paychecks.accessible_minor as accessible',
      ])
      .orderBy('jobs.external_primary_identifier')
      .execute(),
    earnings: (await db.selectFrom('earnings').select('external_id').orderBy('external_id').execute()).map(
      (row) => row.external_id,
    ),
  }));
  // 8 h × 20.00 = 160.00: net 120.00, 60.00 accessible; 200.00: net 150.00, 75.00 accessible.
  assert.deepEqual(state.paychecks, [
    { pid: 'W-1', gross: 16_000, net: 12_000, accessible: 6_000 },
    { pid: 'W-2', gross: 20_000, net: 15_000, accessible: 7_500 },
  ]);
  assert.deepEqual(state.earnings, ['S-1', 'S-2'], 'nothing of the rejected lines');

  const again = await ewa(env, 'earnings', 'import', '--org', organizationId, path, '--json');
  assert.equal(again.code, 1);
  const result = again.json();
  assert.deepEqual(
    [result.lines, result.recorded, result.duplicates, result.rejected, result.credited_minor],
    [5, 0, 2, 3, 0],
  );
  assert.deepEqual(
    result.rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
    [
      [4, 'hours'],
      [5, 'date'],
      [6, 'primary_identifier'],
    ],
  );
  assert.equal(again.stderr.includes('line 4:'), false, 'with --json the lines are in the JSON only');

  const clean = await importLines(t, env, organizationId, [
    `S-1,W-1,${day(-2)},8,`,
    `S-6,W-1,${day(-3)},1.5,`,
  ]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(clean.stdout, /recorded\s+1\s+\(30\.00 USD\)\n\s+duplicates\s+1\n\s+rejected\s+0/);
});

test('earnings import: wrong usage, a wrong header or an unknown organization write nothing', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await employer(t, env);
  const good = csvFile(t, 'earnings.csv', [HEADER, `S-1,W-1,${day(-2)},8,`]);

  const help = await ewa(env, 'earnings', 'import', '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /row_id,primary_identifier,date,hours,amount/);
  assert.match(help.stdout, /hours\s+optional\s+hours worked, above 0 and at most 24/);

  const usage: [string[], RegExp][] = [
    [[good], /--organization names the organization; it is required/],
    [['--org', 'acme', good], /--organization must be a UUID \(got "acme"\)/],
    [['--org', organizationId], /name one earnings file/],
    [
      ['--org', organizationId, '/nonexistent/earnings.csv'],
      /cannot read \/nonexistent\/earnings\.csv: ENOENT/,
    ],
    [
      ['--org', organizationId, '--organization', randomUUID(), good],
      /--org is another name for --organization: give one of them/,
    ],
    [
      ['--org', organizationId, csvFile(t, 'earnings.csv', [`${HEADER},note`, `S-1,W-1,${day(-2)},8,,hi`])],
      /line 1: "note" is not an earnings column/,
    ],
    [['--org', organizationId, csvFile(t, 'earnings.csv', [])], /The earnings file is empty/],
  ];
  for (const [argv, message] of usage) {
    const refused = await ewa(env, 'earnings', 'import', ...argv);
    assert.equal(refused.code, 2, `${argv.join(' ')}: ${refused.stderr}`);
    assert.match(refused.stderr, message);
  }
  const nowhere = await ewa(env, 'earnings', 'import', '--org', randomUUID(), good);
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, /ewa earnings import: No organization /);
  const which = await ewa(env, 'earnings');
  assert.equal(which.code, 2);
  assert.match(which.stderr, /ewa earnings: which one\? Commands: ewa earnings import/);

  const earnings = await inDatabase(env, (db) => db.selectFrom('earnings').select('id').execute());
  assert.equal(earnings.length, 0);
});

test('earnings import: a line of a pay period already deposited is rejected on its date unless --allow-backdated', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await employer(t, env);
  // Friday 2026-03-20 in New York. The period 2026-03-02 to 03-15 is deposited today (5 days after its last day):
  // still open to pay. The period 2026-02-16 to 03-01 was deposited on 03-06; 2025-06-02's a year ago.
  const now = new Date('2026-03-20T16:00:00.000Z');
  const path = csvFile(t, 'earnings.csv', [
    HEADER,
    'B-1,W-1,2026-03-13,8,',
    'B-2,W-1,2026-03-01,8,',
    'B-3,W-1,2025-06-02,,100.00',
  ]);
  const refused = await ewaAt(now, env, 'earnings', 'import', '--org', organizationId, path);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stdout, /recorded\s+1\s+\(160\.00 USD\)\n\s+duplicates\s+0\n\s+rejected\s+2/);
  assert.match(
    refused.stderr,
    /line 3: date: the pay period of 2026-03-01 \(2026-02-16 to 2026-03-01\) was due to be deposited on 2026-03-06, before today \(2026-03-20\); .*--allow-backdated/,
  );
  assert.match(refused.stderr, /line 4: date: the pay period of 2025-06-02 \(2025-05-26 to 2025-06-08\)/);
  const stored = () =>
    inDatabase(env, async (db) => ({
      earnings: (await db.selectFrom('earnings').select('external_id').orderBy('external_id').execute()).map(
        (row) => row.external_id,
      ),
      periods: (
        await db
          .selectFrom('paychecks')
          .select('pay_period_starts_at')
          .orderBy('pay_period_starts_at')
          .execute()
      ).map((row) => row.pay_period_starts_at.toISOString().slice(0, 10)),
    }));
  assert.deepEqual(await stored(), { earnings: ['B-1'], periods: ['2026-03-02'] }, 'nothing of B-2 and B-3');

  const allowed = await ewaAt(
    now,
    env,
    'earnings',
    'import',
    '--org',
    organizationId,
    path,
    '--allow-backdated',
  );
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.match(allowed.stdout, /recorded\s+2\s+\(260\.00 USD\)\n\s+duplicates\s+1\n\s+rejected\s+0/);
  assert.deepEqual(await stored(), {
    earnings: ['B-1', 'B-2', 'B-3'],
    periods: ['2025-05-26', '2026-02-16', '2026-03-02'],
  });

  const help = await ewa(env, 'earnings', 'import', '--help');
  assert.match(help.stdout, /\[--allow-backdated\]/);
  assert.match(help.stdout, /deposit day is before today .* is backdated pay/);
});

test('earnings import: a job has at most 24 hours a day, across the file and what is recorded; exit 1', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await employer(t, env);
  const worked = day(-2);
  const first = await importLines(
    t,
    env,
    organizationId,
    [`H-1,W-1,${worked},16,`, `H-2,W-1,${worked},16,`, `H-3,W-1,${worked},8,`],
    '--allow-backdated',
  );
  assert.equal(first.code, 1, first.stderr);
  assert.match(first.stdout, /recorded\s+2\s+\(480\.00 USD\)\n\s+duplicates\s+0\n\s+rejected\s+1/);
  assert.match(first.stderr, new RegExp(`line 3: hours: job "W-1" would have 32 hours on ${worked}`));
  const more = await importLines(
    t,
    env,
    organizationId,
    [`H-4,W-1,${worked},0.5,`],
    '--allow-backdated',
    '--json',
  );
  assert.equal(more.code, 1, more.stderr);
  assert.deepEqual(
    more
      .json()
      .rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
    [[2, 'hours']],
  );
  const rows = await inDatabase(env, async (db) =>
    (await db.selectFrom('earnings').select('external_id').orderBy('external_id').execute()).map(
      (row) => row.external_id,
    ),
  );
  assert.deepEqual(rows, ['H-1', 'H-3']);
});

test('earnings import: a correction may lower a pay period to zero, never below: more is a line refused; exit 1', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await employer(t, env);
  const worked = day(0);
  const imported = await importLines(
    t,
    env,
    organizationId,
    [
      `P-1,W-1,${worked},,100.00`,
      `P-2,W-1,${worked},,-60.00`,
      `P-3,W-1,${worked},,-40.01`,
      `P-4,W-1,${worked},,-40.00`,
    ],
    '--json',
  );
  assert.equal(imported.code, 1, imported.stderr);
  const result = imported.json();
  assert.equal(result.recorded, 3);
  assert.deepEqual(result.rejected_lines, [
    {
      line: 4,
      field: 'amount',
      message: `amount: -40.01 would take the pay of job "W-1" for the pay period of ${worked} below zero: 40.00 is recorded for that period (earlier lines of this file included). A correction lowers the pay recorded for its period, never below zero.`,
    },
  ]);
  const again = await importLines(t, env, organizationId, [`P-5,W-1,${worked},,-9000.00`]);
  assert.equal(again.code, 1, again.stderr);
  assert.match(
    again.stderr,
    /-9000\.00 would take the pay of job "W-1" for the pay period of .* 0\.00 is recorded/,
  );
  const pay = await inDatabase(env, async (db) =>
    Number(
      (
        await db
          .selectFrom('earnings')
          .select((eb) => eb.fn.sum<string>('amount_minor').as('pay'))
          .executeTakeFirstOrThrow()
      ).pay,
    ),
  );
  assert.equal(pay, 0, 'the period is at zero: what was refused was not written');
});
