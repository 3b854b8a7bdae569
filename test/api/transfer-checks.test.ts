import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { createSandboxRail } from '../../src/rails/sandbox-rail.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { createWorker, restClient, workerToken } from '../helpers/factories.ts';
import {
  addBankAccount,
  addCardAccount,
  advanceBody,
  createPaidWorker,
  firstError,
  moneyFootprint,
  type PaidWorker,
  payToCardOnly,
  postTransfer,
  recordShift,
  setPolicy,
} from '../helpers/money.ts';

/**
 * Every 400 of POST /rest/transfers that the employer's policy can produce, provoked through HTTP, and the
 * documented order in which they are checked. A refused request must change nothing: the person's balance and
 * transfers and the whole ledger are compared before and after each one.
 */

const ORIGIN = { pointer: '/data/relationships/origin' };
const DESTINATION = { pointer: '/data/relationships/destination' };
const AMOUNT = { pointer: '/data/attributes/amount' };
const SCHEDULE = { pointer: '/data/attributes/schedule' };
const KEY_HEADER = { header: 'Idempotency-Key' };

/** A worker with 40 000 earned this period: 15 000 available (75 % net, 50 % of it accessible). */
async function setup(t: Parameters<typeof buildTestApp>[0], policy: Record<string, unknown> = {}) {
  let clock = FIXED_NOW;
  const app = await buildTestApp(t, {}, { now: () => clock });
  const worker = await createPaidWorker(app, { policy, earnedMinor: 40_000, now: FIXED_NOW });
  return {
    app,
    worker,
    moveClock: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
      return clock;
    },
  };
}

/** Posts the body and expects the refusal `code` (source as given, or none) with nothing changed. */
async function assertRefused(
  app: TestApp,
  worker: PaidWorker,
  body: unknown,
  code: string,
  source?: Record<string, string>,
) {
  const before = await moneyFootprint(app, worker);
  const response = await postTransfer(app, worker.token, body);
  assert.equal(response.statusCode, 400, response.body);
  const error = firstError(response);
  assert.equal(error.code, code, response.body);
  assert.equal(error.status, '400');
  assert.deepEqual(error.source, source, response.body);
  assert.deepEqual(await moneyFootprint(app, worker), before, `${code} changed something`);
  return error;
}

async function assertAccepted(app: TestApp, worker: PaidWorker, body: unknown) {
  const response = await postTransfer(app, worker.token, body);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data as { id: string; attributes: Record<string, unknown> };
}

test('INVALID_RESOURCE_LINK: an origin or person that is not the caller', async (t) => {
  const { app, worker } = await setup(t);
  const other = await createPaidWorker(app, {
    organizationId: worker.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: other.balanceAccountId, depositoryId: worker.depositoryId }),
    'INVALID_RESOURCE_LINK',
    ORIGIN,
  );
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: randomUUID(), depositoryId: worker.depositoryId }),
    'INVALID_RESOURCE_LINK',
    ORIGIN,
  );
  // An id that is no UUID is refused the same way, never a server error.
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: 'not-a-uuid', depositoryId: worker.depositoryId }),
    'INVALID_RESOURCE_LINK',
    ORIGIN,
  );
  await assertRefused(
    app,
    worker,
    advanceBody(worker, {}, { person: { data: { type: 'people', id: other.personId } } }),
    'INVALID_RESOURCE_LINK',
    { pointer: '/data/relationships/person' },
  );
  // Naming oneself is fine.
  await assertAccepted(
    app,
    worker,
    advanceBody(worker, {}, { person: { data: { type: 'people', id: worker.personId } } }),
  );
});

