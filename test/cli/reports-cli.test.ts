import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { cliDatabaseEnv, ewa, ewaAt, inDatabase } from '../helpers/cli.ts';

/**
 * `ewa complaints` and `ewa reports` from the command line: the record's transitions with their exit codes, the
 * reports in JSON and CSV, and input refused on its face (exit 2) or by the records (exit 1), nothing written.
 */

async function organizationAndPerson(env: Record<string, string>) {
  const organization = randomUUID();
  const person = randomUUID();
  assert.equal((await ewa(env, 'migrate')).code, 0);
  await inDatabase(env, async (db) => {
    await db.insertInto('organizations').values({ id: organization, name: 'Acme, "East"' }).execute();
    await db.insertInto('organization_policies').values({ organization_id: organization }).execute();
    await db
      .insertInto('people')
      .values({
        id: person,
        email: `${person}@people.example`,
        first_name: 'Robin',
        last_name: 'Lee',
        state_of_residence: 'WI',
      })
      .execute();
    await db
      .insertInto('jobs')
      .values({
        id: randomUUID(),
        person_id: person,
        organization_id: organization,
        external_primary_identifier: 'robin',
        first_name: 'Robin',
        last_name: 'Lee',
        wage_rate_minor: 2000,
        wage_frequency: 'HOURLY',
      })
      .execute();
  });
  return { organization, person };
}

test('ewa complaints: open, answer, close and list; a transition the status forbids exits 1', async (t) => {
  const env = await cliDatabaseEnv(t);
  const { organization, person } = await organizationAndPerson(env);
  const opened = await ewaAt(
    new Date('2026-02-03T10:00:00Z'),
    env,
    'complaints',
    'open',
    '--org',
    organization,
    '--person',
    person,
    '--channel',
    'PHONE',
    '--summary',
    'Fee not expected.',
    '--json',
  );
  assert.equal(opened.code, 0, opened.stderr);
  const complaint = opened.json();
  assert.deepEqual([complaint.state, complaint.status], ['WI', 'OPEN']);

  const answered = await ewaAt(
    new Date('2026-02-04T10:00:00Z'),
    env,
    'complaints',
    'answer',
    complaint.id,
    '--answer',
    'The fee was shown first.',
    '--json',
  );
  assert.equal(answered.code, 0, answered.stderr);
  assert.equal(answered.json().answered_at, '2026-02-04T10:00:00.000Z');
  const twice = await ewa(env, 'complaints', 'answer', complaint.id, '--answer', 'Again.');
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /is ANSWERED: only OPEN complaints can be answered/);
  const closed = await ewaAt(
    new Date('2026-04-01T00:00:00Z'),
    env,
    'complaints',
    'close',
    complaint.id,
    '--resolution',
    'Explained.',
  );
  assert.equal(closed.code, 0, closed.stderr);
  assert.match(closed.stdout, /status\s+CLOSED/);
  const shown = await ewa(env, 'complaints', 'show', complaint.id, '--json');
  assert.equal(shown.json().resolution, 'Explained.');
  const listed = await ewa(env, 'complaints', 'list', '--state', 'WI', '--status', 'CLOSED');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`^${complaint.id}\\s+CLOSED\\s+WI`));

  const report = await ewa(env, 'reports', 'state', '--state', 'WI', '--year', '2026', '--quarter', '1');
  assert.equal(report.code, 0, report.stderr);
  assert.deepEqual(
    [report.json().complaints_opened, report.json().complaints_answered, report.json().complaints_closed],
    [1, 1, 0],
  );
  const csv = await ewa(env, 'reports', 'state', '--state', 'WI', '--year', '2026', '--format', 'csv');
  assert.equal(csv.code, 0, csv.stderr);
  const [header, line] = csv.stdout.split('\r\n');
  const row = Object.fromEntries(header!.split(',').map((name, i) => [name, line!.split(',')[i]]));
  assert.deepEqual(
    [row.state, row.from, row.to, row.complaints_opened, row.complaints_closed, row.advances],
    ['WI', '2026-01-01', '2026-12-31', '1', '1', '0'],
  );
  // The employer's net pay is paid by this server (payday_payout PROVIDER, the default): it remits nothing.
  const refused = await ewa(env, 'reports', 'remittance', '--org', organization, '--pay-date', '2026-03-20');
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /payday_payout PROVIDER/);
  assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  assert.equal(refused.stdout, '');
  const badPayout = await ewa(env, 'orgs', 'set-policy', organization, '--payday-payout', 'SOMETIMES');
  assert.equal(badPayout.code, 2, badPayout.stderr);
  assert.match(badPayout.stderr, /payday.payout must be one of PROVIDER, EMPLOYER/);
  const employer = await ewa(
    env,
    'orgs',
    'set-policy',
    organization,
    '--payday-payout',
    'EMPLOYER',
    '--json',
  );
  assert.equal(employer.code, 0, employer.stderr);
  assert.equal(employer.json().policy.payday_payout, 'EMPLOYER');
  const remittance = await ewa(
    env,
    'reports',
    'remittance',
    '--org',
    organization,
    '--pay-date',
    '2026-03-20',
    '--format',
    'csv',
  );
  assert.equal(remittance.code, 0, remittance.stderr);
  assert.match(remittance.stdout, /^organization_id,organization_name,pay_date,/);
  assert.equal(
    remittance.stdout.split('\r\n').length,
    2,
    'the header alone: no paycheck carries a deduction',
  );
});

