import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { createOrganization } from '../../src/operator/organizations.ts';
import { importRoster } from '../../src/operator/roster-import.ts';
import { testFileDatabase } from '../helpers/test-database.ts';

const HEADER = 'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency,activation_status';

async function setup(options: { products?: string[]; currency?: string } = {}) {
  const database = await testFileDatabase();
  const { db } = database;
  const organization = await createOrganization(db, {
    name: `Employer ${randomUUID().slice(0, 8)}`,
    products: options.products ?? ['ODP'],
    policy: options.currency ? { currency: options.currency } : {},
  });
  const tag = randomUUID().slice(0, 8);
  const run = async (...lines: string[]) => {
    const result = await importRoster(database, {
      organizationId: organization.id,
      source: [[HEADER, ...lines].join('\n')],
    });
    return {
      counts: [result.created, result.updated, result.unchanged, result.rejected],
      problems: result.problems,
    };
  };
  return {
    database,
    db,
    organizationId: organization.id,
    tag,
    run,
    email: (name: string) => `${name}.${tag}@example.com`,
  };
}

async function people(db: Db, tag: string) {
  return db
    .selectFrom('people')
    .select(['id', 'email', 'first_name', 'last_name'])
    .where('email', 'like', `%.${tag}@example.com`)
    .orderBy('email')
    .execute();
}

async function jobsOf(db: Db, organizationId: string) {
  return db
    .selectFrom('jobs')
    .leftJoin('accounts', 'accounts.id', 'jobs.earnings_balance_account_id')
    .select([
      'jobs.external_primary_identifier as pid',
      'jobs.person_id',
      'jobs.first_name',
      'jobs.activation_status',
      'jobs.wage_rate_minor',
      'jobs.wage_currency',
      'jobs.earnings_balance_account_id as account_id',
      'accounts.currency as account_currency',
    ])
    .where('jobs.organization_id', '=', organizationId)
    .orderBy('jobs.external_primary_identifier')
    .execute();
}

test('one worker on two lines is one person with two jobs, and the same file again changes nothing', async () => {
  const { db, tag, run, email, organizationId } = await setup();
  const lines = [
    `W-1,Alex,Rivera,${email('alex')},20.00,HOURLY,`,
    `W-2,Alexander,Rivera,${email('alex')},25.00,HOURLY,`,
  ];
  assert.deepEqual((await run(...lines)).counts, [2, 0, 0, 0]);
  const [person] = await people(db, tag);
  assert.equal(person!.first_name, 'Alex', "the person's details come from the first line naming them");
  const jobs = await jobsOf(db, organizationId);
  assert.deepEqual(
    jobs.map((job) => [job.pid, job.first_name, job.person_id]),
    [
      ['W-1', 'Alex', person!.id],
      ['W-2', 'Alexander', person!.id],
    ],
  );
  assert.notEqual(
    jobs[0]!.account_id,
    jobs[1]!.account_id,
    'each activated job has its own earnings balance',
  );
  assert.deepEqual((await run(...lines)).counts, [0, 0, 2, 0]);
  const changed = await run(
    `W-1,Alex,Rivera,${email('alex')},20.00,HOURLY,`,
    `W-2,Alexander,Rivera,${email('other')},25.00,HOURLY,`,
  );
  assert.deepEqual(changed.counts, [0, 0, 1, 1]);
  assert.equal(changed.problems[0]!.field, 'email');
  assert.match(changed.problems[0]!.detail, /has the email alex\.[\da-f]+@example\.com on an earlier line/);
});

test('emails that move between workers in one file are applied in file order', async () => {
  const { db, tag, run, email } = await setup();
  assert.deepEqual(
    (await run(`M-1,Ann,One,${email('a')},20,HOURLY,`, `M-2,Ben,Two,${email('b')},20,HOURLY,`)).counts,
    [2, 0, 0, 0],
  );
  // M-2 gives up b, then M-1 takes it: one statement updating both may meet b still in place, and is redone line by line.
  const moved = await run(`M-2,Ben,Two,${email('c')},20,HOURLY,`, `M-1,Ann,One,${email('b')},20,HOURLY,`);
  assert.deepEqual(moved.counts, [0, 2, 0, 0], JSON.stringify(moved.problems));
  assert.deepEqual(
    (await people(db, tag)).map((person) => [person.first_name, person.email]),
    [
      ['Ann', email('b')],
      ['Ben', email('c')],
    ],
  );
  const swap = await run(`M-1,Ann,One,${email('c')},20,HOURLY,`, `M-2,Ben,Two,${email('b')},20,HOURLY,`);
  assert.deepEqual(
    swap.counts,
    [0, 0, 0, 2],
    'a swap needs two imports: each email still belongs to the other',
  );
  assert.match(swap.problems[0]!.detail, /belongs to another person than the worker of job M-1/);
});