test('TRANSFERS_DISABLED, MISSING_STATE_OF_RESIDENCE, INVALID_DIRECT_DEPOSIT_STATUS', async (t) => {
  const { app, worker } = await setup(t);
  const { db } = app.database;
  const person = (values: Record<string, unknown>) =>
    db.updateTable('people').set(values).where('id', '=', worker.personId).execute();

  await person({ disallow_reason: 'DELINQUENT' });
  await assertRefused(app, worker, advanceBody(worker), 'TRANSFERS_DISABLED');
  await person({ disallow_reason: null });

  await setPolicy(app, worker.organizationId, { transfers_enabled: false });
  await assertRefused(app, worker, advanceBody(worker), 'TRANSFERS_DISABLED');
  await setPolicy(app, worker.organizationId, { transfers_enabled: true });

  await person({ state_of_residence: null });
  await assertRefused(app, worker, advanceBody(worker), 'MISSING_STATE_OF_RESIDENCE');
  await person({ state_of_residence: 'NY' });

  await db
    .updateTable('jobs')
    .set({ direct_deposit_status: 'SETUP_PENDING' })
    .where('id', '=', worker.jobId)
    .execute();
  await assertRefused(app, worker, advanceBody(worker), 'INVALID_DIRECT_DEPOSIT_STATUS');

  // A job whose direct deposit was never set up, as a new worker's is.
  const fresh = await createWorker(app, worker.organizationId);
  await db.updateTable('people').set({ state_of_residence: 'CA' }).where('id', '=', fresh.personId).execute();
  const token = await workerToken(app, fresh.personId);
  const freshWorker: PaidWorker = {
    ...fresh,
    organizationId: worker.organizationId,
    token,
    api: restClient(app, token),
    depositoryId: '',
    balanceAccountId: fresh.balanceAccountId as string,
  };
  freshWorker.depositoryId = await addBankAccount(freshWorker, '000123456789');
  await assertRefused(app, freshWorker, advanceBody(freshWorker), 'INVALID_DIRECT_DEPOSIT_STATUS');
});

test('INELIGIBLE_ORIGIN: a bank account as origin, the earnings balance of a deactivated job', async (t) => {
  const { app, worker } = await setup(t);
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.depositoryId, depositoryId: worker.depositoryId }),
    'INELIGIBLE_ORIGIN',
    ORIGIN,
  );
  const deactivated = await worker.api.patch(`/rest/jobs/${worker.jobId}`, {
    data: { type: 'jobs', id: worker.jobId, attributes: { activation_status: 'DEACTIVATED' } },
  });
  assert.equal(deactivated.statusCode, 200, deactivated.body);
  await assertRefused(app, worker, advanceBody(worker), 'INELIGIBLE_ORIGIN', ORIGIN);
});

test('MISSING_DEFAULT_DEPOSITORY_ACCOUNT: no destination and no default depository', async (t) => {
  const { app, worker } = await setup(t);
  const body = advanceBody(worker);
  const { destination: _destination, ...withoutDestination } = body.data.relationships;
  const noDestination = { data: { ...body.data, relationships: withoutDestination } };
  // With the default depository, the destination may be left out.
  const accepted = await assertAccepted(app, worker, noDestination);
  assert.deepEqual(
    (accepted as unknown as { relationships: { destination: unknown } }).relationships.destination,
    {
      data: { type: 'accounts', id: worker.depositoryId },
    },
  );
  // A default card is no default depository.
  await payToCardOnly(app, worker, FIXED_NOW);
  await assertRefused(app, worker, noDestination, 'MISSING_DEFAULT_DEPOSITORY_ACCOUNT', DESTINATION);
});

test("INVALID_DESTINATION: an earnings balance, someone else's account, a deleted account", async (t) => {
  const { app, worker } = await setup(t);
  const other = await createPaidWorker(app, { organizationId: worker.organizationId });
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.balanceAccountId, depositoryId: worker.balanceAccountId }),
    'INVALID_DESTINATION',
    DESTINATION,
  );
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.balanceAccountId, depositoryId: other.depositoryId }),
    'INVALID_DESTINATION',
    DESTINATION,
  );
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.balanceAccountId, depositoryId: 'not-a-uuid' }),
    'INVALID_DESTINATION',
    DESTINATION,
  );
  const savings = await addBankAccount(worker, '000987654321');
  const deleted = await worker.api.delete(`/rest/accounts/${savings}`);
  assert.equal(deleted.statusCode, 204, deleted.body);
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.balanceAccountId, depositoryId: savings }),
    'INVALID_DESTINATION',
    DESTINATION,
  );
});

test('INVALID_TRANSFER_SCHEDULE: the default policy offers no instant bank transfer', async (t) => {
  const { app, worker } = await setup(t);
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { schedule: 'WITHIN_THIRTY_MINUTES' }),
    'INVALID_TRANSFER_SCHEDULE',
    SCHEDULE,
  );
  // The card gets it, for its fee.
  const card = await addCardAccount(app, worker, FIXED_NOW);
  const accepted = await assertAccepted(
    app,
    worker,
    advanceBody({ ...worker, depositoryId: card }, { schedule: 'WITHIN_THIRTY_MINUTES' }),
  );
  assert.equal(accepted.attributes.fee, 299);
});

