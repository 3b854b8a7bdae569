import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { refreshAccessibleEarnings } from '../../src/money/earnings/accessible-refresh.ts';
import { remittanceReport } from '../../src/reports/remittance-report.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import {
  advanceBody,
  availableMinor,
  createPaidWorker,
  type PaidWorker,
  paychecksOfJob,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { operatorClient } from '../helpers/operator.ts';

/**
 * Overpayments through HTTP and the real services. FIXED_NOW is Wednesday 11 March 2026 in a biweekly period of 2–15
 * March (New York); the next runs 16–29 March. A worker earns 40 000 (30 000 net, 15 000 accessible), takes it all,
 * then the employer corrects the shift down: the paycheck closes short of its advances.
 */

const FIRST_PAYDAY = new Date('2026-03-16T12:00:00Z');
const SECOND_PAYDAY = new Date('2026-03-30T12:00:00Z');
const THIRD_PAYDAY = new Date('2026-04-13T12:00:00Z');

async function movingClockApp(t: Parameters<typeof buildTestApp>[0]) {
  const clock = { now: FIXED_NOW };
  const app = await buildTestApp(t, {}, { now: () => clock.now });
  return {
    app,
    clock,
    payroll: async (at: Date) => {
      clock.now = at;
      const report = await app.money.payroll(at);
      await app.money.outbox.dispatchDue(at);
      return report;
    },
  };
}

async function correct(app: TestApp, worker: PaidWorker, amountMinor: number, at: Date, workedOn: string) {
  return app.money.earnings.record(
    [
      {
        jobId: worker.jobId,
        externalId: `fix-${Math.random()}`,
        workedOn,
        hoursHundredths: null,
        amountMinor,
        source: 'ADJUSTMENT',
      },
    ],
    at,
    { backdated: 'RECORD' },
  );
}

async function books(app: TestApp) {
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
}

/** A worker whose first paycheck closed 7 500 short: 15 000 advanced, net pay corrected down to 7 500. */
async function overpaidWorker(t: Parameters<typeof buildTestApp>[0], policy: Record<string, unknown> = {}) {
  const world = await movingClockApp(t);
  const { app } = world;
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW, policy });
  const advance = await postTransfer(app, worker.token, advanceBody(worker, { amount: 15_000 }));
  assert.equal(advance.statusCode, 200, advance.body);
  await app.money.settle(new Date('2026-03-12T13:00:00Z'));
  // 30 000 of the 40 000 taken back: gross 10 000, withholdings 2 500, net 7 500; 15 000 was advanced.
  await correct(app, worker, -30_000, new Date('2026-03-13T12:00:00Z'), '2026-03-10');
  const [open] = await paychecksOfJob(app, worker.jobId);
  assert.equal(open!.net_earnings_minor, 7500);
  assert.equal(await availableMinor(worker), 0, 'the balance stops at zero');
  await books(app);
  await world.payroll(FIRST_PAYDAY);
  await books(app);
  return { ...world, worker };
}

function refusalOf(response: { statusCode: number; json(): { errors: { code: string; detail: string }[] } }) {
  assert.equal(response.statusCode, 400);
  return response.json().errors[0]!;
}

