import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, FIXED_NOW } from '../helpers/build-test-app.ts';
import { advanceBody, createPaidWorker, postTransfer } from '../helpers/money.ts';

test('an advance moves available earnings to the bank account, with its funding and fee', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const balance = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
  assert.equal(balance.json().data.attributes.balances.available, 15_000);
  const response = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 6000 }),
    undefined,
    '?include=estimated_funding_sources',
  );
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.data.attributes.status, 'PENDING');
  assert.equal(body.included.length, 1);
  const after = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
  assert.equal(after.json().data.attributes.balances.available, 9000);
  const list = await worker.api.get('/rest/transfers');
  assert.equal(list.statusCode, 200, list.body);
  assert.equal(list.json().data.length, 2);
  const paychecks = await worker.api.get('/rest/paychecks');
  assert.equal(paychecks.json().data[0].attributes.total_debited, 6000);
});
