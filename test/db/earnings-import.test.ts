import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import type { Database, Db } from '../../src/db/database.ts';
import { InputError } from '../../src/errors/input-error.ts';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { SystemLedger } from '../../src/ledger/ledger-accounts.ts';
import { importEarnings } from '../../src/money/earnings/earnings-import.ts';
import { EarningsRecorder } from '../../src/money/earnings/earnings-recorder.ts';
import { runPayroll } from '../../src/money/payroll.ts';
import { createOrganization } from '../../src/operator/organizations.ts';
import { importRoster } from '../../src/operator/roster-import.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { openTestDatabase, testFileDatabase } from '../helpers/test-database.ts';

const HEADER = 'row_id,primary_identifier,date,hours,amount';

// FIXED_NOW is Wednesday 2026-03-11, 11:30 in New York; the default biweekly period runs 2026-03-02 to 03-15.
const JOBS = [
  'H-1,Alex,Rivera,20.00,HOURLY,',
  'H-2,Bailey,Chen,19.99,HOURLY,',
  'S-1,Casey,Morgan,2000.00,BIWEEKLY,',
  'D-1,Devon,Patel,20.00,HOURLY,DEACTIVATED',
];

/** An organization with the jobs of JOBS (made by the roster import), and an import of earnings into it. */
async function setup(
  options: { database?: Database; policy?: Record<string, unknown>; jobs?: string[] } = {},
) {
  const database = options.database ?? (await testFileDatabase());
  const { db } = database;
  const tag = randomUUID().slice(0, 8);
  const organization = await createOrganization(db, {
    name: `Employer ${tag}`,
    policy: options.policy ?? {},
  });
  const roster = await importRoster(database, {
    organizationId: organization.id,
    source: [
      [
        'primary_identifier,first_name,last_name,wage_amount,wage_frequency,activation_status,email',
        ...(options.jobs ?? JOBS).map((line, i) => `${line},w${i}.${tag}@example.com`),
      ].join('\n'),
    ],
  });
  assert.equal(roster.rejected, 0, JSON.stringify(roster.problems));
  const jobs = new Map(
    (
      await db
        .selectFrom('jobs')
        .select(['id', 'external_primary_identifier as pid', 'earnings_balance_account_id as accountId'])
        .where('organization_id', '=', organization.id)
        .execute()
    ).map((job) => [job.pid, job]),
  );
  const recorder = new EarningsRecorder(db, new SystemLedger(db));
  const run = (
    lines: string[],
    extra: { header?: string; onProgress?: (lines: number) => void; allowBackdated?: boolean } = {},
  ) =>
    importEarnings(db, recorder, {
      organizationId: organization.id,
      source: [[extra.header ?? HEADER, ...lines].join('\n')],
      now: FIXED_NOW,
      onProgress: extra.onProgress,
      allowBackdated: extra.allowBackdated,
    });
  return { db, organizationId: organization.id, jobs, run, recorder };
}

async function paychecksOf(db: Db, jobId: string) {
  return db
    .selectFrom('paychecks')
    .select([
      'status',
      'gross_earnings_minor as gross',
      'employer_withholdings_minor as withholdings',
      'net_earnings_minor as net',
      'accessible_minor as accessible',
    ])
    .where('job_id', '=', jobId)
    .orderBy('pay_period_starts_at')
    .execute();
}

async function balanceOf(db: Db, accountId: string | null): Promise<number | undefined> {
  return (await accountBalancesMinor(db, [accountId!])).get(accountId!);
}

async function counts(db: Db) {
  const count = async (table: 'earnings' | 'ledger_entries' | 'transfers' | 'paychecks') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    earnings: await count('earnings'),
    entries: await count('ledger_entries'),
    transfers: await count('transfers'),
    paychecks: await count('paychecks'),
  };
}

async function assertSoundBooks(db: Db) {
  assert.deepEqual(await checkLedgerInvariants(db), []);
}

