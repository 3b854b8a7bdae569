import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { Scheduler } from '../../src/jobs/scheduler.ts';
import { serverJobs } from '../../src/jobs/server-jobs.ts';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { createMoneyCore } from '../../src/money/money-core.ts';
import { advanceSandbox } from '../../src/sandbox/sandbox-advance.ts';
import {
  raiseSandboxOffsetMs,
  readSandboxOffsetMs,
  SANDBOX_OFFSET_SETTING,
  SandboxClock,
} from '../../src/sandbox/sandbox-clock.ts';
import { resetSandbox } from '../../src/sandbox/sandbox-reset.ts';
import {
  booksOf,
  demoAdvance,
  demoWorker,
  SEEDED_AT,
  sandboxConfig,
  seedDemo,
} from '../helpers/sandbox-world.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

const DAY_MS = 86_400_000;
const QUARTER_HOUR_MS = 15 * 60_000;
/** Real time during the tests: a few minutes after the demo was seeded, standing still. */
const REAL_NOW = new Date(SEEDED_AT.getTime() + 5 * 60_000);
const label = (field: string) => `--${field}`;

const MADE = [1, 2, 3].map((n) => `5f0c9a53-1d2e-4b7a-9c3d-00000000000${n}`);

/** A demo database with three advances still pending: one the rail settles, one it fails, one it returns. */
async function pendingWorld(t: TestContext): Promise<Db> {
  const { db } = await openTestDatabase(t);
  await seedDemo(db);
  const core = createMoneyCore(db, sandboxConfig, { now: () => REAL_NOW });
  const at = new Date(SEEDED_AT.getTime() + 60_000);
  await demoAdvance(core, 'Alex', MADE[0]!, 2_000, at);
  await demoAdvance(core, 'Bailey', MADE[1]!, 666, at);
  await demoAdvance(core, 'Devon', MADE[2]!, 505, at);
  return db;
}

test('advancing 30 days gives the books that living through them with the scheduler gives', async (t) => {
  const [advanced, lived] = [await pendingWorld(t), await pendingWorld(t)];

  const clock = await SandboxClock.open(advanced, () => REAL_NOW);
  const core = createMoneyCore(advanced, sandboxConfig, { now: clock.now });
  const started = performance.now();
  const report = await advanceSandbox(
    { db: advanced, jobs: serverJobs(core, sandboxConfig), clock, soleProcess: true, label },
    { days: 30 },
  );
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`30 days in ${report.steps} steps took ${seconds.toFixed(1)} s`);
  assert.equal(report.from.toISOString(), REAL_NOW.toISOString());
  assert.equal(report.to.getTime(), REAL_NOW.getTime() + 30 * DAY_MS);
  assert.equal(await readSandboxOffsetMs(advanced), 30 * DAY_MS);
  assert.equal(clock.now().getTime(), report.to.getTime());

  // The same 30 days lived through: a scheduler on a fake clock ticking every quarter hour, as the advance steps.
  let fake = REAL_NOW;
  const livedCore = createMoneyCore(lived, sandboxConfig, { now: () => fake });
  const scheduler = new Scheduler({
    db: lived,
    now: () => fake,
    logger: { info: () => {}, error: (object) => assert.fail(JSON.stringify(object)) },
    tickMs: 1000,
  });
  for (const job of serverJobs(livedCore, sandboxConfig)) scheduler.register(job);
  const end = REAL_NOW.getTime() + 30 * DAY_MS;
  for (let at = Math.ceil((REAL_NOW.getTime() + 1) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS; ; ) {
    fake = new Date(Math.min(at, end));
    await scheduler.runDue();
    if (at >= end) break;
    at += QUARTER_HOUR_MS;
  }

  const books = await booksOf(advanced);
  assert.deepEqual(books, await booksOf(lived));
  assert.deepEqual(await checkLedgerInvariants(advanced), []);

  // What the month held: the pending advances resolved (one failed, one returned after it settled), two paydays
  // deposited, and the hourly workers kept working.
  const transfers = await advanced
    .selectFrom('transfers')
    .select(['id', 'status', 'failure_reason', 'returned_at'])
    .where('id', 'in', MADE)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    transfers.map((row) => [row.status, row.failure_reason, row.returned_at !== null]),
    [
      ['SETTLED', null, false],
      ['FAILED', 'DESTINATION_REJECTED', false],
      ['FAILED', 'R03', true],
    ],
  );
  const alex = demoWorker('Alex');
  const paychecks = await advanced
    .selectFrom('paychecks')
    .select(['status', 'pay_period_starts_at'])
    .where('job_id', '=', alex.jobId)
    .orderBy('pay_period_starts_at')
    .execute();
  assert.deepEqual(
    paychecks.map((row) => row.status),
    ['DEPOSITED', 'DEPOSITED', 'DEPOSITED', 'ESTIMATED'],
    'the paid period of the history, then 2-15 and 16-29 March deposited, 30 March to 12 April open',
  );
  const shifts = await advanced
    .selectFrom('earnings')
    .select('worked_on')
    .where('job_id', '=', alex.jobId)
    .where('worked_on', '>', '2026-03-11')
    .execute();
  assert.equal(shifts.length, 21, 'a shift each weekday from 12 March to 9 April (the 10th has not ended)');
  assert.ok(report.jobs.payroll?.paid, 'payday ran');
  assert.equal(report.jobs['settle-due']?.returned, 1);
});

