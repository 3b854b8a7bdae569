import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { AppError } from '../../src/errors/app-error.ts';
import { IdempotencyKeys } from '../../src/idempotency/idempotency.ts';
import type { KeyedWork, StoredResponse } from '../../src/idempotency/keyed-work.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { answeredBy, type TransferRequest } from '../../src/money/advances/advance-service.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { availableMinor, createPaidWorkers, type PaidWorker } from '../helpers/money.ts';

/**
 * The batcher of keyed requests on each database, with real advances: requests submitted together while one is in
 * flight form one batch, deterministically (the HTTP tests in test/api/transfer-batches.test.ts need PostgreSQL
 * for that).
 */

interface Batch {
  requests: number;
  outcome: string;
}

/** An app, four paid workers of one employer, and a batcher with one transaction in flight that reports its batches. */
async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const batches: Batch[] = [];
  const keys = keysOf(app, batches);
  const workers = (await createPaidWorkers(app, 4, FIXED_NOW)) as [
    PaidWorker,
    PaidWorker,
    PaidWorker,
    PaidWorker,
  ];
  return { app, batches, keys, workers };
}

function keysOf(app: TestApp, batches: Batch[]) {
  return new IdempotencyKeys(app.database.db, {
    ttlMs: 3_600_000,
    lockMs: 30_000,
    batchSizeMax: 32,
    inFlightMax: 1,
    onBatch: (batch) => batches.push(batch),
  });
}

/** An advance as the transfers route runs it: its view as the answer, a refusal as its error's code. */
function advanceWork(app: TestApp, worker: PaidWorker, request: Partial<TransferRequest>): KeyedWork {
  const work = app.money.transfers.advance(
    worker.personId,
    {
      id: undefined,
      amountMinor: 5000,
      currency: 'USD',
      schedule: 'NEXT_BUSINESS_DAY',
      preview: false,
      originId: worker.balanceAccountId,
      destinationId: worker.depositoryId,
      personId: undefined,
      ...request,
    },
    () => FIXED_NOW,
  );
  return answeredBy(work, (view) => ({ status: 200, body: JSON.stringify({ id: view.transfer.id }) }));
}

const refusal = (error: AppError): StoredResponse => ({ status: error.status, body: error.code });

function submit(keys: IdempotencyKeys, app: TestApp, worker: PaidWorker, request: Partial<TransferRequest>) {
  return keys.run(
    { scope: `person:${worker.personId}`, key: randomUUID(), fingerprint: 'f', now: FIXED_NOW },
    advanceWork(app, worker, request),
    refusal,
  );
}

test('requests submitted while one is in flight share one transaction; each keeps its own answer', async (t) => {
  const { app, batches, keys, workers } = await setup(t);
  const [a, b, c, d] = workers;
  const answers = await Promise.all([
    submit(keys, app, a, { amountMinor: 1000 }),
    submit(keys, app, b, { amountMinor: 2000 }),
    submit(keys, app, c, { amountMinor: 99_000 }),
    submit(keys, app, d, { amountMinor: 4000 }),
  ]);
  assert.deepEqual(
    batches.map((batch) => [batch.requests, batch.outcome]),
    [[3, 'committed']],
  );
  assert.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 400, 200],
  );
  assert.equal(answers[2]!.body, 'EARNINGS_BALANCE_EXCEEDED');
  const balances = await Promise.all([a, b, c, d].map((worker) => availableMinor(worker)));
  assert.deepEqual(balances, [14_000, 13_000, 15_000, 11_000]);
  const stored = await app.database.db
    .selectFrom('idempotency_keys')
    .select(['scope', 'response_status'])
    .execute();
  assert.equal(stored.length, 4, 'every answer, the refusal too, is stored under its key');
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a batch whose writes fail is rolled back whole, and its requests are answered one by one', async (t) => {
  const { app, batches, keys, workers } = await setup(t);
  const [a, b, c, d] = workers;
  const sharedId = randomUUID();
  const answers = await Promise.all([
    submit(keys, app, a, {}),
    submit(keys, app, b, { id: sharedId }),
    submit(keys, app, c, { id: sharedId }),
    submit(keys, app, d, {}),
  ]);
  assert.deepEqual(
    batches.map((batch) => [batch.requests, batch.outcome]),
    [[3, 'ran-alone']],
  );
  // Alone, b and c run at once: whichever writes the shared id first has it, the other is refused.
  const statuses = answers.map((answer) => answer.status);
  assert.equal(statuses[0], 200);
  assert.equal(statuses[3], 200);
  assert.deepEqual([statuses[1], statuses[2]].sort(), [200, 400], `one of the two: ${statuses}`);
  const winner = statuses[1] === 200 ? 1 : 2;
  const loser = 3 - winner;
  assert.equal(JSON.parse(answers[winner]!.body).id, sharedId);
  assert.equal(answers[loser]!.body, 'INVALID_PARAMETERS');
  const balances = await Promise.all([a, b, c, d].map((worker) => availableMinor(worker)));
  const expected = [10_000, 10_000, 10_000, 10_000];
  expected[loser] = 15_000;
  assert.deepEqual(balances, expected);
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('a fault in one request abandons the batch; the others are answered alone, the faulty one fails alone', async (t) => {
  const { app, batches, keys, workers } = await setup(t);
  const [a, b, c] = workers;
  const faulty: KeyedWork = {
    ...advanceWork(app, b, {}),
    decide: async () => {
      throw new Error('a bug in the rules');
    },
  };
  const answers = await Promise.allSettled([
    submit(keys, app, a, {}),
    keys.run(
      { scope: `person:${b.personId}`, key: randomUUID(), fingerprint: 'f', now: FIXED_NOW },
      faulty,
      refusal,
    ),
    submit(keys, app, c, {}),
  ]);
  assert.deepEqual(
    batches.map((batch) => [batch.requests, batch.outcome]),
    [[2, 'ran-alone']],
  );
  assert.equal(answers[0].status, 'fulfilled');
  assert.equal(answers[1].status, 'rejected');
  assert.ok(!(answers[1].status === 'rejected' && answers[1].reason instanceof AppError));
  assert.equal(answers[2].status, 'fulfilled');
  assert.deepEqual(
    await Promise.all([a, b, c].map((worker) => availableMinor(worker))),
    [10_000, 15_000, 10_000],
  );
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});
