import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { refreshAccessibleEarnings } from '../../src/money/earnings/accessible-refresh.ts';
import { accrueSalaries } from '../../src/money/earnings/salary-accrual.ts';
import { buildTestApp, FIXED_NOW } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { recordShift } from '../helpers/money.ts';

test('salaried jobs accrue one working day of pay per weekday of the open period, once', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const { db } = app.database;
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  await db
    .updateTable('jobs')
    .set({ wage_frequency: 'WEEKLY', wage_rate_minor: 100_000 })
    .where('id', '=', worker.jobId)
    .execute();
  // 2026-03-11 is a Wednesday in the period that began Monday 2026-03-02: seven weekdays have ended.
  const first = await accrueSalaries(db, app.money.earnings, FIXED_NOW);
  assert.equal(first.days, 7);
  const earnings = await db.selectFrom('earnings').selectAll().where('job_id', '=', worker.jobId).execute();
  assert.equal(earnings.length, 7);
  assert.ok(earnings.every((row) => row.amount_minor === 20_000 && row.source === 'SALARY'));
  // Gross 140,000; withholdings 35,000; net 105,000; half of it accessible.
  const balances = await accountBalancesMinor(db, [worker.balanceAccountId as string]);
  assert.equal(balances.get(worker.balanceAccountId as string), 52_500);
  const again = await accrueSalaries(db, app.money.earnings, FIXED_NOW);
  assert.equal(again.days, 0);
  const nextDay = await accrueSalaries(db, app.money.earnings, new Date('2026-03-12T15:30:00Z'));
  assert.equal(nextDay.days, 1, 'Wednesday 11 March is accrued on Thursday');
  assert.deepEqual(await checkLedgerInvariants(db), []);
});

test('a higher access rate makes more of an open paycheck accessible, once', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const { db } = app.database;
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  await recordShift(app, worker.jobId, 40_000, FIXED_NOW);
  const balanceOf = async () =>
    (await accountBalancesMinor(db, [worker.balanceAccountId as string])).get(
      worker.balanceAccountId as string,
    );
  assert.equal(await balanceOf(), 15_000);
  assert.equal(await refreshAccessibleEarnings(db, FIXED_NOW), 0);
  await db
    .updateTable('organization_policies')
    .set({ access_rate_bp: 8000 })
    .where('organization_id', '=', organizationId)
    .execute();
  assert.equal(await refreshAccessibleEarnings(db, FIXED_NOW), 9_000);
  assert.equal(await balanceOf(), 24_000);
  assert.equal(await refreshAccessibleEarnings(db, FIXED_NOW), 0);
  assert.deepEqual(await checkLedgerInvariants(db), []);
});

test('a higher withholding estimate never lowers an open paycheck: the new earnings carry it until the gross catches up', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const { db } = app.database;
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  await recordShift(app, worker.jobId, 100_000, FIXED_NOW);
  const paycheck = () =>
    db
      .selectFrom('paychecks')
      .select(['gross_earnings_minor', 'employer_withholdings_minor', 'net_earnings_minor'])
      .where('job_id', '=', worker.jobId)
      .executeTakeFirstOrThrow();
  assert.deepEqual(await paycheck(), {
    gross_earnings_minor: 100_000,
    employer_withholdings_minor: 25_000,
    net_earnings_minor: 75_000,
  });
  await db
    .updateTable('organization_policies')
    .set({ withholding_estimate_bp: 3000 })
    .where('organization_id', '=', organizationId)
    .execute();
  // At 30 % the whole 100,100 would leave a net of 70,070, below the 75,000 posted: the 100 is all withheld.
  await recordShift(app, worker.jobId, 100, FIXED_NOW);
  assert.deepEqual(await paycheck(), {
    gross_earnings_minor: 100_100,
    employer_withholdings_minor: 25_100,
    net_earnings_minor: 75_000,
  });
  // Once the gross has caught up with the rate, the paycheck is withheld at 30 % of all of it.
  await recordShift(app, worker.jobId, 50_000, FIXED_NOW);
  assert.deepEqual(await paycheck(), {
    gross_earnings_minor: 150_100,
    employer_withholdings_minor: 45_030,
    net_earnings_minor: 105_070,
  });
  assert.deepEqual(await checkLedgerInvariants(db), []);
});

test('the last day of a pay period is accrued on the first day of the next one, into its own period', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const { db } = app.database;
  const organizationId = await createOrganization(app);
  // Weekly periods from Wednesday to Tuesday: the period of Wednesday 4 March ends on Tuesday 10 March, a weekday.
  await db
    .updateTable('organization_policies')
    .set({ pay_frequency: 'WEEKLY', pay_calendar_anchor: '2026-03-04' })
    .where('organization_id', '=', organizationId)
    .execute();
  const worker = await createWorker(app, organizationId);
  await db
    .updateTable('jobs')
    .set({ wage_frequency: 'WEEKLY', wage_rate_minor: 100_000 })
    .where('id', '=', worker.jobId)
    .execute();
  const onTuesday = await accrueSalaries(db, app.money.earnings, new Date('2026-03-10T15:30:00Z'));
  assert.equal(onTuesday.days, 4, 'Wednesday 4 to Monday 9 March');
  const onWednesday = await accrueSalaries(db, app.money.earnings, FIXED_NOW);
  assert.equal(onWednesday.days, 1, 'Tuesday 10 March, the last day of the period');
  const periods = await db
    .selectFrom('earnings')
    .innerJoin('paychecks', 'paychecks.id', 'earnings.paycheck_id')
    .select(['earnings.worked_on', 'paychecks.pay_period_starts_at'])
    .where('earnings.job_id', '=', worker.jobId)
    .execute();
  assert.equal(periods.length, 5);
  assert.equal(
    new Set(periods.map((row) => String(row.pay_period_starts_at))).size,
    1,
    'all in the period of 4 March',
  );
  assert.deepEqual(await checkLedgerInvariants(db), []);
});