test('advancing again goes on from where the clock stands, and runs nothing twice', async (t) => {
  const db = await pendingWorld(t);
  const clock = await SandboxClock.open(db, () => REAL_NOW);
  const core = createMoneyCore(db, sandboxConfig, { now: clock.now });
  const options = { db, jobs: serverJobs(core, sandboxConfig), clock, soleProcess: true, label };
  const first = await advanceSandbox(options, { days: 1 });
  const runs = await db.selectFrom('scheduled_runs').select(['job_name', 'run_key', 'state']).execute();
  assert.ok(runs.every((run) => run.state === 'DONE'));
  // From 15:35 the next day to 16:35: the quarter hours 15:45 to 16:30, then 16:35.
  const second = await advanceSandbox(options, { to: new Date(first.to.getTime() + 60 * 60_000) });
  assert.equal(second.from.toISOString(), first.to.toISOString());
  assert.equal(second.steps, 5);
  assert.equal(second.jobs.payroll?.runs, 1, 'the hourly jobs ran for 16:00 only: 15:00 was run already');
  assert.equal(
    (await db.selectFrom('scheduled_runs').select('run_key').execute()).length,
    runs.length + 5 + 4,
    "five steps' settlement and one hour of the four hourly jobs",
  );
  await assert.rejects(
    advanceSandbox(options, { to: first.to }),
    /--to .* is not later than the sandbox's time/,
  );
  await assert.rejects(
    advanceSandbox(options, { to: new Date(second.to.getTime() + 367 * DAY_MS) }),
    /366 days/,
  );
});

test('an advance cut off by a failing job stands before it; advancing again ends as one advance does', async (t) => {
  const [cut, whole] = [await pendingWorld(t), await pendingWorld(t)];
  const target = new Date(REAL_NOW.getTime() + 3 * DAY_MS);
  const trapAt = new Date(REAL_NOW.getTime() + 1.5 * DAY_MS);
  const advance = async (db: Db, trap: boolean) => {
    const clock = await SandboxClock.open(db, () => REAL_NOW);
    const core = createMoneyCore(db, sandboxConfig, { now: clock.now });
    const jobs = serverJobs(core, sandboxConfig);
    // Last of a step, as a process that died after the others: they ran at that instant, and are not run again.
    if (trap)
      jobs.push({
        name: 'trap',
        runKeyAt: (now) => (now >= trapAt ? 'once' : undefined),
        run: async () => {
          throw new Error('the process died here');
        },
      });
    return advanceSandbox({ db, jobs, clock, soleProcess: true, label }, { to: target });
  };
  await assert.rejects(advance(cut, true), (error: Error) => {
    assert.equal(error.name, 'SandboxAdvanceError');
    assert.match(error.message, /trap failed at 2026-03-13T03:45:00.000Z \(trap: the process died here\)/);
    assert.match(error.message, /stands at 2026-03-13T03:30:00.000Z/);
    return true;
  });
  assert.equal(await readSandboxOffsetMs(cut), Date.parse('2026-03-13T03:30:00.000Z') - REAL_NOW.getTime());
  const resumed = await advance(cut, false);
  assert.equal(resumed.from.toISOString(), '2026-03-13T03:30:00.000Z');
  await advance(whole, false);
  assert.deepEqual(await booksOf(cut), await booksOf(whole));
});

