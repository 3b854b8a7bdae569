import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { createSandboxRail } from '../../src/rails/sandbox-rail.ts';
import { buildTestApp, FIXED_NOW, type TestApp, type TestAppOptions } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';
import { createOrganization, createWorker, restClient, workerToken } from '../helpers/factories.ts';
import {
  addBankAccount,
  addCardAccount,
  advanceBody,
  availableMinor,
  createPaidWorker,
  type PaidWorker,
  paychecksOfJob,
  payToCardOnly,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Payday through the real services: earnings, advances and their settlement, then payroll pays each closed
 * paycheck's remainder (net − total_debited) to the job's default account and empties that period's share of the
 * earnings balance. The pay period of FIXED_NOW (Wednesday 11 March 2026) runs 2–15 March (New York); it ends at
 * 2026-03-16T04:00Z and its pay is expected on Friday 20 March, 00:00 New York (04:00Z).
 */

const PERIOD_ENDED = new Date('2026-03-16T12:00:00Z');
const DEPOSIT_EXPECTED = new Date('2026-03-20T04:00:00Z');

async function movingClockApp(
  t: Parameters<typeof buildTestApp>[0],
  start = FIXED_NOW,
  rail?: TestAppOptions['rail'],
) {
  const clock = { now: start };
  const app = await buildTestApp(t, {}, { now: () => clock.now, ...(rail ? { rail } : {}) });
  return {
    app,
    clock,
    settle: (at: Date) => {
      clock.now = at;
      return app.money.settle(at);
    },
    /** Payday, then the dispatcher's round that sends its payouts to the rail. */
    payroll: async (at: Date) => {
      clock.now = at;
      const report = await app.money.payroll(at);
      await app.money.outbox.dispatchDue(at);
      return report;
    },
  };
}

/** Debits and credits of one system ledger account of the organization, by posting kind. */
async function systemFlows(app: TestApp, organizationId: string, kind: string) {
  const { rows } = await sql<{
    posting_kind: string;
    debits: string;
    credits: string;
  }>`select p.kind as posting_kind,
      sum(case when e.direction = 'DEBIT' then e.amount_minor else 0 end) as debits,
      sum(case when e.direction = 'CREDIT' then e.amount_minor else 0 end) as credits
    from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
      join ledger_postings p on p.id = e.posting_id
    where a.organization_id = ${organizationId}::uuid and a.kind = ${kind}
      and a.account_id is null and a.paycheck_id is null
    group by p.kind`.execute(app.database.db);
  return Object.fromEntries(
    rows.map((row) => [row.posting_kind, { debits: Number(row.debits), credits: Number(row.credits) }]),
  );
}

async function paydayPostings(app: TestApp, paycheckId: string) {
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from ledger_postings
    where paycheck_id = ${paycheckId}::uuid and kind = 'PAYDAY'`.execute(app.database.db);
  return Number(rows[0]?.n ?? 0);
}

async function paycheckOnWire(worker: PaidWorker, id: string) {
  const response = await worker.api.get(`/rest/paychecks/${id}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data.attributes as { status: string; total_debited: number; net_earnings: number };
}

test('payday: the remainder goes to the bank, the balance of the period empties, and it all adds up to net pay', async (t) => {
  const { app, settle, payroll } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  // 40 000 gross: 30 000 net, 15 000 accessible. Two advances: 6 000 to the bank (no fee), 2 000 to the card at
  // once (fee 299, 1 701 delivered).
  const toBank = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }));
  const toCard = await postTransfer(
    app,
    worker.token,
    advanceBody({ ...worker, depositoryId: card }, { amount: 2000, schedule: 'WITHIN_THIRTY_MINUTES' }),
  );
  assert.equal(toBank.statusCode, 200, toBank.body);
  assert.equal(toCard.statusCode, 200, toCard.body);
  await settle(new Date('2026-03-12T13:00:00Z'));
  for (const posted of [toBank, toCard])
    assert.equal(
      (await worker.api.get(`/rest/transfers/${posted.json().data.id}`)).json().data.attributes.status,
      'SETTLED',
    );
  const [paycheck] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paycheck!.status, 'ESTIMATED');
  assert.equal(paycheck!.net_earnings_minor, 30_000);
  assert.equal(paycheck!.total_debited_minor, 8000);
  assert.equal(await availableMinor(worker), 7000);

  // Monday 16 March: a shift of the new period, then payroll for the old one.
  await recordShift(app, worker.jobId, 8000, new Date('2026-03-16T10:00:00Z'), '2026-03-16');
  assert.equal(await availableMinor(worker), 10_000);
  await payroll(PERIOD_ENDED);
  const [paid, next] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.id, paycheck!.id);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.payout_minor, 30_000 - 8000);
  assert.equal(paid!.payout_account_id, worker.depositoryId);
  assert.equal(paid!.payout_held_reason, null);
  assert.deepEqual(paid!.payout_settle_after, DEPOSIT_EXPECTED);
  assert.equal((await paycheckOnWire(worker, paid!.id)).status, 'IN_TRANSIT');
  // What was left of the closed period (7 000) left the balance; the new period's 3 000 stays.
  assert.equal(next!.status, 'ESTIMATED');
  assert.equal(await availableMinor(worker), 3000);
  assert.equal(await paydayPostings(app, paid!.id), 1);

  // A second run pays nothing again.
  await payroll(new Date(PERIOD_ENDED.getTime() + 3_600_000));
  assert.deepEqual((await paychecksOfJob(app, worker.jobId))[0], paid);
  assert.equal(await paydayPostings(app, paid!.id), 1);
  assert.equal(await availableMinor(worker), 3000);

  // Delivered on the expected day, not a second before.
  await settle(new Date(DEPOSIT_EXPECTED.getTime() - 1000));
  assert.equal((await paychecksOfJob(app, worker.jobId))[0]!.status, 'IN_TRANSIT');
  await settle(DEPOSIT_EXPECTED);
  assert.equal((await paychecksOfJob(app, worker.jobId))[0]!.status, 'DEPOSITED');
  assert.equal((await paycheckOnWire(worker, paid!.id)).status, 'DEPOSITED');

  // What reached the worker, read from the ledger: the debits of the external accounts when the rail delivered
  // (advances settled: 6 000 + 1 701; paycheck deposited: 22 000). With the fee kept (299) that is the net pay.
  const bank = await systemFlows(app, worker.organizationId, 'EXTERNAL_BANK');
  const cardFlows = await systemFlows(app, worker.organizationId, 'EXTERNAL_CARD');
  const fees = await systemFlows(app, worker.organizationId, 'FEE_REVENUE');
  assert.equal(bank.ADVANCE_SETTLED?.debits, 6000);
  assert.equal(cardFlows.ADVANCE_SETTLED?.debits, 1701);
  assert.equal(bank.PAYCHECK_DEPOSITED?.debits, 22_000);
  assert.equal(fees.ADVANCE_SUBMITTED?.credits, 299);
  const delivered = 6000 + 1701 + 22_000;
  assert.equal(delivered + 299, paid!.net_earnings_minor);
  // Nothing is left in flight: every credit of an external account was matched by a delivery.
  for (const flows of [bank, cardFlows]) {
    const total = Object.values(flows).reduce((sum, flow) => sum + flow.credits - flow.debits, 0);
    assert.equal(total, 0);
  }
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a worker with no default account is held, and paid once a default is set', async (t) => {
  const { app, settle, payroll } = await movingClockApp(t);
  const organizationId = await createOrganization(app);
  const job = await createWorker(app, organizationId);
  await recordShift(app, job.jobId, 40_000, FIXED_NOW);
  const token = await workerToken(app, job.personId);
  const worker: PaidWorker = {
    ...job,
    organizationId,
    token,
    api: restClient(app, token),
    depositoryId: '',
    balanceAccountId: job.balanceAccountId as string,
  };
  await payroll(PERIOD_ENDED);
  const [held] = await paychecksOfJob(app, job.jobId);
  assert.equal(held!.status, 'PROCESSING');
  assert.equal(held!.payout_held_reason, 'NO_DEFAULT_ACCOUNT');
  assert.equal(held!.payout_minor, null);
  assert.equal(await availableMinor(worker), 15_000);
  assert.equal(await paydayPostings(app, held!.id), 0);
  // Still held on the next run.
  await payroll(new Date(PERIOD_ENDED.getTime() + 60_000));
  assert.equal((await paychecksOfJob(app, job.jobId))[0]!.payout_held_reason, 'NO_DEFAULT_ACCOUNT');

  const bank = await addBankAccount(worker, '000246813579');
  const patched = await worker.api.patch(`/rest/jobs/${job.jobId}`, {
    data: {
      type: 'jobs',
      id: job.jobId,
      relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: bank } } },
    },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  await payroll(new Date(PERIOD_ENDED.getTime() + 3_600_000));
  const [paid] = await paychecksOfJob(app, job.jobId);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.payout_held_reason, null);
  assert.equal(paid!.payout_minor, 30_000);
  assert.equal(paid!.payout_account_id, bank);
  assert.equal(await availableMinor(worker), 0);
  await settle(DEPOSIT_EXPECTED);
  assert.equal((await paychecksOfJob(app, job.jobId))[0]!.status, 'DEPOSITED');
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('with a default card and no default depository, the pay goes to the card', async (t) => {
  const { app, settle, payroll } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await payToCardOnly(app, worker, FIXED_NOW);
  await payroll(PERIOD_ENDED);
  const [paid] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.payout_account_id, card);
  await settle(DEPOSIT_EXPECTED);
  const cardFlows = await systemFlows(app, worker.organizationId, 'EXTERNAL_CARD');
  assert.deepEqual(cardFlows.PAYCHECK_DEPOSITED, { debits: 30_000, credits: 0 });
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('with no rail for cards (production), a default card alone is no default: the pay is held', async (t) => {
  const bankOnly = { ...createSandboxRail(), destinations: ['DEPOSITORY'] as const };
  const { app, payroll } = await movingClockApp(t, FIXED_NOW, bankOnly);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const _card = await payToCardOnly(app, worker, FIXED_NOW);
  await payroll(PERIOD_ENDED);
  const [held] = await paychecksOfJob(app, worker.jobId);
  assert.equal(held!.status, 'PROCESSING');
  assert.equal(held!.payout_held_reason, 'NO_DEFAULT_ACCOUNT');
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from outbox`.execute(
    app.database.db,
  );
  assert.equal(rows[0]!.n, 0, 'nothing is sent to a rail that would refuse it');
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a paycheck that funds a PENDING advance waits for it (PENDING_ADVANCES)', async (t) => {
  // Sunday 15 March, the last day of the period: the advance settles on Monday 09:00 New York, after the period.
  const sunday = new Date('2026-03-15T16:00:00Z');
  const { app, settle, payroll } = await movingClockApp(t, sunday);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: sunday });
  const posted = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }));
  assert.equal(posted.statusCode, 200, posted.body);
  const mondayEarly = new Date('2026-03-16T05:00:00Z');
  await payroll(mondayEarly);
  const [held] = await paychecksOfJob(app, worker.jobId);
  assert.equal(held!.status, 'PROCESSING');
  assert.equal(held!.payout_held_reason, 'PENDING_ADVANCES');
  assert.equal(await availableMinor(worker), 9000);
  await settle(new Date('2026-03-16T13:00:00Z'));
  assert.equal(
    (await worker.api.get(`/rest/transfers/${posted.json().data.id}`)).json().data.attributes.status,
    'SETTLED',
  );
  await payroll(new Date('2026-03-16T13:00:00Z'));
  const [paid] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.payout_held_reason, null);
  assert.equal(paid!.payout_minor, 30_000 - 6000);
  assert.equal(await availableMinor(worker), 0);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a paycheck whose advance fails after the period is paid in full once the failure is booked', async (t) => {
  const sunday = new Date('2026-03-15T16:00:00Z');
  const { app, settle, payroll } = await movingClockApp(t, sunday);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: sunday });
  // 1313 is a sandbox amount that the rail fails.
  const posted = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1313 }));
  assert.equal(posted.statusCode, 200, posted.body);
  await payroll(new Date('2026-03-16T05:00:00Z'));
  assert.equal((await paychecksOfJob(app, worker.jobId))[0]!.payout_held_reason, 'PENDING_ADVANCES');
  await settle(new Date('2026-03-16T13:00:00Z'));
  assert.equal(
    (await worker.api.get(`/rest/transfers/${posted.json().data.id}`)).json().data.attributes.status,
    'FAILED',
  );
  assert.equal(await availableMinor(worker), 15_000);
  await payroll(new Date('2026-03-16T13:00:00Z'));
  const [paid] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.total_debited_minor, 0);
  assert.equal(paid!.payout_minor, 30_000);
  assert.equal(await availableMinor(worker), 0);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('an advance taken after the period closed, before payday, is funded by the closed paycheck', async (t) => {
  const { app, settle, payroll } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  // The worker has no default account on payday: the closed paycheck waits, PROCESSING, its share still there.
  await app.database.db
    .updateTable('jobs')
    .set({ direct_deposit_default_depository_id: null })
    .where('id', '=', worker.jobId)
    .execute();
  await payroll(PERIOD_ENDED);
  assert.equal((await paychecksOfJob(app, worker.jobId))[0]!.payout_held_reason, 'NO_DEFAULT_ACCOUNT');
  await app.database.db
    .updateTable('jobs')
    .set({ direct_deposit_default_depository_id: worker.depositoryId })
    .where('id', '=', worker.jobId)
    .execute();
  const posted = await postTransfer(app, worker.token, advanceBody(worker, { amount: 5000 }));
  assert.equal(posted.statusCode, 200, posted.body);
  await settle(new Date('2026-03-17T13:00:00Z'));
  await payroll(new Date('2026-03-17T13:00:00Z'));
  const [paid] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.status, 'IN_TRANSIT');
  assert.equal(paid!.payout_minor, 25_000);
  assert.equal(await availableMinor(worker), 0);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test("payroll closes a worker's ended period only under that person's lock, taken first as advances do", {
  skip:
    !onPostgres &&
    'the embedded database runs one transaction at a time, so nothing can hold a lock meanwhile',
}, async (t) => {
  const { app, payroll } = await movingClockApp(t);
  const worker = await createPaidWorker(app);
  await recordShift(app, worker.jobId, 20_000, FIXED_NOW);
  const { db } = app.database;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => {
    locked = resolve;
  });
  // Another transaction (an advance, say) holds the person's row.
  let holderPid = 0;
  const holder = db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid from people
      where id = ${worker.personId}::uuid for update`.execute(tx);
    holderPid = rows[0]!.pid;
    locked();
    await released;
  });
  await lockTaken;
  const run = payroll(PERIOD_ENDED);
  try {
    const waitingOnLock = async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::integer as n from pg_stat_activity
        where ${holderPid}::integer = any(pg_blocking_pids(pid))`.execute(db);
      return Number(rows[0]!.n) > 0;
    };
    await eventually(waitingOnLock, 10_000);
    assert.equal(await waitingOnLock(), true, 'payroll waits for the person before it closes the period');
    assert.deepEqual(
      (await paychecksOfJob(app, worker.jobId)).map((paycheck) => paycheck.status),
      ['ESTIMATED'],
      'not closed while the person is locked',
    );
  } finally {
    release();
    await holder;
  }
  const report = await run;
  assert.equal(report.closed, 1);
  assert.equal(report.paid, 1);
  assert.deepEqual(
    (await paychecksOfJob(app, worker.jobId)).map((paycheck) => paycheck.status),
    ['IN_TRANSIT'],
  );
  assert.deepEqual(await checkLedgerInvariants(db), []);
});