test('INVALID_TRANSFER_SCHEDULE: no rail of this server pays cards (production before a card rail)', async (t) => {
  // The sandbox rail narrowed to bank accounts, as production's ACH rail is.
  const bankOnly = { ...createSandboxRail(), destinations: ['DEPOSITORY'] as const };
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW, rail: bankOnly });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  await assertRefused(
    app,
    worker,
    advanceBody({ ...worker, depositoryId: card }, { schedule: 'WITHIN_THIRTY_MINUTES' }),
    'INVALID_TRANSFER_SCHEDULE',
    DESTINATION,
  );
  await assertAccepted(app, worker, advanceBody(worker));
});

test('MINIMUM_AMOUNT_SUBCEEDED, MAXIMUM_AMOUNT_EXCEEDED, EARNINGS_BALANCE_EXCEEDED at their edges', async (t) => {
  const { app, worker } = await setup(t);
  await assertRefused(app, worker, advanceBody(worker, { amount: 499 }), 'MINIMUM_AMOUNT_SUBCEEDED', AMOUNT);
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 100_001 }),
    'MAXIMUM_AMOUNT_EXCEEDED',
    AMOUNT,
  );
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 15_001 }),
    'EARNINGS_BALANCE_EXCEEDED',
    AMOUNT,
  );
  await assertAccepted(app, worker, advanceBody(worker, { amount: 500 }));
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 14_501 }),
    'EARNINGS_BALANCE_EXCEEDED',
    AMOUNT,
  );
  await assertAccepted(app, worker, advanceBody(worker, { amount: 14_500 }));
});

test('MINIMUM_AMOUNT_SUBCEEDED when the amount would not cover its fee', async (t) => {
  const { app, worker } = await setup(t, { minimum_transfer_minor: 100 });
  const card = await addCardAccount(app, worker, FIXED_NOW);
  const instantToCard = (amount: number) =>
    advanceBody({ ...worker, depositoryId: card }, { amount, schedule: 'WITHIN_THIRTY_MINUTES' });
  const error = await assertRefused(app, worker, instantToCard(299), 'MINIMUM_AMOUNT_SUBCEEDED', AMOUNT);
  assert.match(error.detail, /at least 300/);
  await assertAccepted(app, worker, instantToCard(300));
});

test('MAXIMUM_FEE_EXCEEDED: a policy fee above its own maximum (set on the row directly)', async (t) => {
  const { app, worker } = await setup(t);
  await setPolicy(app, worker.organizationId, { fee_bank_next_day_minor: 1000, maximum_fee_minor: 999 });
  await assertRefused(app, worker, advanceBody(worker), 'MAXIMUM_FEE_EXCEEDED');
  await setPolicy(app, worker.organizationId, { maximum_fee_minor: 1000 });
  const accepted = await assertAccepted(app, worker, advanceBody(worker));
  assert.equal(accepted.attributes.fee, 1000);
});

test('TRANSFER_LIMIT_EXCEEDED: the sixth advance in 24 hours; a failed one does not count', async (t) => {
  const { app, worker, moveClock } = await setup(t);
  // 1313 is a sandbox amount that the rail fails.
  for (const amount of [500, 501, 502, 503, 1313])
    await assertAccepted(app, worker, advanceBody(worker, { amount }));
  await assertRefused(app, worker, advanceBody(worker, { amount: 505 }), 'TRANSFER_LIMIT_EXCEEDED');
  // Thursday 09:00 New York: the rail has answered, and the 1313 failed.
  const thursday = moveClock(Date.parse('2026-03-12T13:00:00Z') - FIXED_NOW.getTime());
  const { failed } = await app.money.settle(thursday);
  assert.ok(failed >= 1);
  await assertAccepted(app, worker, advanceBody(worker, { amount: 505 }));
  await assertRefused(app, worker, advanceBody(worker, { amount: 506 }), 'TRANSFER_LIMIT_EXCEEDED');
  // 24 hours after the first ones, the window has moved on past four of them.
  moveClock(Date.parse('2026-03-12T15:30:01Z') - thursday.getTime());
  await assertAccepted(app, worker, advanceBody(worker, { amount: 506 }));
});