test('ewa complaints and ewa reports refuse bad input with exit 2 (on its face) or 1 (by the records)', async (t) => {
  const env = await cliDatabaseEnv(t);
  const { organization, person } = await organizationAndPerson(env);
  const unknown = randomUUID();
  const cases: [string[], number, RegExp][] = [
    [['reports', 'state', '--state', 'XX', '--year', '2026'], 2, /--state must be the two-letter code/],
    [['reports', 'state', '--year', '2026'], 2, /--state is required/],
    [['reports', 'state', '--state', 'WI'], 2, /--year is required/],
    [['reports', 'state', '--state', 'WI', '--year', '1999'], 2, /--year must be a whole number from 2000/],
    [['reports', 'state', '--state', 'WI', '--year', '2026', '--half', '3'], 2, /--half must be/],
    [
      ['reports', 'state', '--state', 'WI', '--from', '2026-05-01', '--to', '2026-04-30'],
      2,
      /must not be after/,
    ],
    [['reports', 'state', '--state', 'WI', '--from', '2026-05-01'], 2, /--to is required/],
    [
      ['reports', 'state', '--state', 'WI', '--year', '2026', '--format', 'xml'],
      2,
      /--format must be json or csv/,
    ],
    [['reports', 'remittance', '--pay-date', '2026-03-20'], 2, /--org is required/],
    [['reports', 'remittance', '--org', organization, '--pay-date', '03/20/2026'], 2, /--pay-date must be/],
    [
      ['reports', 'remittance', '--org', unknown, '--pay-date', '2026-03-20'],
      1,
      /No organization has the id/,
    ],
    [
      ['complaints', 'open', '--org', organization, '--channel', 'PHONE', '--summary', 'x'],
      2,
      /state is required/,
    ],
    [
      ['complaints', 'open', '--org', organization, '--state', 'WI', '--channel', 'FAX', '--summary', 'x'],
      2,
      /--channel must be one of/,
    ],
    [
      ['complaints', 'open', '--org', unknown, '--state', 'WI', '--channel', 'PHONE', '--summary', 'x'],
      1,
      /No organization has the id/,
    ],
    [
      [
        'complaints',
        'open',
        '--org',
        organization,
        '--person',
        person,
        '--state',
        'MN',
        '--channel',
        'PHONE',
        '--summary',
        'x',
      ],
      2,
      /not the person's state of residence on record \(WI\)/,
    ],
    [['complaints', 'answer', unknown, '--answer', 'x'], 1, /No complaint has the id/],
    [['complaints', 'answer', 'nope', '--answer', 'x'], 2, /must be a UUID/],
    [['complaints', 'close', unknown], 2, /--resolution must be a non-empty text/],
    [['complaints', 'list', '--status', 'DONE'], 2, /--status must be one of/],
  ];
  for (const [argv, code, message] of cases) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, `ewa ${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, `ewa ${argv.join(' ')}`);
  }
  const count = await inDatabase(env, (db) =>
    db
      .selectFrom('complaints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  );
  assert.equal(Number(count.n), 0, 'nothing written');
});