test('the runs an advance that died left RUNNING ahead of its stored clock are run by the next advance', async (t) => {
  const db = await pendingWorld(t);
  const clock = await SandboxClock.open(db, () => REAL_NOW);
  const core = createMoneyCore(db, sandboxConfig, { now: clock.now });
  const jobs = serverJobs(core, sandboxConfig);
  const settle = jobs.find((job) => job.name === 'settle-due')!;
  // The dead advance had stored the clock at REAL_NOW and walked on to 02:00 the next day before it was killed.
  const leftAt = new Date(
    Math.ceil((REAL_NOW.getTime() + 10 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS,
  );
  const leftKey = settle.runKeyAt(leftAt)!;
  // A server's run claimed a few seconds past this process's now (its clock a little ahead) is alive: left alone.
  const serverAt = new Date(REAL_NOW.getTime() + 5_000);
  await db
    .insertInto('scheduled_runs')
    .values([
      { job_name: 'settle-due', run_key: leftKey, state: 'RUNNING', started_at: leftAt },
      { job_name: 'a-server-job', run_key: 'now', state: 'RUNNING', started_at: serverAt },
    ])
    .execute();
  const report = await advanceSandbox({ db, jobs, clock, soleProcess: true, label }, { days: 1 });
  assert.equal(
    report.jobs['settle-due']?.runs,
    report.steps,
    'settlement ran at every step, the one left too',
  );
  const runs = await db
    .selectFrom('scheduled_runs')
    .select(['job_name', 'run_key', 'state'])
    .where('run_key', 'in', [leftKey, 'now'])
    .orderBy('job_name')
    .execute();
  assert.deepEqual(runs, [
    { job_name: 'a-server-job', run_key: 'now', state: 'RUNNING' },
    { job_name: 'settle-due', run_key: leftKey, state: 'DONE' },
  ]);
});

test('the stored offset only grows, and a clock sees another process move it', async (t) => {
  const { db } = await openTestDatabase(t);
  assert.equal(await readSandboxOffsetMs(db), 0);
  const clock = await SandboxClock.open(db, () => REAL_NOW);
  assert.equal(clock.now().toISOString(), REAL_NOW.toISOString());
  assert.equal(await raiseSandboxOffsetMs(db, 5000), 5000);
  assert.equal(await raiseSandboxOffsetMs(db, 1000), 5000, 'never lowered');
  assert.equal(clock.now().toISOString(), REAL_NOW.toISOString(), 'the copy in memory until refreshed');
  await clock.refresh();
  assert.equal(clock.now().getTime(), REAL_NOW.getTime() + 5000);
  clock.hold(9000);
  await raiseSandboxOffsetMs(db, 7000);
  await clock.refresh();
  assert.equal(clock.offsetMs, 9000, 'an advance of this process holds the copy');
  clock.release(7000);
  await clock.refresh();
  assert.equal(clock.offsetMs, 7000);
  const row = await db
    .selectFrom('app_settings')
    .select('value')
    .where('key', '=', SANDBOX_OFFSET_SETTING)
    .executeTakeFirst();
  assert.equal(row?.value, 7000);
});

test('a reset puts the demo data back as a first start leaves it, with the clock at real time', async (t) => {
  const db = await pendingWorld(t);
  const fresh = await openTestDatabase(t);
  await seedDemo(fresh.db, REAL_NOW);
  const clock = await SandboxClock.open(db, () => REAL_NOW);
  const core = createMoneyCore(db, sandboxConfig, { now: clock.now });
  await advanceSandbox(
    { db, jobs: serverJobs(core, sandboxConfig), clock, soleProcess: true, label },
    { days: 5 },
  );
  // Things a reset keeps: a partner's client linked to a demo employer, and a webhook endpoint of it.
  const acme = '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001';
  await db
    .insertInto('oauth_clients')
    .values({
      client_id: 'partner-kept',
      name: 'Kept',
      is_public: true,
      redirect_uris: [],
      scopes: ['user:read'],
    })
    .execute();
  await db
    .insertInto('oauth_client_organizations')
    .values({ client_id: 'partner-kept', organization_id: acme })
    .execute();
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: '5f0c9a53-1d2e-4b7a-9c3d-0000000000e1',
      client_id: 'partner-kept',
      url: 'https://partner.example/hooks',
      description: null,
      event_types: null,
      disabled_reason: null,
      created_at: REAL_NOW,
      updated_at: REAL_NOW,
    })
    .execute();
  const keys = await db.selectFrom('signing_keys').select('kid').execute();

  const report = await resetSandbox({ db, config: sandboxConfig, clock, soleProcess: true });
  assert.equal(report.demo, 'SEEDED');
  assert.equal(await readSandboxOffsetMs(db), 0);
  assert.equal(clock.now().toISOString(), REAL_NOW.toISOString());
  const made = await db.selectFrom('transfers').select('id').where('id', 'in', MADE).execute();
  assert.deepEqual(made, [], 'the transfers made before the reset are gone');
  assert.deepEqual(
    await booksOf(db),
    await booksOf(fresh.db),
    'the books of a first start at the same instant',
  );
  const balances = async (on: Db) =>
    accountBalancesMinor(
      on,
      ['Alex', 'Bailey', 'Casey', 'Devon', 'Emery'].map((first) => demoWorker(first).balanceAccountId),
    );
  assert.deepEqual(await balances(db), await balances(fresh.db));
  assert.deepEqual(
    await db
      .selectFrom('oauth_client_organizations')
      .select(['client_id', 'organization_id'])
      .where('client_id', '=', 'partner-kept')
      .execute(),
    [{ client_id: 'partner-kept', organization_id: acme }],
  );
  assert.deepEqual(await db.selectFrom('signing_keys').select('kid').execute(), keys);
  assert.equal((await db.selectFrom('webhook_endpoints').select('id').execute()).length, 1);
  assert.equal(
    (await db.selectFrom('scheduled_runs').select('run_key').execute()).length,
    1,
    'the history only',
  );
  assert.deepEqual(await checkLedgerInvariants(db), []);
});