test('TRANSFER_AMOUNT_LIMIT_EXCEEDED: the sum of 24 hours with this one above the limit', async (t) => {
  const { app, worker, moveClock } = await setup(t);
  await recordShift(app, worker.jobId, 360_000, FIXED_NOW);
  // 400 000 earned: 150 000 available, the daily limit 100 000.
  await assertAccepted(app, worker, advanceBody(worker, { amount: 60_000 }));
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 40_001 }),
    'TRANSFER_AMOUNT_LIMIT_EXCEEDED',
    AMOUNT,
  );
  await assertAccepted(app, worker, advanceBody(worker, { amount: 40_000 }));
  moveClock(86_400_000 + 1000);
  await assertAccepted(app, worker, advanceBody(worker, { amount: 40_001 }));
});

test('DUPLICATE_TRANSFER within the window, and not after it nor to another destination', async (t) => {
  const { app, worker, moveClock } = await setup(t);
  await assertAccepted(app, worker, advanceBody(worker, { amount: 1000 }));
  moveClock(59_000);
  await assertRefused(app, worker, advanceBody(worker, { amount: 1000 }), 'DUPLICATE_TRANSFER');
  const savings = await addBankAccount(worker, '000555555555');
  await assertAccepted(app, worker, advanceBody({ ...worker, depositoryId: savings }, { amount: 1000 }));
  await assertAccepted(app, worker, advanceBody(worker, { amount: 1001 }));
  moveClock(1001);
  await assertAccepted(app, worker, advanceBody(worker, { amount: 1000 }));
});

test('INVALID_IDEMPOTENCY_KEY: a missing key, a key that is no UUID, a key reused for another body', async (t) => {
  const { app, worker } = await setup(t);
  const post = (headers: Record<string, string>, body: unknown = advanceBody(worker)) =>
    app.api.inject({
      method: 'POST',
      url: '/rest/transfers',
      headers: {
        authorization: `Bearer ${worker.token}`,
        'content-type': 'application/vnd.api+json',
        ...headers,
      },
      payload: JSON.stringify(body),
    });
  const before = await moneyFootprint(app, worker);
  const badHeaders: Record<string, string>[] = [
    {},
    { 'idempotency-key': 'not-a-uuid' },
    { 'idempotency-key': '' },
  ];
  for (const headers of badHeaders) {
    const response = await post(headers);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(firstError(response).code, 'INVALID_IDEMPOTENCY_KEY');
    assert.equal(firstError(response).status, '400');
    assert.deepEqual(firstError(response).source, KEY_HEADER);
  }
  assert.deepEqual(await moneyFootprint(app, worker), before);
  const key = randomUUID();
  assert.equal((await postTransfer(app, worker.token, advanceBody(worker), key)).statusCode, 200);
  const after = await moneyFootprint(app, worker);
  const reused = await postTransfer(app, worker.token, advanceBody(worker, { amount: 5001 }), key);
  assert.equal(reused.statusCode, 400, reused.body);
  assert.equal(firstError(reused).code, 'INVALID_IDEMPOTENCY_KEY');
  assert.deepEqual(firstError(reused).source, KEY_HEADER);
  assert.deepEqual(await moneyFootprint(app, worker), after);
});

test('schema errors name the field: an amount that is no integer, an unknown schedule', async (t) => {
  const { app, worker } = await setup(t);
  const cases: [Record<string, unknown>, string][] = [
    [{ amount: '5000' }, '/data/attributes/amount'],
    [{ amount: 50.5 }, '/data/attributes/amount'],
    [{ amount: 0 }, '/data/attributes/amount'],
    [{ schedule: 'TOMORROW' }, '/data/attributes/schedule'],
    [{ currency: 'usd' }, '/data/attributes/currency'],
  ];
  for (const [attributes, pointer] of cases) {
    const before = await moneyFootprint(app, worker);
    const response = await postTransfer(app, worker.token, advanceBody(worker, attributes));
    assert.equal(response.statusCode, 400, response.body);
    const error = firstError(response);
    assert.ok(
      ['INVALID_PARAMETERS', 'INVALID_FIELDS', 'MISSING_REQUIRED_FIELD'].includes(error.code),
      response.body,
    );
    assert.deepEqual(error.source, { pointer }, JSON.stringify(attributes));
    assert.deepEqual(await moneyFootprint(app, worker), before);
  }
  // An enumeration names every value it allows, not the first alone.
  const schedule = firstError(
    await postTransfer(app, worker.token, advanceBody(worker, { schedule: 'TOMORROW' })),
  );
  assert.equal(
    schedule.detail,
    '/data/attributes/schedule must be one of WITHIN_THIRTY_MINUTES, NEXT_BUSINESS_DAY.',
  );
  // Another currency than the balance's is a parameter error too, found by the service.
  await assertRefused(app, worker, advanceBody(worker, { currency: 'EUR' }), 'INVALID_PARAMETERS', {
    pointer: '/data/attributes/currency',
  });
});