test('an overpayment refuses transfers until resolved, then while recovered, and is recovered at the next payday', async (t) => {
  const { app, payroll, clock, worker } = await overpaidWorker(t);
  const { db } = app.database;
  const [short] = await paychecksOfJob(app, worker.jobId);
  assert.equal(short!.status, 'DEPOSITED');
  assert.equal(short!.payout_minor, 0, 'nothing is paid out of a paycheck short of its advances');
  const listed = await worker.api.get(`/rest/people/${worker.personId}/overpayments`);
  assert.equal(listed.statusCode, 200, listed.body);
  const [overpayment] = listed.json().data;
  assert.equal(overpayment.attributes.amount_minor, 7500);
  assert.equal(overpayment.attributes.status, 'RESOLUTION_REQUIRED');
  assert.equal(overpayment.attributes.paycheck_id, short!.id);

  // A new period's earnings: money to take, but the overpayment comes first (preview too).
  clock.now = new Date('2026-03-17T12:00:00Z');
  await recordShift(app, worker.jobId, 40_000, clock.now, '2026-03-16');
  assert.equal(await availableMinor(worker), 15_000);
  for (const preview of [false, true]) {
    const refused = refusalOf(await postTransfer(app, worker.token, advanceBody(worker, { preview })));
    assert.equal(refused.code, 'OVERPAYMENT_RESOLUTION_REQUIRED');
    assert.match(refused.detail, new RegExp(overpayment.id));
    assert.match(refused.detail, /overpayment_resolutions/);
  }
  const badInstallments = await worker.api.post(`/rest/people/${worker.personId}/overpayment_resolutions`, {
    data: { type: 'overpayment_resolutions', attributes: { resolution: 'INSTALLMENTS', installments: 40 } },
  });
  assert.equal(badInstallments.statusCode, 400, badInstallments.body);
  assert.equal(badInstallments.json().errors[0].source.pointer, '/data/attributes/installments');

  const resolve = () =>
    worker.api.post(`/rest/people/${worker.personId}/overpayment_resolutions`, {
      data: {
        type: 'overpayment_resolutions',
        attributes: { resolution: 'NEXT_PAYCHECK' },
        relationships: { overpayment: { data: { type: 'overpayments', id: overpayment.id } } },
      },
    });
  const resolved = await resolve();
  assert.equal(resolved.statusCode, 200, resolved.body);
  assert.equal(resolved.json().data[0].attributes.status, 'RECOVERING');
  assert.equal(resolved.json().data[0].attributes.resolved_by, 'PERSON');
  const again = await resolve();
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(again.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  const resolving = refusalOf(await postTransfer(app, worker.token, advanceBody(worker)));
  assert.equal(resolving.code, 'OVERPAYMENT_RESOLVING');
  await books(app);

  // The next payday recovers it from that paycheck's payout: no fee, no interest, nothing from the bank.
  await payroll(SECOND_PAYDAY);
  const [, recovering] = await paychecksOfJob(app, worker.jobId);
  assert.equal(recovering!.overpayment_recovered_minor, 7500);
  assert.equal(recovering!.payout_minor, 30_000 - 7500);
  const after = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data[0];
  assert.equal(after.attributes.status, 'RECOVERED');
  assert.equal(after.attributes.recovered_minor, 7500);
  const person = await db
    .selectFrom('people')
    .select('overpayment_status')
    .where('id', '=', worker.personId)
    .executeTakeFirstOrThrow();
  assert.equal(person.overpayment_status, null);
  await books(app);
  // This server paid the worker (payday_payout PROVIDER): the employer has nothing to remit.
  await assert.rejects(
    remittanceReport(db, worker.organizationId, '2026-03-01', '2026-04-30'),
    /payday_payout/,
  );

  clock.now = new Date('2026-03-31T12:00:00Z');
  await recordShift(app, worker.jobId, 40_000, clock.now, '2026-03-30');
  const allowed = await postTransfer(app, worker.token, advanceBody(worker));
  assert.equal(allowed.statusCode, 200, allowed.body);
  await books(app);
});

test('an employer that runs payroll itself: the overpayment is recorded as ever, and its recovery is remitted', async (t) => {
  const { app, payroll, worker } = await overpaidWorker(t, {
    payday_payout: 'EMPLOYER',
    overpayment_default_resolution: 'NEXT_PAYCHECK',
  });
  const { db } = app.database;
  const [short] = await paychecksOfJob(app, worker.jobId);
  assert.equal(short!.status, 'DEPOSITED');
  assert.equal(short!.payout_minor, 0, 'the employer pays nothing: advances took more than net pay');
  const [overpayment] = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data;
  assert.equal(overpayment.attributes.amount_minor, 7500);
  assert.equal(overpayment.attributes.status, 'RECOVERING');
  await recordShift(app, worker.jobId, 40_000, new Date('2026-03-17T12:00:00Z'), '2026-03-16');
  await payroll(SECOND_PAYDAY);
  const [, recovering] = await paychecksOfJob(app, worker.jobId);
  assert.equal(recovering!.status, 'DEPOSITED');
  assert.equal(recovering!.overpayment_recovered_minor, 7500);
  assert.equal(recovering!.payout_minor, 30_000 - 7500, 'what the employer pays the worker itself');
  await books(app);
  // The employer deducts, from each paycheck, advances up to its net pay and what it repays, and remits them: the
  // ledger's remittance (provider funding) is the report's deduction.
  const remittance = await remittanceReport(db, worker.organizationId, '2026-03-01', '2026-04-30');
  const deductions = new Map(remittance.lines.map((line) => [line.paycheck_id, line.deductions]));
  assert.deepEqual(deductions.get(short!.id), {
    advances_minor: short!.net_earnings_minor,
    overpayment_recovered_minor: 0,
  });
  assert.deepEqual(deductions.get(recovering!.id), { advances_minor: 0, overpayment_recovered_minor: 7500 });
  const { rows } = await sql<{ paycheck_id: string; amount: string }>`select p.paycheck_id,
      sum(e.amount_minor) as amount
    from ledger_postings p join ledger_entries e on e.posting_id = p.id
      join ledger_accounts a on a.id = e.ledger_account_id
    where p.kind = 'EMPLOYER_PAYDAY' and a.kind = 'PROVIDER_FUNDING' group by p.paycheck_id`.execute(db);
  const remitted = new Map(rows.map((row) => [row.paycheck_id, Number(row.amount)]));
  for (const line of remittance.lines) assert.equal(remitted.get(line.paycheck_id), line.deduction_minor);
  assert.equal(remittance.lines.length, 2);
});

test('installments spread the recovery over paychecks, never more than a payout has', async (t) => {
  const { app, payroll, worker } = await overpaidWorker(t, {
    overpayment_default_resolution: 'INSTALLMENTS',
    overpayment_installments: 2,
  });
  const [overpayment] = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data;
  assert.equal(overpayment.attributes.status, 'RECOVERING', "the employer's policy resolved it");
  assert.equal(overpayment.attributes.resolved_by, 'EMPLOYER_POLICY');
  // The next period earns only 2 000 (1 500 net): the first installment (3 750) is capped by that payout.
  await recordShift(app, worker.jobId, 2000, new Date('2026-03-17T12:00:00Z'), '2026-03-16');
  await payroll(SECOND_PAYDAY);
  await recordShift(app, worker.jobId, 40_000, new Date('2026-03-31T12:00:00Z'), '2026-03-30');
  await payroll(THIRD_PAYDAY);
  const paychecks = await paychecksOfJob(app, worker.jobId);
  assert.deepEqual(
    paychecks.map((p) => [p.overpayment_recovered_minor, p.payout_minor]),
    [
      [0, 0],
      [1500, 0],
      [6000, 30_000 - 6000],
    ],
  );
  const after = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data[0];
  assert.equal(after.attributes.status, 'RECOVERED');
  await books(app);
});

test('a policy of INSTALLMENTS over 1 paycheck recovers all from the next paycheck, recorded as NEXT_PAYCHECK', async (t) => {
  const { app, payroll, worker } = await overpaidWorker(t, {
    overpayment_default_resolution: 'INSTALLMENTS',
    overpayment_installments: 1,
  });
  const [overpayment] = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data;
  assert.deepEqual(
    [overpayment.attributes.status, overpayment.attributes.resolved_by],
    ['RECOVERING', 'EMPLOYER_POLICY'],
  );
  // What `ewa overpayments resolve --next-paycheck` records; INSTALLMENTS takes 2 to 12 there.
  assert.deepEqual(
    [
      overpayment.attributes.resolution,
      overpayment.attributes.installments,
      overpayment.attributes.installments_left,
    ],
    ['NEXT_PAYCHECK', 1, 1],
  );
  await recordShift(app, worker.jobId, 40_000, new Date('2026-03-17T12:00:00Z'), '2026-03-16');
  await payroll(SECOND_PAYDAY);
  const [, next] = await paychecksOfJob(app, worker.jobId);
  assert.deepEqual([next!.overpayment_recovered_minor, next!.payout_minor], [7500, 30_000 - 7500]);
  const after = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data[0];
  assert.equal(after.attributes.status, 'RECOVERED');
  await books(app);
});

test('without a resolution, the overpayment is written off after the policy’s periods and the person is DELINQUENT', async (t) => {
  const { app, payroll, worker } = await overpaidWorker(t, {
    overpayment_write_off_after_periods: 1,
    overpayment_write_off_delinquent: true,
  });
  await recordShift(app, worker.jobId, 40_000, new Date('2026-03-17T12:00:00Z'), '2026-03-16');
  await payroll(SECOND_PAYDAY);
  const [overpayment] = (await worker.api.get(`/rest/people/${worker.personId}/overpayments`)).json().data;
  assert.equal(overpayment.attributes.status, 'WRITTEN_OFF');
  assert.equal(overpayment.attributes.written_off_minor, 7500);
  const [, paid] = await paychecksOfJob(app, worker.jobId);
  assert.equal(paid!.payout_minor, 30_000, 'nothing was recovered without a resolution');
  const person = (await worker.api.get(`/rest/people/${worker.personId}`)).json().data.attributes;
  assert.equal(person.disallow_reason, 'DELINQUENT');
  await recordShift(app, worker.jobId, 40_000, new Date('2026-03-31T12:00:00Z'), '2026-03-30');
  const refused = refusalOf(await postTransfer(app, worker.token, advanceBody(worker)));
  assert.equal(refused.code, 'TRANSFERS_DISABLED');
  assert.match(refused.detail, /DELINQUENT/);
  await books(app);
});

test('a correction on an open paycheck withdraws only what was not taken: the balance never goes below zero', async (t) => {
  const { app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const advance = await postTransfer(app, worker.token, advanceBody(worker, { amount: 5000 }));
  assert.equal(advance.statusCode, 200, advance.body);
  // Net 30 000 → 15 000 (gross 20 000): the share falls to 7 500; 5 000 was taken, so 2 500 is left.
  await correct(app, worker, -20_000, new Date('2026-03-12T12:00:00Z'), '2026-03-10');
  assert.equal(await availableMinor(worker), 2500);
  const balances = await accountBalancesMinor(app.database.db, [worker.balanceAccountId]);
  assert.equal(balances.get(worker.balanceAccountId), 2500);
  await books(app);
});

test('/admin/overpayments: list with filters and pages, show, resolve, write off; bad input is a 4xx naming it', async (t) => {
  const { app, worker } = await overpaidWorker(t, { overpayment_write_off_delinquent: true });
  const { call } = await operatorClient(app);
  const listed = await call('GET', `/admin/overpayments?filter[person]=${worker.personId}&page[size]=1`);
  assert.equal(listed.statusCode, 200, listed.body);
  const [overpayment] = listed.json().data;
  assert.equal(overpayment.attributes.status, 'RESOLUTION_REQUIRED');
  assert.equal(listed.json().links, undefined, 'one page');
  for (const [url, parameter] of [
    ['/admin/overpayments?filter[status]=OPEN', 'filter[status]'],
    ['/admin/overpayments?filter[person]=nope', 'filter[person]'],
    ['/admin/overpayments?page[size]=0', 'page[size]'],
  ] as const) {
    const refused = await call('GET', url);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().errors[0].source.parameter, parameter);
  }
  assert.equal((await call('GET', '/admin/overpayments/nope')).statusCode, 404);
  const shown = await call('GET', `/admin/overpayments/${overpayment.id}`);
  assert.equal(shown.json().data.attributes.amount_minor, 7500);
  const badResolution = await call('POST', `/admin/overpayments/${overpayment.id}/resolution`, {
    data: { type: 'overpayment_resolutions', attributes: { resolution: 'INSTALLMENTS' } },
  });
  assert.equal(badResolution.statusCode, 400, badResolution.body);
  assert.equal(badResolution.json().errors[0].source.pointer, '/data/attributes/installments');
  const resolved = await call('POST', `/admin/overpayments/${overpayment.id}/resolution`, {
    data: { type: 'overpayment_resolutions', attributes: { resolution: 'INSTALLMENTS', installments: 3 } },
  });
  assert.equal(resolved.statusCode, 200, resolved.body);
  assert.equal(resolved.json().data.attributes.resolved_by, 'OPERATOR');
  const written = await call('POST', `/admin/overpayments/${overpayment.id}/write_off`);
  assert.equal(written.statusCode, 200, written.body);
  assert.equal(written.json().data.attributes.status, 'WRITTEN_OFF');
  const again = await call('POST', `/admin/overpayments/${overpayment.id}/write_off`);
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(again.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  const person = (await worker.api.get(`/rest/people/${worker.personId}`)).json().data.attributes;
  assert.equal(person.disallow_reason, 'DELINQUENT');
  await books(app);
});

test('a share a correction could not withdraw, held by an advance that failed since, leaves the balance at the next refresh', async (t) => {
  const { app } = await movingClockApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  // 1313 is a sandbox amount that the rail fails.
  const advance = await postTransfer(app, worker.token, advanceBody(worker, { amount: 1313 }));
  assert.equal(advance.statusCode, 200, advance.body);
  await correct(app, worker, -40_000, new Date('2026-03-11T16:00:00Z'), '2026-03-10');
  assert.equal(await availableMinor(worker), 0, 'all but what the advance holds went back');
  await app.money.settle(new Date('2026-03-12T13:00:00Z'));
  assert.equal(await availableMinor(worker), 1313, 'the failed advance gave its amount back');
  await refreshAccessibleEarnings(app.database.db, new Date('2026-03-12T14:00:00Z'));
  assert.equal(await availableMinor(worker), 0, 'net pay is zero: nothing is accessible');
  await books(app);
});
