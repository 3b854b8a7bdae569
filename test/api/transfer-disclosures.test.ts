import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readTransferDisclosure } from '../../src/disclosures/transfer-disclosure-store.ts';
import { localDateOf } from '../../src/domain/calendar.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import { advanceBody, createPaidWorker, type PaidWorker, postTransfer } from '../helpers/money.ts';

/**
 * What was disclosed for each advance (transfer_disclosures), written in the advance's transaction: the figures of
 * its answer, the payday of the paycheck that funds it, the accepted version and Utah's acknowledgement.
 */

async function workerIn(app: TestApp, state: string): Promise<PaidWorker> {
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: state })
    .where('id', '=', worker.personId)
    .execute();
  await acceptDisclosures(worker);
  return worker;
}

async function advanced(
  app: TestApp,
  worker: PaidWorker,
  attributes: Record<string, unknown>,
  meta?: unknown,
) {
  const body = advanceBody(worker, attributes) as { data: Record<string, unknown> };
  if (meta !== undefined) body.data.meta = meta;
  const response = await postTransfer(
    app,
    worker.token,
    body,
    crypto.randomUUID(),
    '?include=estimated_funding_sources',
  );
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

function storedFor(app: TestApp, transferId: string) {
  return readTransferDisclosure(app.database.db, transferId);
}

test("the stored disclosure is the answer's amount and fee, and the funding paycheck's payday", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'CT');
  const answer = await advanced(app, worker, { amount: 4000, schedule: 'WITHIN_THIRTY_MINUTES' }).catch(
    async () => advanced(app, worker, { amount: 4000 }),
  );
  const { id, attributes } = answer.data;
  const stored = await storedFor(app, id);
  assert.ok(stored, 'an advance stores what was disclosed');
  assert.equal(stored.amount, attributes.amount);
  assert.equal(stored.fee, attributes.fee);
  assert.equal(stored.amount_received, attributes.amount - attributes.fee);
  assert.equal(stored.schedule, attributes.schedule);
  assert.equal(stored.destination_account_id, worker.depositoryId);
  const source = await app.database.db
    .selectFrom('funding_sources')
    .innerJoin('paychecks', 'paychecks.id', 'funding_sources.paycheck_id')
    .select('paychecks.deposit_expected_at')
    .where('funding_sources.transfer_id', '=', id)
    .orderBy('paychecks.pay_period_starts_at')
    .executeTakeFirstOrThrow();
  const payday = localDateOf(new Date(source.deposit_expected_at), 'America/New_York');
  assert.equal(stored.debit_on, payday);
  // Wednesday 11 March 2026 in New York: a next-day transfer is expected on Thursday.
  if (attributes.schedule === 'NEXT_BUSINESS_DAY') assert.equal(stored.expected_on, '2026-03-12');
  assert.equal(stored.disclosure_id, 'd15c1051-0000-4000-8000-000000000001');
  assert.equal(stored.disclosure_version, 1);
  assert.equal(stored.acknowledged_at, null);
});

test("Utah's acknowledgement is stored with the transfer; a preview stores nothing", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'UT');
  const preview = await advanced(app, worker, { amount: 3000, preview: true });
  assert.equal(await storedFor(app, preview.data.id), undefined);
  const made = await advanced(app, worker, { amount: 3000 }, { disclosure_acknowledged: true });
  const stored = await storedFor(app, made.data.id);
  assert.equal(stored?.disclosure_id, 'd15c1051-0000-4000-8000-000000000002');
  assert.equal(stored?.acknowledged_at, FIXED_NOW.toISOString());
});

test('a person of a state without disclosure rules: the figures are stored, no document', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'NY');
  const made = await advanced(app, worker, { amount: 2500 });
  const stored = await storedFor(app, made.data.id);
  assert.equal(stored?.amount, 2500);
  assert.equal(stored?.disclosure_id, null);
  assert.equal(stored?.disclosure_version, null);
});
