import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { capture, cliDatabaseEnv, csvFile, ewa, inDatabase } from '../helpers/cli.ts';

async function createOrganization(env: Record<string, string>, ...flags: string[]): Promise<string> {
  const created = await ewa(
    env,
    'orgs',
    'create',
    '--name',
    `Employer ${randomUUID().slice(0, 8)}`,
    ...flags,
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  return created.json().id;
}

const HEADER =
  'primary_identifier,employee_id,first_name,last_name,email,state_of_residence,title,wage_amount,wage_frequency';

test('orgs: create, list, show and set-policy; a bad value exits 2 naming the field and changes nothing', async (t) => {
  const env = await cliDatabaseEnv(t);
  const name = `Acme Logistics ${randomUUID().slice(0, 8)}`;
  const created = await ewa(
    env,
    'orgs',
    'create',
    '--name',
    name,
    '--access-rate-bp',
    '6000',
    '--time-zone',
    'America/Chicago',
    '--fee-card-instant-minor',
    'none',
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const organization = created.json();
  assert.deepEqual(organization.products, ['ODP']);
  assert.equal(organization.policy.access_rate_bp, 6000);
  assert.equal(organization.policy.time_zone, 'America/Chicago');
  assert.equal(organization.policy.fee_card_instant_minor, null, 'none: not offered');
  assert.equal(organization.policy.withholding_estimate_bp, 2500, 'fields not given take the defaults');

  const refusals: [string[], RegExp][] = [
    [['--access-rate-bp', '12000'], /access_rate_bp must be a whole number from 0 to 10000 \(got 12000\)/],
    [['--access-rate-bp', '50%'], /access_rate_bp must be a whole number from 0 to 10000 \(got "50%"\)/],
    [['--time-zone', 'Mars/Olympus'], /time_zone must be an IANA time zone name/],
    [['--currency', 'usd'], /currency must be an ISO 4217 currency code/],
    [['--pay-calendar-anchor', '2026-02-30'], /pay_calendar_anchor must be a calendar date/],
    [['--transfers-enabled', 'yes'], /transfers_enabled must be true or false/],
    [['--products', 'CARD'], /products: "CARD" is not offered by this server; offered: ODP/],
    [
      ['--minimum-transfer-minor', '200000'],
      /minimum_transfer_minor \(200000\) must not be above maximum_transfer_minor \(100000\)/,
    ],
  ];
  for (const [flags, message] of refusals) {
    const refused = await ewa(env, 'orgs', 'create', '--name', `${name} bis`, ...flags);
    assert.equal(refused.code, 2, flags.join(' '));
    assert.match(refused.stderr, message);
  }
  const blank = await ewa(env, 'orgs', 'create', '--name', '   ');
  assert.equal(blank.code, 2);
  assert.match(blank.stderr, /name must be 1 to 200 characters/);

  const listed = await ewa(env, 'orgs', 'list', '--json');
  assert.equal(listed.code, 0);
  assert.deepEqual(
    listed.json().map((entry: { name: string }) => entry.name),
    [name],
    'the refused creations left nothing behind',
  );
  const text = await ewa(env, 'orgs', 'list');
  assert.match(text.stdout, new RegExp(`${organization.id}  ODP  ${name}`));

  const shown = await ewa(env, 'orgs', 'show', organization.id);
  assert.equal(shown.code, 0);
  assert.match(shown.stdout, /access_rate_bp\s+6000/);
  assert.match(shown.stdout, /fee_card_instant_minor\s+not offered/);
  const valueColumns = new Set(
    shown.stdout
      .split('\n')
      .map((line) => /^( {2}[a-z_]+ +)\S/.exec(line)?.[1]?.length)
      .filter((column) => column !== undefined),
  );
  assert.equal(valueColumns.size, 1, `every policy value starts in one column:\n${shown.stdout}`);

  const tooHighFee = await ewa(
    env,
    'orgs',
    'set-policy',
    organization.id,
    '--fee-bank-instant-minor',
    '1000',
  );
  assert.equal(tooHighFee.code, 2);
  assert.match(
    tooHighFee.stderr,
    /fee_bank_instant_minor \(1000\) must not be above maximum_fee_minor \(999\)/,
  );
  const changed = await ewa(
    env,
    'orgs',
    'set-policy',
    organization.id,
    '--pay-frequency',
    'WEEKLY',
    '--transfers-enabled',
    'false',
    '--fee-bank-instant-minor',
    '150',
    '--json',
  );
  assert.equal(changed.code, 0, changed.stderr);
  const policy = changed.json().policy;
  assert.equal(policy.pay_frequency, 'WEEKLY');
  assert.equal(policy.transfers_enabled, false);
  assert.equal(policy.fee_bank_instant_minor, 150);
  assert.equal(policy.access_rate_bp, 6000, 'fields not given keep their values');
  assert.equal(policy.fee_card_instant_minor, null);
  const withdrawn = await ewa(
    env,
    'orgs',
    'set-policy',
    organization.id,
    '--fee-bank-instant-minor',
    'none',
    '--json',
  );
  assert.equal(withdrawn.code, 0, withdrawn.stderr);
  assert.equal(withdrawn.json().policy.fee_bank_instant_minor, null, 'none: no longer offered');
  assert.equal(withdrawn.json().policy.pay_frequency, 'WEEKLY', 'the other fields stay');

  const nothing = await ewa(env, 'orgs', 'set-policy', organization.id);
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /give at least one policy flag/);
  const unknown = await ewa(env, 'orgs', 'show', randomUUID());
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /ewa orgs show: No organization /);
  const malformed = await ewa(env, 'orgs', 'set-policy', 'not-an-id', '--access-rate-bp', '1');
  assert.equal(malformed.code, 2, 'malformed on its face: wrong usage');
  assert.match(malformed.stderr, /ORGANIZATION_ID must be a UUID \(got "not-an-id"\)/);
});

