import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  advanceBody,
  advancesOf,
  availableMinor,
  createPaidWorkers,
  firstError,
  type PaidWorker,
  postTransfer,
  setPolicy,
} from '../helpers/money.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Group commit of advances (idempotency/keyed-batch.ts) through HTTP: advances that arrive while another is in flight
 * share one transaction, and each still gets exactly the answer it would get alone. One transaction in flight at a
 * time, so that whatever arrives meanwhile waits and is batched. On the embedded database a request's statements
 * run on this thread without yielding, so the next request arrives only after it has answered and no batch forms:
 * test/db/keyed-batch.test.ts forms them there by submitting requests together.
 */

const POSTGRES_ONLY = {
  skip: !onPostgres && 'the embedded database answers each request before the next arrives',
};

async function setup(t: Parameters<typeof buildTestApp>[0], workers: number) {
  const app = await buildTestApp(
    t,
    { EWA_TRANSFERS_IN_FLIGHT_MAX: '1', EWA_LOG_LEVEL: 'debug', EWA_DB_LOCK_TIMEOUT_MS: '30000' },
    { now: () => FIXED_NOW },
  );
  const people = await createPaidWorkers(app, workers, FIXED_NOW);
  // Each token verified once now, so that the requests below reach the transfers route together.
  for (const worker of people) await availableMinor(worker);
  return { app, people };
}

function batchesOf(app: TestApp): { requests: number; outcome: string }[] {
  return app.logs.flatMap((line) =>
    line.advanceBatch ? [line.advanceBatch as { requests: number; outcome: string }] : [],
  );
}

/**
 * Another transaction (payroll, say) holding a person's row, so that an advance of theirs waits in flight for as long
 * as the test needs: `blocking()` resolves once a statement of another connection waits for it.
 */
async function holdPersonRow(app: TestApp, personId: string) {
  const { db } = app.database;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: (pid: number) => void;
  const lockTaken = new Promise<number>((resolve) => {
    locked = resolve;
  });
  const holder = db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid from people
      where id = ${personId}::uuid for update`.execute(tx);
    locked(rows[0]!.pid);
    await released;
  });
  const holderPid = await lockTaken;
  return {
    blocking: () =>
      eventually(async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::integer as n from pg_stat_activity
          where ${holderPid}::integer = any(pg_blocking_pids(pid))`.execute(db);
        return Number(rows[0]!.n) > 0;
      }, 10_000),
    release: async () => {
      release();
      await holder;
    },
  };
}

function withId(body: ReturnType<typeof advanceBody>, id: string | undefined) {
  return id === undefined ? body : { data: { ...body.data, id } };
}

