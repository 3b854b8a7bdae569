import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import {
  advanceBody,
  advancesOf,
  availableMinor,
  createPaidWorker,
  firstError,
  moneyFootprint,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * The Idempotency-Key of POST /rest/transfers: a retry gets the first answer byte for byte and never a second
 * transfer, whether the first answer was a transfer or a refusal, and however many retries race.
 */

const TTL_SECONDS = 3600;

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  let clock = FIXED_NOW;
  const app = await buildTestApp(
    t,
    { EWA_IDEMPOTENCY_KEY_TTL_SECONDS: String(TTL_SECONDS) },
    { now: () => clock },
  );
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  return {
    app,
    worker,
    moveClock: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
      return clock;
    },
  };
}

test('the same key and body answer the same bytes again, and make one transfer', async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 6000 });
  const first = await postTransfer(app, worker.token, body, key, '?include=estimated_funding_sources');
  assert.equal(first.statusCode, 200, first.body);
  const after = await moneyFootprint(app, worker);
  // The same JSON with its keys in another order is the same request.
  const reordered = {
    data: {
      relationships: body.data.relationships,
      attributes: { schedule: 'NEXT_BUSINESS_DAY', currency: 'USD', amount: 6000 },
      type: 'transfers',
    },
  };
  for (const again of [body, reordered]) {
    const replay = await postTransfer(app, worker.token, again, key, '?include=estimated_funding_sources');
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.body, first.body);
    assert.equal(replay.headers['content-type'], first.headers['content-type']);
  }
  assert.deepEqual(await moneyFootprint(app, worker), after);
  assert.equal((await advancesOf(app, worker)).length, 1);
});

test('a refusal is replayed too, even once the request would now pass', async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 20_000 });
  const first = await postTransfer(app, worker.token, body, key);
  assert.equal(first.statusCode, 400, first.body);
  assert.equal(firstError(first).code, 'EARNINGS_BALANCE_EXCEEDED');
  // More earnings: 20 000 is available now, but the key keeps its answer.
  await recordShift(app, worker.jobId, 40_000, FIXED_NOW);
  assert.equal(await availableMinor(worker), 30_000);
  const replay = await postTransfer(app, worker.token, body, key);
  assert.equal(replay.statusCode, 400);
  assert.equal(replay.body, first.body);
  assert.equal((await advancesOf(app, worker)).length, 0);
  // A new key is a new request.
  assert.equal((await postTransfer(app, worker.token, body)).statusCode, 200);
});

test('the same key with another body is INVALID_IDEMPOTENCY_KEY, and the first answer stays', async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const first = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key);
  assert.equal(first.statusCode, 200, first.body);
  const other = await postTransfer(app, worker.token, advanceBody(worker, { amount: 7000 }), key);
  assert.equal(other.statusCode, 400, other.body);
  assert.equal(firstError(other).code, 'INVALID_IDEMPOTENCY_KEY');
  assert.deepEqual(firstError(other).source, { header: 'Idempotency-Key' });
  // Another query string is another request as well.
  const included = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 6000 }),
    key,
    '?include=estimated_funding_sources',
  );
  assert.equal(firstError(included).code, 'INVALID_IDEMPOTENCY_KEY');
  const replay = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key);
  assert.equal(replay.body, first.body);
  assert.equal((await advancesOf(app, worker)).length, 1);
});

test('a key held by a running request is 409 IDEMPOTENCY_KEY_LOCKED; once that request ends, the key runs', {
  skip: !onPostgres && 'the embedded database runs one transaction at a time, so no request overlaps another',
}, async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 6000, preview: false });
  // Another transaction holds the key as a running request does: with the transaction-scoped lock on it.
  await app.database.db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`person:${worker.personId}`} || ' ' || ${key}, 0))`.execute(
      tx,
    );
    const locked = await postTransfer(app, worker.token, body, key);
    assert.equal(locked.statusCode, 409, locked.body);
    assert.equal(firstError(locked).code, 'IDEMPOTENCY_KEY_LOCKED');
    assert.equal(firstError(locked).status, '409');
    assert.deepEqual(firstError(locked).source, { header: 'Idempotency-Key' });
  });
  assert.equal((await advancesOf(app, worker)).length, 0, 'a 409 writes nothing and stores nothing');
  const taken = await postTransfer(app, worker.token, body, key);
  assert.equal(taken.statusCode, 200, taken.body);
  assert.equal((await advancesOf(app, worker)).length, 1);
  assert.equal((await postTransfer(app, worker.token, body, key)).body, taken.body);
});

test('a retry of an answered request replays it even while another retry holds the key', {
  skip: !onPostgres && 'the embedded database runs one transaction at a time, so no request overlaps another',
}, async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 6000, preview: false });
  const first = await postTransfer(app, worker.token, body, key);
  assert.equal(first.statusCode, 200, first.body);
  // Another process's retry holds the key, as its transaction does while it reads the stored answer.
  await app.database.db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`person:${worker.personId}`} || ' ' || ${key}, 0))`.execute(
      tx,
    );
    const retry = await postTransfer(app, worker.token, body, key);
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.body, first.body);
    const otherBody = await postTransfer(app, worker.token, advanceBody(worker, { amount: 7000 }), key);
    assert.equal(firstError(otherBody).code, 'INVALID_IDEMPOTENCY_KEY');
  });
  // Retries sent at once from this process: each replays the answer, none is 409.
  const retries = await Promise.all(
    Array.from({ length: 10 }, () => postTransfer(app, worker.token, body, key)),
  );
  assert.deepEqual(
    retries.map((retry) => retry.statusCode),
    Array(10).fill(200),
    retries.map((retry) => retry.body).join('\n'),
  );
  for (const retry of retries) assert.equal(retry.body, first.body);
  assert.equal((await advancesOf(app, worker)).length, 1);
});