test('an import records pay on paychecks and credits earnings balances; the same file again is all duplicates', async () => {
  const { db, jobs, run } = await setup();
  const lines = [
    'r-1,H-1,2026-03-09,8,',
    'r-2,H-1,2026-03-10,,123.45',
    'r-3,S-1,2026-03-09,,500.00',
    'r-3,S-1,2026-03-10,,999.00',
  ];
  const first = await run(lines);
  assert.deepEqual(
    {
      lines: first.lines,
      recorded: first.recorded,
      duplicates: first.duplicates,
      rejected: first.rejected,
      rejectedCount: first.rejectedCount,
    },
    { lines: 4, recorded: 3, duplicates: 1, rejected: [], rejectedCount: 0 },
    'the second r-3 of S-1 is a duplicate within the file, whatever its values',
  );
  // H-1: 8 h × 20.00 + 123.45 = 283.45 gross; withholdings ⌈70.8625⌉ = 70.87; net 212.58; half, 106.29, accessible.
  // S-1: 500.00 gross; 125.00 withheld; net 375.00; 187.50 accessible.
  assert.equal(first.recordedMinor, 28_345 + 50_000);
  assert.equal(first.creditedMinor, 10_629 + 18_750);
  const h1 = jobs.get('H-1')!;
  const s1 = jobs.get('S-1')!;
  const expectedH1 = [
    { status: 'ESTIMATED', gross: 28_345, withholdings: 7_087, net: 21_258, accessible: 10_629 },
  ];
  const expectedS1 = [
    { status: 'ESTIMATED', gross: 50_000, withholdings: 12_500, net: 37_500, accessible: 18_750 },
  ];
  assert.deepEqual(await paychecksOf(db, h1.id), expectedH1);
  assert.deepEqual(await paychecksOf(db, s1.id), expectedS1);
  assert.equal(await balanceOf(db, h1.accountId), 10_629);
  assert.equal(await balanceOf(db, s1.accountId), 18_750);
  const earnings = await db
    .selectFrom('earnings')
    .select(['external_id', 'worked_on', 'hours_hundredths', 'amount_minor', 'source', 'currency'])
    .where('job_id', 'in', [h1.id, s1.id])
    .orderBy('external_id')
    .execute();
  assert.deepEqual(
    earnings.map((row) => [row.external_id, row.hours_hundredths, row.amount_minor, row.source]),
    [
      ['r-1', 800, 16_000, 'SHIFT'],
      ['r-2', null, 12_345, 'SHIFT'],
      ['r-3', null, 50_000, 'SHIFT'],
    ],
  );
  await assertSoundBooks(db);

  const before = await counts(db);
  // The same file with its columns in another order and case.
  const again = await run(
    lines.map((line) => {
      const [rowId, job, date, hours, amount] = line.split(',');
      return [amount, job, hours, date, rowId].join(',');
    }),
    { header: 'Amount,PRIMARY_IDENTIFIER,hours,Date,row_id' },
  );
  assert.deepEqual(
    [
      again.lines,
      again.recorded,
      again.duplicates,
      again.rejectedCount,
      again.recordedMinor,
      again.creditedMinor,
    ],
    [4, 0, 4, 0, 0, 0],
  );
  assert.deepEqual(await counts(db), before, 'nothing written');
  assert.deepEqual(await paychecksOf(db, h1.id), expectedH1);
  assert.equal(await balanceOf(db, h1.accountId), 10_629);
});