test("another employer's roster links its job to the same person but does not change them", async () => {
  const first = await setup();
  await first.run(`S-1,Sam,Lee,${first.email('sam')},20,HOURLY,`);
  const { database, db, organizationId } = first;
  const second = await createOrganization(db, { name: `Second ${first.tag}` });
  const other = (line: string) =>
    importRoster(database, { organizationId: second.id, source: [`${HEADER}\n${line}\n`] });
  const linked = await other(`T-9,Samuel,Lee-Park,${first.email('sam')},30,HOURLY,`);
  assert.equal(linked.created, 1);
  const [person] = await people(db, first.tag);
  assert.deepEqual([person!.first_name, person!.last_name], ['Sam', 'Lee'], 'the person keeps their details');
  const [job] = await jobsOf(db, second.id);
  assert.equal(job!.person_id, person!.id);
  assert.equal(job!.first_name, 'Samuel', 'the job has its employer’s');
  const moved = await other(`T-9,Samuel,Lee-Park,${first.email('samuel')},30,HOURLY,`);
  assert.equal(moved.rejected, 1);
  assert.match(
    moved.problems[0]!.detail,
    /also works for another employer, so this roster cannot change their email/,
  );
  assert.equal((await jobsOf(db, organizationId)).length, 1);
});

test('activation from the roster: an account when activated, kept when deactivated, none without ODP', async () => {
  const { db, run, email, organizationId } = await setup();
  await run(
    `A-1,Ann,One,${email('a')},20,HOURLY,ACTIVATION_REQUIRED`,
    `A-2,Ben,Two,${email('b')},20,HOURLY,`,
  );
  let jobs = await jobsOf(db, organizationId);
  assert.equal(jobs[0]!.account_id, null);
  const account = jobs[1]!.account_id;
  assert.ok(account);
  assert.deepEqual(
    (
      await run(
        `A-1,Ann,One,${email('a')},20,HOURLY,activated`,
        `A-2,Ben,Two,${email('b')},20,HOURLY,DEACTIVATED`,
      )
    ).counts,
    [0, 2, 0, 0],
  );
  jobs = await jobsOf(db, organizationId);
  assert.ok(jobs[0]!.account_id, 'activated by the roster: its account now');
  assert.deepEqual([jobs[1]!.activation_status, jobs[1]!.account_id], ['DEACTIVATED', account]);
  assert.deepEqual(
    (await run(`A-2,Ben,Two,${email('b')},20,HOURLY,`)).counts,
    [0, 0, 1, 0],
    'an empty activation_status keeps the status',
  );
  await run(`A-2,Ben,Two,${email('b')},20,HOURLY,ACTIVATED`);
  assert.equal((await jobsOf(db, organizationId))[1]!.account_id, account, 'the same account again');

  const plain = await setup({ products: [] });
  await plain.run(`P-1,Pat,Doe,${plain.email('pat')},20,HOURLY,`);
  assert.equal((await jobsOf(db, plain.organizationId))[0]!.account_id, null);
});

test("wages are read in the organization's currency, and its accounts are in it", async () => {
  const { db, run, email, organizationId } = await setup({ currency: 'JPY' });
  const result = await run(
    `Y-1,Yui,Sato,${email('yui')},1500,HOURLY,`,
    `Y-2,Ren,Ito,${email('ren')},1500.50,HOURLY,`,
  );
  assert.deepEqual(result.counts, [1, 0, 0, 1]);
  assert.match(
    result.problems[0]!.detail,
    /wage_amount must be an amount such as 24: digits, at most 0 after the point/,
  );
  const [job] = await jobsOf(db, organizationId);
  assert.deepEqual([job!.wage_rate_minor, job!.wage_currency, job!.account_currency], [1500, 'JPY', 'JPY']);
});

test('a file of several batches: every line counted once, bad lines anywhere refused alone', async () => {
  const { db, run, email, organizationId } = await setup();
  const lines = Array.from({ length: 2_500 }, (_, i) =>
    i === 1_700
      ? `B-${i},Bad,Line,not-an-email,20,HOURLY,`
      : `B-${i},Worker,${i},${email(`w${i % 2_000}`)},20.00,HOURLY,`,
  );
  const first = await run(...lines);
  assert.deepEqual(first.counts, [2_499, 0, 0, 1]);
  assert.deepEqual(
    first.problems.map((problem) => problem.line),
    [1_702],
  );
  const jobs = await jobsOf(db, organizationId);
  assert.equal(jobs.length, 2_499);
  assert.equal(
    new Set(jobs.map((job) => job.person_id)).size,
    1_999,
    'w0…w499 have two jobs each, in different batches',
  );
  const again = await run(...lines);
  assert.deepEqual(again.counts, [0, 0, 2_499, 1]);
});