test('after the TTL the key is new again, for the same body or another', async (t) => {
  const { app, worker, moveClock } = await setup(t);
  const key = randomUUID();
  const first = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key);
  assert.equal(first.statusCode, 200, first.body);
  moveClock(TTL_SECONDS * 1000 - 1);
  assert.equal(
    (await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key)).body,
    first.body,
  );
  moveClock(1);
  const again = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key);
  assert.equal(again.statusCode, 200, again.body);
  assert.notEqual(again.json().data.id, first.json().data.id);
  moveClock(TTL_SECONDS * 1000);
  const other = await postTransfer(app, worker.token, advanceBody(worker, { amount: 600 }), key);
  assert.equal(other.statusCode, 200, other.body);
  assert.deepEqual(
    (await advancesOf(app, worker)).map((row) => Number(row.amount_minor)).sort(),
    [600, 6000, 6000],
  );
});

test('keys are per person: another person may use the same key', async (t) => {
  const { app, worker } = await setup(t);
  const other = await createPaidWorker(app, {
    organizationId: worker.organizationId,
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  const key = randomUUID();
  const mine = await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }), key);
  const theirs = await postTransfer(app, other.token, advanceBody(other, { amount: 6000 }), key);
  assert.equal(mine.statusCode, 200, mine.body);
  assert.equal(theirs.statusCode, 200, theirs.body);
  assert.notEqual(theirs.json().data.id, mine.json().data.id);
  assert.equal((await advancesOf(app, worker)).length, 1);
  assert.equal((await advancesOf(app, other)).length, 1);
  // The key in upper case is the same key.
  const upper = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { amount: 6000 }),
    key.toUpperCase(),
  );
  assert.equal(upper.body, mine.body);
});

test('20 concurrent requests with one key make exactly one transfer; the others replay it or get 409', async (t) => {
  const { app, worker } = await setup(t);
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 6000 });
  const responses = await Promise.all(
    Array.from({ length: 20 }, () => postTransfer(app, worker.token, body, key)),
  );
  const ok = responses.filter((response) => response.statusCode === 200);
  const locked = responses.filter((response) => response.statusCode === 409);
  assert.equal(ok.length + locked.length, 20, responses.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
  assert.ok(ok.length >= 1);
  for (const response of ok) assert.equal(response.body, ok[0]!.body);
  for (const response of locked) assert.equal(firstError(response).code, 'IDEMPOTENCY_KEY_LOCKED');
  assert.equal((await advancesOf(app, worker)).length, 1);
  assert.equal(await availableMinor(worker), 9000);
  // Once the first has answered, every retry gets its answer.
  assert.equal((await postTransfer(app, worker.token, body, key)).body, ok[0]!.body);
});

test('20 concurrent advances with different keys never overdraw the balance', async (t) => {
  const { app, worker } = await setup(t);
  // 15 000 available, 20 × 1 000 asked, the daily count raised so that only the balance limits them.
  await app.database.db
    .updateTable('organization_policies')
    .set({ daily_transfer_count_max: 100 })
    .where('organization_id', '=', worker.organizationId)
    .execute();
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, index) =>
      postTransfer(app, worker.token, advanceBody(worker, { amount: 1000 + index })),
    ),
  );
  const ok = responses.filter((response) => response.statusCode === 200);
  const taken = ok.reduce((sum, response) => sum + response.json().data.attributes.amount, 0);
  assert.ok(taken <= 15_000, `${taken} taken`);
  for (const response of responses.filter((r) => r.statusCode !== 200))
    assert.equal(firstError(response).code, 'EARNINGS_BALANCE_EXCEEDED', response.body);
  assert.equal(await availableMinor(worker), 15_000 - taken);
});

/**
 * Holds the next advance inside its transaction, key held, until `release` is called: a request whose process
 * stopped answering half-way.
 */
function stallNextAdvance(app: TestApp) {
  const service = app.money.transfers;
  const original = service.decide.bind(service);
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let first = true;
  service.decide = async (...args: Parameters<typeof service.decide>) => {
    if (first) {
      first = false;
      entered();
      await gate;
    }
    return original(...args);
  };
  return { stalled, release };
}

test('a request stalled inside its transaction is cut off after EWA_IDEMPOTENCY_LOCK_SECONDS: its retry makes the one transfer, and the late request answers the same', {
  skip: !onPostgres && 'the embedded database has no session to cut off',
}, async (t) => {
  const app = await buildTestApp(t, { EWA_IDEMPOTENCY_LOCK_SECONDS: '1' }, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const key = randomUUID();
  const body = advanceBody(worker, { amount: 6000 });
  const { stalled, release } = stallNextAdvance(app);
  const slow = postTransfer(app, worker.token, body, key);
  await stalled;
  const early = await postTransfer(app, worker.token, body, key);
  assert.equal(early.statusCode, 409, early.body);
  await new Promise((resolve) => setTimeout(resolve, 1500)); // past the one second the stalled session may idle
  const retry = await postTransfer(app, worker.token, body, key);
  assert.equal(retry.statusCode, 200, retry.body);
  release();
  const late = await slow;
  assert.equal((await advancesOf(app, worker)).length, 1, 'one key, one transfer');
  assert.equal(await availableMinor(worker), 9000);
  assert.equal(late.statusCode, 200, late.body);
  assert.equal(late.body, retry.body);
  assert.equal((await postTransfer(app, worker.token, body, key)).body, retry.body);
});