test('bad lines are rejected with their line and field, and nothing of them is written; good lines are recorded', async () => {
  const { db, jobs, run } = await setup();
  const lines: [string, string | null][] = [
    ['b-1,H-1,2026-02-30,8,', 'date'],
    ['b-2,H-1,2026-03-12,8,', 'date'],
    ['b-3,H-1,1999-12-31,8,', 'date'],
    ['b-4,H-1,03/09/2026,8,', 'date'],
    ['b-5,S-1,2026-03-09,8,', 'hours'],
    ['b-6,H-1,2026-03-09,8,10.00', 'hours'],
    ['b-7,H-1,2026-03-09,,', 'amount'],
    ['b-8,NOPE,2026-03-09,8,', 'primary_identifier'],
    ['b-9,D-1,2026-03-09,8,', 'primary_identifier'],
    ['b-10,H-1,2026-03-09,,0.00', 'amount'],
    ['b-11,H-1,2026-03-09,,100000.01', 'amount'],
    ['b-12,H-1,2026-03-09,,"1,000.00"', 'amount'],
    ['b-13,H-1,2026-03-09,,+5', 'amount'],
    ['b-14,H-1,2026-03-09,24.01,', 'hours'],
    ['b-15,H-1,2026-03-09,1.005,', 'hours'],
    ['b-16,H-1,2026-03-09,0,', 'hours'],
    [`${'x'.repeat(101)},H-1,2026-03-09,1,`, 'row_id'],
    [',H-1,2026-03-09,1,', 'row_id'],
    ['salary:2026-03-09,S-1,2026-03-09,,1.00', 'row_id'],
    ['b-17,H-1,2026-03-09', null],
    ['g-1,H-1,2026-03-11,24,', 'ok'],
    ['g-2,S-1,2026-03-02,,100000.00', 'ok'],
    ['b-18,,2026-03-09,1,', 'primary_identifier'],
  ];
  const result = await run(lines.map(([line]) => line));
  const expected = lines.flatMap(([, field], i) => (field === 'ok' ? [] : [[i + 2, field]]));
  assert.deepEqual(
    result.rejected.map((problem) => [problem.line, problem.field]),
    expected,
  );
  assert.deepEqual([result.lines, result.recorded, result.duplicates, result.rejectedCount], [23, 2, 0, 21]);
  const message = (line: number) => result.rejected.find((problem) => problem.line === line)!.message;
  assert.match(message(2), /date must be a calendar day as YYYY-MM-DD.*\(got "2026-02-30"\)/);
  assert.match(message(3), /must not be after today, 2026-03-11 in the organization's time zone/);
  assert.match(message(6), /job "S-1" is paid BIWEEKLY, not by the hour; give its pay as an amount/);
  assert.match(message(7), /hours and amount are both given/);
  assert.match(message(9), /"NOPE" names no job of this organization/);
  assert.match(message(10), /job "D-1" is DEACTIVATED; earnings are recorded for ACTIVATED jobs only/);
  assert.match(
    message(12),
    /amount must be an amount other than 0, at most 100000 either way, such as 123\.45/,
  );
  assert.match(message(20), /kept for salary accrual/);
  assert.match(message(21), /the line has 3 fields; the header has 5/);
  const recorded = await db
    .selectFrom('earnings')
    .select(['external_id', 'amount_minor'])
    .where(
      'job_id',
      'in',
      [...jobs.values()].map((job) => job.id),
    )
    .orderBy('external_id')
    .execute();
  assert.deepEqual(
    recorded.map((row) => [row.external_id, row.amount_minor]),
    [
      ['g-1', 48_000],
      ['g-2', 10_000_000],
    ],
  );
  await assertSoundBooks(db);
});

test("hours are paid at the job's hourly rate, rounded half up to the minor unit", async () => {
  const { db, jobs, run } = await setup();
  const result = await run([
    'h-1,H-2,2026-03-09,7.25,',
    'h-2,H-2,2026-03-10,0.01,',
    'h-3,H-2,2026-03-10,0.5,',
  ]);
  assert.equal(result.recorded, 3);
  const earnings = await db
    .selectFrom('earnings')
    .select(['external_id', 'hours_hundredths', 'amount_minor'])
    .where('job_id', '=', jobs.get('H-2')!.id)
    .orderBy('external_id')
    .execute();
  // 7.25 × 19.99 = 144.9275; 0.01 × 19.99 = 0.1999; 0.5 × 19.99 = 9.995.
  assert.deepEqual(
    earnings.map((row) => [row.external_id, row.hours_hundredths, row.amount_minor]),
    [
      ['h-1', 725, 14_493],
      ['h-2', 1, 20],
      ['h-3', 50, 1_000],
    ],
  );
  assert.equal(result.recordedMinor, 15_513);
  const [paycheck] = await paychecksOf(db, jobs.get('H-2')!.id);
  assert.equal(paycheck!.gross, 15_513);
});

test("today is the organization's, and amounts are read in its currency", async () => {
  // At FIXED_NOW it is already 2026-03-12, 05:30, on Kiritimati (UTC+14).
  const { db, jobs, run } = await setup({
    policy: { currency: 'JPY', timeZone: 'Pacific/Kiritimati' },
    jobs: ['Y-1,Yui,Sato,1500,HOURLY,'],
  });
  const result = await run([
    'k-1,Y-1,2026-03-12,,1500',
    'k-2,Y-1,2026-03-12,,1500.5',
    'k-3,Y-1,2026-03-12,2,',
  ]);
  assert.deepEqual(
    result.rejected.map((problem) => [problem.line, problem.field]),
    [[3, 'amount']],
  );
  assert.match(
    result.rejected[0]!.message,
    /such as 123 \(or -123 for a correction\): digits, at most 0 after the point/,
  );
  assert.equal(result.recordedMinor, 1_500 + 3_000);
  const [paycheck] = await paychecksOf(db, jobs.get('Y-1')!.id);
  // Gross ¥4,500; withholdings ¥1,125; net ¥3,375; half is ¥1,687.5, rounded down.
  assert.deepEqual(paycheck, {
    status: 'ESTIMATED',
    gross: 4_500,
    withholdings: 1_125,
    net: 3_375,
    accessible: 1_687,
  });
  assert.equal(await balanceOf(db, jobs.get('Y-1')!.accountId), 1_687);
});

test('a file of several batches: duplicates across batches, the first 1000 rejections listed in order, all counted', async () => {
  const { db, jobs, run } = await setup();
  const lines: string[] = [];
  let good = 0;
  for (let i = 0; i < 3_300; i++) {
    if (i % 3 === 2) lines.push(`bad-${i},H-1,2026-03-09,,x`);
    else lines.push(`m-${good++ % 2_000},H-1,2026-03-09,,1.00`);
  }
  const progress: number[] = [];
  const result = await run(lines, { onProgress: (done) => progress.push(done) });
  assert.deepEqual(
    [result.lines, result.recorded, result.duplicates, result.rejectedCount, result.rejected.length],
    [3_300, 2_000, 200, 1_100, 1_000],
  );
  assert.deepEqual(
    result.rejected.map((problem) => problem.line),
    Array.from({ length: 1_000 }, (_, k) => 3 * k + 4),
    'lines 4, 7, 10, … up to the thousandth bad line',
  );
  assert.ok(result.rejected.every((problem) => problem.field === 'amount'));
  assert.equal(progress.at(-1), 3_300);
  assert.ok(progress.every((done, i) => i === 0 || done >= progress[i - 1]!));
  const [paycheck] = await paychecksOf(db, jobs.get('H-1')!.id);
  assert.equal(paycheck!.gross, 200_000, '2000 distinct rows of 1.00');
  await assertSoundBooks(db);
});

test('a line of a pay period that payroll closed is rejected; one recorded before it closed stays a duplicate', async (t: TestContext) => {
  // A database of its own: payroll closes every ended period it finds.
  const database = await openTestDatabase(t);
  const { db, jobs, run } = await setup({ database });
  // 2026-02-20 is in the period 2026-02-16 to 03-01, which has ended but whose payroll has not run yet; its deposit
  // day, 03-06, has passed: backdated pay, allowed here.
  const early = await run(['p-1,H-1,2026-02-20,8,'], { allowBackdated: true });
  assert.equal(early.recorded, 1);
  const payroll = await runPayroll(db, new SystemLedger(db), FIXED_NOW);
  assert.equal(payroll.closed, 1);
  const h1 = jobs.get('H-1')!;
  const [closed] = await paychecksOf(db, h1.id);
  assert.notEqual(closed!.status, 'ESTIMATED');
  const before = await counts(db);
  const late = await run(['p-1,H-1,2026-02-20,8,', 'p-2,H-1,2026-02-21,4,', 'p-3,H-1,2026-03-09,1,'], {
    allowBackdated: true,
  });
  assert.deepEqual([late.recorded, late.duplicates, late.rejectedCount], [1, 1, 1]);
  assert.deepEqual(
    late.rejected.map((problem) => [problem.line, problem.field]),
    [[3, 'date']],
  );
  assert.match(late.rejected[0]!.message, /the pay period of 2026-02-21 is closed/);
  const after = await counts(db);
  assert.equal(after.earnings, before.earnings + 1, 'only p-3');
  const paychecks = await paychecksOf(db, h1.id);
  assert.deepEqual(
    paychecks.map((paycheck) => paycheck.gross),
    [16_000, 2_000],
  );
  await assertSoundBooks(db);
});

test('a line of a pay period whose deposit day has passed is rejected on its date, unless backdating is allowed', async (t: TestContext) => {
  // A database of its own: payroll closes every ended period it finds. Pay is deposited 10 days after a period's
  // last day: the period 2026-02-16 to 03-01 is deposited on 03-11, today at FIXED_NOW, and is still open to pay;
  // the period 2026-02-02 to 02-15 was deposited on 02-25.
  const database = await openTestDatabase(t);
  const { db, jobs, run } = await setup({ database, policy: { paydayOffsetDays: 10 } });
  const h1 = jobs.get('H-1')!;
  const before = await counts(db);
  const refused = await run(['o-1,H-1,2026-03-01,8,', 'o-2,H-1,2026-02-15,8,', 'o-3,H-1,2025-06-02,,50.00']);
  assert.deepEqual([refused.recorded, refused.duplicates, refused.rejectedCount], [1, 0, 2]);
  assert.deepEqual(
    refused.rejected.map((problem) => [problem.line, problem.field]),
    [
      [3, 'date'],
      [4, 'date'],
    ],
  );
  assert.match(
    refused.rejected[0]!.message,
    /^date: the pay period of 2026-02-15 \(2026-02-02 to 2026-02-15\) was due to be deposited on 2026-02-25, before today \(2026-03-11\); .*--allow-backdated.*allow_backdated=true/,
  );
  const after = await counts(db);
  assert.deepEqual(
    [after.earnings, after.paychecks],
    [before.earnings + 1, before.paychecks + 1],
    'o-1 only, on one paycheck',
  );
  assert.equal(await balanceOf(db, h1.accountId), 6_000, "o-1's accessible share only");
  assert.deepEqual(
    (await paychecksOf(db, h1.id)).map((paycheck) => paycheck.gross),
    [16_000],
    'no paycheck for the refused periods',
  );

  // Allowed: recorded as any pay, on a new ESTIMATED paycheck, its accessible share credited at once.
  const allowed = await run(['o-2,H-1,2026-02-15,8,', 'o-3,H-1,2025-06-02,,50.00'], { allowBackdated: true });
  assert.deepEqual([allowed.recorded, allowed.rejectedCount], [2, 0]);
  const paychecks = await paychecksOf(db, h1.id);
  assert.deepEqual(
    paychecks.map((paycheck) => [paycheck.status, paycheck.gross]),
    [
      ['ESTIMATED', 5_000],
      ['ESTIMATED', 16_000],
      ['ESTIMATED', 16_000],
    ],
  );
  assert.equal(await balanceOf(db, h1.accountId), 2 * 6_000 + 1_875);

  // Sent again without the flag: duplicates, as any file sent twice. After payroll has closed the periods, a new
  // line of one is PERIOD_CLOSED (the flag would not help), not BACKDATED.
  await runPayroll(db, new SystemLedger(db), FIXED_NOW);
  const again = await run(['o-2,H-1,2026-02-15,8,', 'o-4,H-1,2026-02-14,8,', 'o-5,H-1,2026-02-02,1,']);
  assert.deepEqual([again.recorded, again.duplicates, again.rejectedCount], [0, 1, 2]);
  assert.deepEqual(
    again.rejected.map((problem) => [problem.line, problem.field]),
    [
      [3, 'date'],
      [4, 'date'],
    ],
  );
  for (const problem of again.rejected) assert.match(problem.message, /is closed \(its payroll has run\)/);
  await assertSoundBooks(db);
});

test('a wrong header or an empty file is refused before anything is written; an unknown organization too', async () => {
  const { db, run, recorder } = await setup();
  const before = await counts(db);
  const refusals: [string, RegExp][] = [
    ['row_id,primary_identifier,date,hours,amount,note', /line 1: "note" is not an earnings column/],
    ['row_id,primary_identifier,hours', /line 1: the header lacks the required column date/],
    ['row_id,primary_identifier,date', /line 1: the header needs an hours column, an amount column, or both/],
    ['row_id,primary_identifier,date,amount,AMOUNT', /line 1: the column amount appears twice/],
  ];
  for (const [header, message] of refusals) {
    await assert.rejects(run(['a,H-1,2026-03-09,1,2,3'], { header }), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.match(error.message, message);
      return true;
    });
  }
  const importText = (text: string, organizationId?: string) =>
    importEarnings(db, recorder, {
      organizationId: organizationId ?? randomUUID(),
      source: [text],
      now: FIXED_NOW,
    });
  await assert.rejects(importText(`${HEADER}\nx,H-1,2026-03-09,1,\n`), { code: 'RECORD_NOT_FOUND' });
  await assert.rejects(importText(`${HEADER}\nx,H-1,2026-03-09,1,\n`, 'not-an-id'), {
    code: 'RECORD_NOT_FOUND',
  });
  const { organizationId } = await setup({ jobs: [] });
  await assert.rejects(importText('', organizationId), /The earnings file is empty/);
  const headerOnly = await importText(`${HEADER}\n\n`, organizationId);
  assert.deepEqual([headerOnly.lines, headerOnly.recorded, headerOnly.rejectedCount], [0, 0, 0]);
  assert.deepEqual(await counts(db), before);
});