test(
  'advances of many people at once share transactions, and each gets its own answer',
  POSTGRES_ONLY,
  async (t) => {
    const { app, people } = await setup(t, 10);
    const [replayed, reused, ...rest] = people as [PaidWorker, PaidWorker, ...PaidWorker[]];
    const replayKey = randomUUID();
    const replayBody = advanceBody(replayed, { amount: 2000 });
    const earlier = await postTransfer(app, replayed.token, replayBody, replayKey);
    assert.equal(earlier.statusCode, 200, earlier.body);
    const reusedKey = randomUUID();
    assert.equal((await postTransfer(app, reused.token, advanceBody(reused), reusedKey)).statusCode, 200);

    // 15 000 available to each. rest[0] asks for too much; every other asks 3 000 + its index.
    const requests = [
      { worker: replayed, body: replayBody, key: replayKey },
      { worker: reused, body: advanceBody(reused, { amount: 7000 }), key: reusedKey },
      ...rest.map((worker, index) => ({
        worker,
        body: advanceBody(worker, { amount: index === 0 ? 20_000 : 3000 + index }),
        key: randomUUID(),
      })),
    ];
    const responses = await Promise.all(
      requests.map((r) => postTransfer(app, r.worker.token, r.body, r.key)),
    );

    const batched = batchesOf(app);
    assert.ok(
      batched.some((batch) => batch.requests >= 3 && batch.outcome === 'committed'),
      JSON.stringify(batched),
    );
    const [replay, reuse, tooMuch, ...taken] = responses as [
      (typeof responses)[0],
      (typeof responses)[0],
      (typeof responses)[0],
      ...typeof responses,
    ];
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.body, earlier.body, 'a live answer is replayed byte for byte');
    assert.equal(firstError(reuse).code, 'INVALID_IDEMPOTENCY_KEY', reuse.body);
    assert.equal(firstError(tooMuch).code, 'EARNINGS_BALANCE_EXCEEDED', tooMuch.body);
    for (const [index, response] of taken.entries()) {
      assert.equal(response.statusCode, 200, response.body);
      const worker = rest[index + 1]!;
      const { data } = response.json();
      assert.equal(data.attributes.amount, 3001 + index);
      assert.equal(data.relationships.person.data.id, worker.personId);
      assert.deepEqual(
        (await advancesOf(app, worker)).map((row) => [row.id, Number(row.amount_minor)]),
        [[data.id, 3001 + index]],
      );
      assert.equal(await availableMinor(worker), 15_000 - 3001 - index);
    }
    // Nothing of the refusals was written, and each is stored: its retry answers the same bytes.
    assert.equal((await advancesOf(app, rest[0]!)).length, 0);
    assert.equal(await availableMinor(rest[0]!), 15_000);
    assert.equal((await advancesOf(app, replayed)).length, 1);
    assert.equal((await advancesOf(app, reused)).length, 1);
    for (const [index, request] of requests.entries()) {
      if (index === 1) continue; // the reused key's answer is its first request's
      const again = await postTransfer(app, request.worker.token, request.body, request.key);
      assert.equal(again.body, responses[index]!.body);
    }
    assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
  },
);

test(
  'advances of one person never share a transaction: together they never overdraw',
  POSTGRES_ONLY,
  async (t) => {
    const { app, people } = await setup(t, 3);
    const [worker, ...others] = people as [PaidWorker, ...PaidWorker[]];
    await setPolicy(app, worker.organizationId, { daily_transfer_count_max: 100 });
    // 15 000 available: any three of 4 000 … 4 004 fit, no four do, whatever order they run in.
    const responses = await Promise.all([
      ...Array.from({ length: 5 }, (_, index) =>
        postTransfer(app, worker.token, advanceBody(worker, { amount: 4000 + index })),
      ),
      ...others.map((other) => postTransfer(app, other.token, advanceBody(other, { amount: 4000 }))),
    ]);
    const mine = responses.slice(0, 5);
    assert.equal(mine.filter((response) => response.statusCode === 200).length, 3);
    for (const response of mine.filter((r) => r.statusCode !== 200))
      assert.equal(firstError(response).code, 'EARNINGS_BALANCE_EXCEEDED', response.body);
    for (const response of responses.slice(5)) assert.equal(response.statusCode, 200, response.body);
    const taken = mine
      .filter((response) => response.statusCode === 200)
      .reduce((sum, response) => sum + response.json().data.attributes.amount, 0);
    assert.equal(await availableMinor(worker), 15_000 - taken);
    const batches = batchesOf(app);
    assert.ok(batches.length > 0, 'the others were batched with this person');
    // Never by luck: two of the person's advances in one batch would both read the whole balance, and the batch
    // would fail on the paychecks' checks and run alone.
    assert.ok(
      batches.every((batch) => batch.outcome === 'committed'),
      JSON.stringify(batches),
    );
    assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
  },
);