test('an amount with more digits than a JSON number keeps is refused as sent, not moved as rounded', async (t) => {
  const { app, worker } = await setup(t);
  const body = JSON.stringify(advanceBody(worker, { amount: 1234 }));
  for (const [sent, read] of [
    ['499.9999999999999999999', 500],
    ['2000.000000000000001', 2000],
    ['9007199254740993', 9007199254740992],
    // Read as a double near it, which JavaScript prints as 1e+308: the digits it would be are shown.
    ['1e308', '1000000000000000010979063629440455417404…'],
  ] as const) {
    const before = await moneyFootprint(app, worker);
    const response = await app.api.inject({
      method: 'POST',
      url: '/rest/transfers',
      headers: {
        authorization: `Bearer ${worker.token}`,
        'content-type': 'application/vnd.api+json',
        'idempotency-key': randomUUID(),
      },
      payload: body.replace('"amount":1234', `"amount":${sent}`),
    });
    assert.equal(response.statusCode, 400, response.body);
    const error = firstError(response);
    assert.equal(error.code, 'INVALID_PARAMETERS');
    assert.deepEqual(error.source, { pointer: '/data/attributes/amount' });
    assert.equal(
      error.detail,
      `/data/attributes/amount is ${sent}, more digits than a JSON number keeps: it would be read as ${read}. ` +
        'Send the exact value; amounts are whole numbers of minor units.',
    );
    assert.deepEqual(await moneyFootprint(app, worker), before);
  }
});

test('a request that breaks two rules gets the earlier one of the documented order', async (t) => {
  const { app, worker } = await setup(t);
  const other = await createPaidWorker(app, { organizationId: worker.organizationId });
  const { db } = app.database;
  const person = (values: Record<string, unknown>) =>
    db.updateTable('people').set(values).where('id', '=', worker.personId).execute();
  const otherOrigin = { balanceAccountId: other.balanceAccountId, depositoryId: worker.depositoryId };

  // Links before eligibility.
  await person({ disallow_reason: 'BANNED' });
  await assertRefused(app, worker, advanceBody(otherOrigin), 'INVALID_RESOURCE_LINK', ORIGIN);
  // Within eligibility: disabled before the missing state.
  await person({ state_of_residence: null });
  await assertRefused(app, worker, advanceBody(worker), 'TRANSFERS_DISABLED');
  await person({ disallow_reason: null });
  // The state before the origin.
  await assertRefused(
    app,
    worker,
    advanceBody({ balanceAccountId: worker.depositoryId, depositoryId: worker.depositoryId }),
    'MISSING_STATE_OF_RESIDENCE',
  );
  await person({ state_of_residence: 'NY' });
  // The destination before the amount and the schedule.
  await assertRefused(
    app,
    worker,
    advanceBody(
      { balanceAccountId: worker.balanceAccountId, depositoryId: other.depositoryId },
      { amount: 1, schedule: 'WITHIN_THIRTY_MINUTES' },
    ),
    'INVALID_DESTINATION',
    DESTINATION,
  );
  // The schedule before the amount.
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 100_001, schedule: 'WITHIN_THIRTY_MINUTES' }),
    'INVALID_TRANSFER_SCHEDULE',
    SCHEDULE,
  );
  // The largest amount before the balance.
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 100_001 }),
    'MAXIMUM_AMOUNT_EXCEEDED',
    AMOUNT,
  );
  // The balance before the 24-hour limits, and the limits before the duplicate.
  for (const amount of [500, 501, 502, 503, 504])
    await assertAccepted(app, worker, advanceBody(worker, { amount }));
  await assertRefused(
    app,
    worker,
    advanceBody(worker, { amount: 50_000 }),
    'EARNINGS_BALANCE_EXCEEDED',
    AMOUNT,
  );
  await assertRefused(app, worker, advanceBody(worker, { amount: 504 }), 'TRANSFER_LIMIT_EXCEEDED');
});
