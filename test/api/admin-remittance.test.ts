import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REMITTANCE_DEDUCTIONS } from '../../src/reports/remittance-report.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { advanceBody, createPaidWorker, paychecksOfJob, postTransfer } from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';

/**
 * The employer's remittance: per paycheck paid on a day, what its payroll deducts (the advances it funded, by the
 * paycheck's total_debited) and how many advances; failed advances deduct nothing. CSV cells that a spreadsheet
 * would misread are escaped.
 */

test('the remittance of a payday: each paycheck with the advances it funded, failed ones left out', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const get = (url: string, accept?: string) => call('GET', url, undefined, accept);
  const robin = await createPaidWorker(app, {
    earnedMinor: 40_000,
    now: FIXED_NOW,
    policy: { payday_payout: 'EMPLOYER' },
  });
  const sam = await createPaidWorker(app, {
    organizationId: robin.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  const idle = await createPaidWorker(app, {
    organizationId: robin.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  await app.database.db
    .updateTable('jobs')
    .set({ external_employee_id: 'E-1', first_name: '=SUM(A1)', last_name: 'Lee, "Jr"' })
    .where('id', '=', robin.jobId)
    .execute();
  // The report orders by employee id; sam's would otherwise be random and sort before E-1 one time in sixteen.
  await app.database.db
    .updateTable('jobs')
    .set({ external_employee_id: 'E-2' })
    .where('id', '=', sam.jobId)
    .execute();
  for (const amount of [1000, 2500, 1313])
    assert.equal((await postTransfer(app, robin.token, advanceBody(robin, { amount }))).statusCode, 200);
  assert.equal((await postTransfer(app, sam.token, advanceBody(sam, { amount: 4000 }))).statusCode, 200);
  // The rail fails 1,313 on the next business day: it gives its share of the paycheck back.
  clock.now = new Date('2026-03-12T14:00:00Z');
  await app.money.settle(clock.now);

  // FIXED_NOW's period is March 2 to 15 (biweekly from January 5), paid five days after: March 20.
  const [paycheck] = await paychecksOfJob(app, robin.jobId);
  const answer = await get(
    `/admin/reports/remittance?filter[organization]=${robin.organizationId}&filter[pay_date]=2026-03-20`,
  );
  assert.equal(answer.statusCode, 200, answer.body);
  const report = answer.json().data.attributes;
  assert.equal(report.time_zone, 'America/New_York');
  assert.deepEqual(report.deductions, ['advances_minor', 'overpayment_recovered_minor']);
  assert.deepEqual(
    report.lines.map((line: Record<string, unknown>) => [
      line.person_id,
      line.deduction_minor,
      line.advances,
    ]),
    [
      [robin.personId, 3500, 2],
      [sam.personId, 4000, 1],
    ],
  );
  const line = report.lines[0];
  assert.equal(line.paycheck_id, paycheck!.id);
  assert.equal(line.deduction_minor, paycheck!.total_debited_minor);
  assert.deepEqual(line.deductions, { advances_minor: 3500, overpayment_recovered_minor: 0 });
  assert.deepEqual(
    [line.period_start, line.period_end, line.pay_date, line.currency, line.paycheck_status],
    ['2026-03-02', '2026-03-15', '2026-03-20', 'USD', 'ESTIMATED'],
  );
  assert.equal(line.job_id, robin.jobId);
  assert.equal(line.external_employee_id, 'E-1');
  assert.deepEqual(report.totals, [{ currency: 'USD', deduction_minor: 7500, paychecks: 2 }]);
  assert.ok(!report.lines.some((l: { person_id: string }) => l.person_id === idle.personId));

  // Another payday holds none of them; a range that covers it holds both.
  const other = await get(
    `/admin/reports/remittance?filter[organization]=${robin.organizationId}&filter[pay_date]=2026-03-19`,
  );
  assert.deepEqual(other.json().data.attributes.lines, []);
  const range = await get(
    `/admin/reports/remittance?filter[organization]=${robin.organizationId}&filter[from]=2026-03-01&filter[to]=2026-03-31`,
  );
  assert.equal(range.json().data.attributes.lines.length, 2);

  const csv = await get(
    `/admin/reports/remittance.csv?filter[organization]=${robin.organizationId}&filter[pay_date]=2026-03-20`,
    'text/csv',
  );
  assert.equal(csv.statusCode, 200, csv.body);
  assert.match(String(csv.headers['content-type']), /^text\/csv/);
  const lines = csv.body.split('\r\n');
  assert.equal(lines.length, 4, csv.body);
  assert.equal(lines[3], '');
  const header = lines[0]!.split(',');
  assert.deepEqual(header.slice(-(REMITTANCE_DEDUCTIONS.length + 2)), [
    ...REMITTANCE_DEDUCTIONS.map((d) => d.name),
    'deduction_minor',
    'advances',
  ]);
  // A formula stays text (a leading apostrophe); a comma and quotes are quoted, quotes doubled.
  assert.ok(
    lines[1]!.includes(`,'=SUM(A1),"Lee, ""Jr""",${paycheck!.id},ESTIMATED,USD,3500,0,3500,2`),
    lines[1],
  );
});