test('people import: people, jobs and earnings balances; a bad line is refused alone; re-importing changes nothing', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await createOrganization(env);
  const tag = randomUUID().slice(0, 8);
  const email = (name: string) => `${name}.${tag}@example.com`;
  const lines = [
    HEADER,
    `A-1,E-1,Alex,Rivera,${email('Alex')},ny,"Driver, nights",24.00,HOURLY`,
    `A-2,E-2,Bailey,Chen,${email('bailey')},,,21.5,hourly`,
    `A-3,E-3,Casey,Morgan,${email('casey')},CA,Lead,"62,400.00",ANNUALLY`,
    `A-4,E-4,Devon,Patel,${email('devon')},ZZ,,19.00,HOURLY`,
    `A-5,E-5,Emery,Brooks,${email('emery')},TX,,62400.00,ANNUALLY`,
  ];
  const path = csvFile(t, 'roster.csv', lines);
  const first = await ewa(env, 'people', 'import', path, '--organization', organizationId);
  assert.equal(first.code, 1, 'a rejected line makes the exit code 1');
  assert.match(first.stdout, /created\s+3\n\s+updated\s+0\n\s+unchanged\s+0\n\s+rejected\s+2/);
  assert.match(first.stderr, /line 4: wage_amount must be an amount such as 24\.00.*\(got "62,400\.00"\)/);
  assert.match(first.stderr, /line 5: state_of_residence must be a two-letter US state or DC.*\(got "ZZ"\)/);
  assert.match(first.stderr, /Importing roster \(bytes\): \d+\/\d+ \(100%\)/);

  const state = await inDatabase(env, async (db) => ({
    people: await db
      .selectFrom('people')
      .select(['email', 'first_name', 'state_of_residence'])
      .where('email', 'like', `%.${tag}@example.com`)
      .orderBy('email')
      .execute(),
    jobs: await db
      .selectFrom('jobs')
      .leftJoin('accounts', 'accounts.id', 'jobs.earnings_balance_account_id')
      .select([
        'jobs.external_primary_identifier as pid',
        'jobs.person_id',
        'jobs.title',
        'jobs.wage_rate_minor',
        'jobs.wage_frequency',
        'jobs.activation_status',
        'accounts.person_id as account_person_id',
        'accounts.account_type',
        'accounts.subtype',
        'accounts.details',
      ])
      .where('jobs.organization_id', '=', organizationId)
      .orderBy('jobs.external_primary_identifier')
      .execute(),
    accounts: Number(
      (
        await db
          .selectFrom('accounts')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  }));
  assert.deepEqual(
    state.people.map((person) => [person.email, person.first_name, person.state_of_residence]),
    [
      [email('alex'), 'Alex', 'NY'],
      [email('bailey'), 'Bailey', null],
      [email('emery'), 'Emery', 'TX'],
    ],
    'emails lower-cased, states upper-cased; nothing of the refused lines',
  );
  assert.deepEqual(
    state.jobs.map((job) => [
      job.pid,
      job.title,
      job.wage_rate_minor,
      job.wage_frequency,
      job.activation_status,
    ]),
    [
      ['A-1', 'Driver, nights', 2400, 'HOURLY', 'ACTIVATED'],
      ['A-2', null, 2150, 'HOURLY', 'ACTIVATED'],
      ['A-5', null, 6_240_000, 'ANNUALLY', 'ACTIVATED'],
    ],
  );
  for (const job of state.jobs) {
    assert.equal(job.account_type, 'EARNINGS_BALANCE', job.pid);
    assert.equal(job.subtype, 'ODP');
    assert.deepEqual(job.details, {});
    assert.equal(job.account_person_id, job.person_id);
  }
  assert.equal(state.accounts, 3, 'one earnings balance per activated job, nothing else');

  const again = await ewa(env, 'people', 'import', path, '--organization', organizationId, '--json');
  assert.equal(again.code, 1);
  const repeated = again.json();
  assert.deepEqual(
    [repeated.created, repeated.updated, repeated.unchanged, repeated.rejected],
    [0, 0, 3, 2],
    'the same file again changes nothing',
  );
  assert.deepEqual(
    repeated.rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
    [
      [4, 'wage_amount'],
      [5, 'state_of_residence'],
    ],
  );

  // The employer fixes the two lines, changes a title, and names the organization in the file instead.
  const fixed = csvFile(t, 'roster.csv', [
    `organization_id,${HEADER}`,
    ...lines
      .slice(1)
      .map((line) =>
        `${organizationId},${line}`
          .replace('"62,400.00"', '62400.00')
          .replace(',ZZ,', ',NJ,')
          .replace('"Driver, nights"', 'Driver'),
      ),
  ]);
  const third = await ewa(env, 'people', 'import', fixed, '--json');
  assert.equal(third.code, 0, third.stderr);
  const result = third.json();
  assert.equal(result.organization_id, organizationId);
  assert.deepEqual([result.created, result.updated, result.unchanged, result.rejected], [2, 1, 2, 0]);
  const counts = await inDatabase(env, async (db) => ({
    jobs: (
      await db.selectFrom('jobs').select('title').where('organization_id', '=', organizationId).execute()
    ).length,
    people: (
      await db.selectFrom('people').select('id').where('email', 'like', `%.${tag}@example.com`).execute()
    ).length,
    title: (
      await db
        .selectFrom('jobs')
        .select('title')
        .where('organization_id', '=', organizationId)
        .where('external_primary_identifier', '=', 'A-1')
        .executeTakeFirstOrThrow()
    ).title,
  }));
  assert.deepEqual(counts, { jobs: 5, people: 5, title: 'Driver' });
});

test('people import: a wrong header, a missing file or an unknown organization writes nothing', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await createOrganization(env);
  const typo = csvFile(t, 'roster.csv', [
    'primary_identifier,first_name,last_name,emial,wage_amount,wage_frequency',
    'P,A,B,a@b.example,1,HOURLY',
  ]);
  const refused = await ewa(env, 'people', 'import', typo, '--organization', organizationId);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /line 1: "emial" is not a roster column/);
  assert.match(
    refused.stderr,
    /\nUsage: ewa people import ROSTER\.csv .*\nRun `ewa people import --help` for more\.\n$/,
  );
  const missing = await ewa(
    env,
    'people',
    'import',
    csvFile(t, 'roster.csv', ['primary_identifier,first_name']),
    '--organization',
    organizationId,
  );
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /the header lacks the required columns last_name, email, wage_amount, wage_frequency/,
  );
  const noFile = await ewa(
    env,
    'people',
    'import',
    '/nonexistent/roster.csv',
    '--organization',
    organizationId,
  );
  assert.equal(noFile.code, 2);
  assert.match(noFile.stderr, /cannot read \/nonexistent\/roster\.csv: ENOENT/);
  const good = csvFile(t, 'roster.csv', [
    HEADER,
    'P-1,E-1,Alex,Rivera,alex.nobody@example.com,NY,,20.00,HOURLY',
  ]);
  const nowhere = await ewa(env, 'people', 'import', good, '--organization', randomUUID());
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, /No organization /);
  const unnamed = await ewa(env, 'people', 'import', good);
  assert.equal(unnamed.code, 2);
  assert.match(
    unnamed.stderr,
    /names no organization: add an organization_id column, or name it with --organization ID\./,
  );
  const jobs = await inDatabase(env, (db) => db.selectFrom('jobs').select('id').execute());
  assert.equal(jobs.length, 0);
});