const CORRECTION_HEADER = 'row_id,primary_identifier,date,hours,amount,reverses';

test('corrections: a negative amount lowers pay, a reversal takes a row back once; a bad reversal names the row and field', async () => {
  const { db, jobs, run } = await setup();
  const h1 = jobs.get('H-1')!;
  const header = { header: CORRECTION_HEADER };
  const first = await run(['c-1,H-1,2026-03-09,8,,', 'c-2,H-1,2026-03-10,,100.00,'], header);
  assert.equal(first.recorded, 2);
  // 160.00 + 100.00 = 260.00 gross, 65.00 withheld, 195.00 net, 97.50 accessible.
  assert.equal(await balanceOf(db, h1.accountId), 9750);
  const corrected = await run(
    [
      'c-3,H-1,2026-03-10,,-40.00,',
      'c-4,H-1,,,,c-1',
      'c-5,H-1,,,,c-1',
      'c-6,H-1,,,,nope',
      'c-8,H-1,2026-03-10,,50.00,c-2',
      'c-9,H-1,,,,c-9',
    ],
    header,
  );
  assert.deepEqual(
    corrected.rejected.map((problem) => [problem.line, problem.field]),
    [
      [4, 'reverses'],
      [5, 'reverses'],
      [6, 'amount'],
      [7, 'reverses'],
    ],
  );
  assert.match(corrected.rejected[0]!.message, /row "c-1" of job "H-1" is reversed already/);
  assert.match(corrected.rejected[1]!.message, /job "H-1" has no row "nope" to reverse/);
  const ofReversal = await run(['c-7,H-1,,,,c-4'], header);
  assert.match(ofReversal.rejected[0]!.message, /row "c-4" of job "H-1" is a reversal itself/);
  assert.equal(corrected.recorded, 2);
  assert.equal(corrected.recordedMinor, -4000 - 16_000);
  // 260.00 − 40.00 − 160.00 = 60.00 gross, 15.00 withheld, 45.00 net: 22.50 accessible, nothing was taken.
  const [paycheck] = await paychecksOf(db, h1.id);
  assert.deepEqual(paycheck, {
    status: 'ESTIMATED',
    gross: 6000,
    withholdings: 1500,
    net: 4500,
    accessible: 2250,
  });
  assert.equal(await balanceOf(db, h1.accountId), 2250);
  const again = await run(['c-4,H-1,,,,c-1'], header);
  assert.deepEqual([again.duplicates, again.rejectedCount], [1, 0], 'a reversal sent again is a duplicate');
  // A row and its reversal in one file: the row is recorded first, whichever batch it would have been in.
  const both = await run(['d-1,H-1,2026-03-11,,9.00,', 'd-2,H-1,,,,d-1'], header);
  assert.deepEqual(
    [both.recorded, both.rejectedCount, both.recordedMinor],
    [2, 0, 0],
    JSON.stringify(both.rejected),
  );
  assert.equal(await balanceOf(db, h1.accountId), 2250);
  await assertSoundBooks(db);
});

test('a correction of a paid period lands on the job’s current paycheck', async (t: TestContext) => {
  const database = await openTestDatabase(t);
  const { db, jobs, run } = await setup({ database });
  const early = await run(['q-1,H-1,2026-02-20,8,'], { allowBackdated: true });
  assert.equal(early.recorded, 1);
  await runPayroll(db, new SystemLedger(db), FIXED_NOW);
  const h1 = jobs.get('H-1')!;
  const reversed = await run(['q-2,H-1,,,,q-1'], { header: CORRECTION_HEADER });
  assert.equal(reversed.recorded, 1, JSON.stringify(reversed.rejected));
  const paychecks = await paychecksOf(db, h1.id);
  assert.deepEqual(
    paychecks.map((p) => [p.status === 'ESTIMATED', p.gross, p.net]),
    [
      [false, 16_000, 12_000],
      [true, -16_000, -16_000],
    ],
  );
  await assertSoundBooks(db);
});