test(
  'one key sent twice at once: the second is 409 at once, and the first answer stands',
  POSTGRES_ONLY,
  async (t) => {
    const { app, people } = await setup(t, 1);
    const worker = people[0]!;
    const key = randomUUID();
    const body = advanceBody(worker, { amount: 5000 });
    // The first is held in flight until the second has its answer: sent together, the first could otherwise be
    // answered before the second arrived, and the second would rightly replay it.
    const row = await holdPersonRow(app, worker.personId);
    let second: Awaited<ReturnType<typeof postTransfer>>;
    let firstAnswered = false;
    const firstAnswer = postTransfer(app, worker.token, body, key).finally(() => {
      firstAnswered = true;
    });
    try {
      await row.blocking();
      second = await postTransfer(app, worker.token, body, key);
      assert.equal(firstAnswered, false, 'the first still waits for its person');
    } finally {
      await row.release();
    }
    const first = await firstAnswer;
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 409, second.body);
    assert.equal(firstError(second).code, 'IDEMPOTENCY_KEY_LOCKED');
    assert.equal((await postTransfer(app, worker.token, body, key)).body, first.body);
    assert.equal((await advancesOf(app, worker)).length, 1);
  },
);

test(
  'a conflict no check could see rolls the batch back; each request then runs alone and is answered as alone',
  POSTGRES_ONLY,
  async (t) => {
    const { app, people } = await setup(t, 5);
    // Two people send the same client id in one batch: both checks find it free, the second insert fails.
    const sharedId = randomUUID();
    const responses = await Promise.all(
      people.map((worker, index) =>
        postTransfer(
          app,
          worker.token,
          withId(advanceBody(worker, { amount: 4000 }), index === 1 || index === 2 ? sharedId : undefined),
        ),
      ),
    );
    const batched = batchesOf(app);
    assert.ok(
      batched.some((batch) => batch.outcome === 'ran-alone'),
      `a batch held both: ${JSON.stringify(batched)}`,
    );
    const [, one, two] = responses;
    const winners = [one!, two!].filter((response) => response.statusCode === 200);
    const losers = [one!, two!].filter((response) => response.statusCode !== 200);
    assert.equal(winners.length, 1, `${one!.body}\n${two!.body}`);
    assert.equal(winners[0]!.json().data.id, sharedId);
    assert.equal(firstError(losers[0]!).code, 'INVALID_PARAMETERS');
    assert.deepEqual(firstError(losers[0]!).source, { pointer: '/data/id' });
    for (const index of [0, 3, 4]) assert.equal(responses[index]!.statusCode, 200, responses[index]!.body);
    const advanced = await Promise.all(people.map((worker) => advancesOf(app, worker)));
    assert.deepEqual(
      advanced.map((rows) => rows.length),
      people.map((_, index) =>
        index === 1 || index === 2 ? (responses[index]!.statusCode === 200 ? 1 : 0) : 1,
      ),
    );
    assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
  },
);

test(
  "by default an advance that waits for its person's lock leaves the process's other transaction to the others",
  POSTGRES_ONLY,
  async (t) => {
    // The lock timeout is long, so that the waiting advance is still waiting when the other has answered.
    const app = await buildTestApp(t, { EWA_DB_LOCK_TIMEOUT_MS: '30000' }, { now: () => FIXED_NOW });
    assert.equal(app.config.money.transfersInFlightMax, 2, 'two advance transactions at once by default');
    const [blocked, free] = (await createPaidWorkers(app, 2, FIXED_NOW)) as [PaidWorker, PaidWorker];
    for (const worker of [blocked, free]) await availableMinor(worker);
    const { db } = app.database;
    const row = await holdPersonRow(app, blocked.personId);
    let waitingAnswered = false;
    const waiting = postTransfer(app, blocked.token, advanceBody(blocked), randomUUID()).finally(() => {
      waitingAnswered = true;
    });
    try {
      await row.blocking();
      const other = await postTransfer(app, free.token, advanceBody(free), randomUUID());
      assert.equal(other.statusCode, 200, other.body);
      assert.equal(waitingAnswered, false, 'the first advance still waits for its person');
    } finally {
      await row.release();
    }
    const answer = await waiting;
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(
      (await Promise.all([blocked, free].map((worker) => advancesOf(app, worker)))).map(
        (rows) => rows.length,
      ),
      [1, 1],
    );
    assert.deepEqual(await checkLedgerInvariants(db), []);
  },
);