test('jobs activate creates the earnings balance account once; deactivate keeps it', async (t) => {
  const env = await cliDatabaseEnv(t);
  const organizationId = await createOrganization(env);
  const withoutOdp = await createOrganization(env, '--products', '');
  const tag = randomUUID().slice(0, 8);
  const header = `${HEADER},activation_status`;
  const imported = await ewa(
    env,
    'people',
    'import',
    csvFile(t, 'roster.csv', [
      header,
      `J-1,E-1,Alex,Rivera,alex.${tag}@example.com,NY,,20.00,HOURLY,ACTIVATION_REQUIRED`,
    ]),
    '--organization',
    organizationId,
  );
  assert.equal(imported.code, 0, imported.stderr);
  const otherImport = await ewa(
    env,
    'people',
    'import',
    csvFile(t, 'roster.csv', [header, `J-2,E-2,Blair,Stone,blair.${tag}@example.com,NY,,20.00,HOURLY,`]),
    '--organization',
    withoutOdp,
  );
  assert.equal(otherImport.code, 0, otherImport.stderr);
  const [jobId, plainJobId] = await inDatabase(env, async (db) => {
    const jobs = await db
      .selectFrom('jobs')
      .select(['id', 'earnings_balance_account_id', 'activation_status'])
      .orderBy('external_primary_identifier')
      .execute();
    assert.deepEqual(
      jobs.map((job) => [job.activation_status, job.earnings_balance_account_id]),
      [
        ['ACTIVATION_REQUIRED', null],
        ['ACTIVATED', null],
      ],
      'no account before activation, nor without ODP',
    );
    return jobs.map((job) => job.id);
  });
  const balanceCount = () =>
    inDatabase(env, async (db) =>
      Number(
        (
          await db
            .selectFrom('accounts')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('account_type', '=', 'EARNINGS_BALANCE')
            .executeTakeFirstOrThrow()
        ).n,
      ),
    );

  const activated = await ewa(env, 'jobs', 'activate', jobId!, '--json');
  assert.equal(activated.code, 0, activated.stderr);
  const first = activated.json();
  assert.equal(first.activation_status, 'ACTIVATED');
  assert.equal(first.earnings_balance_account_created, true);
  assert.match(first.earnings_balance_account_id, /^[\da-f-]{36}$/);
  const again = (await ewa(env, 'jobs', 'activate', jobId!, '--json')).json();
  assert.equal(again.earnings_balance_account_created, false);
  assert.equal(again.earnings_balance_account_id, first.earnings_balance_account_id);
  assert.equal(await balanceCount(), 1);

  const deactivated = await ewa(env, 'jobs', 'deactivate', jobId!);
  assert.equal(deactivated.code, 0, deactivated.stderr);
  assert.match(deactivated.stdout, /activation_status\s+DEACTIVATED/);
  assert.match(deactivated.stdout, new RegExp(`earnings balance\\s+${first.earnings_balance_account_id}`));
  const reactivated = (await ewa(env, 'jobs', 'activate', jobId!, '--json')).json();
  assert.equal(
    reactivated.earnings_balance_account_id,
    first.earnings_balance_account_id,
    'the same account',
  );
  assert.equal(reactivated.earnings_balance_account_created, false);
  assert.equal(await balanceCount(), 1, 'never a second account');

  const plain = (await ewa(env, 'jobs', 'activate', plainJobId!, '--json')).json();
  assert.equal(plain.earnings_balance_account_id, null, 'no ODP, no earnings balance');
  const unknown = await ewa(env, 'jobs', 'deactivate', randomUUID());
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /ewa jobs deactivate: No job /);
  const usage = await ewa(env, 'jobs', 'activate');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /name one job id/);
});

test('help: the operator commands are listed and describe their flags', async () => {
  const main = capture();
  assert.equal(await runCli(['--help'], main.context), 0);
  for (const name of [
    'orgs create',
    'orgs set-policy',
    'people import',
    'jobs activate',
    'jobs deactivate',
  ]) {
    assert.match(main.stdout(), new RegExp(`\\n  ${name} `));
  }
  const help = capture();
  assert.equal(await runCli(['people', 'import', '--help'], help.context), 0);
  for (const column of [
    'organization_id',
    'primary_identifier',
    'wage_amount',
    'wage_frequency',
    'activation_status',
  ]) {
    assert.match(help.stdout(), new RegExp(`\\n  ${column} `));
  }
  const policy = capture();
  assert.equal(await runCli(['orgs', 'set-policy', '--help'], policy.context), 0);
  assert.match(policy.stdout(), /--access-rate-bp/);
  assert.match(policy.stdout(), /--fee-bank-instant-minor/);
});
