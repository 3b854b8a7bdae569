import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import {
  backoffMs,
  type ClaimedMessage,
  OutboxDispatcher,
  type OutboxDispatcherOptions,
  type OutboxHandler,
} from '../../src/outbox/outbox-dispatcher.ts';
import { enqueue } from '../../src/outbox/outbox-message.ts';
import { onPostgres, openTwoHandles } from '../helpers/test-database.ts';

const T0 = new Date('2026-03-11T15:00:00.000Z');

class Refused extends Error {}

/** A receiver that remembers every send, and what the books applied, by message id. */
function recordingHandler(behaviour: (message: ClaimedMessage) => Promise<Record<string, unknown>>) {
  const sends: string[] = [];
  /** The attempt each send was, by its claim. */
  const attempts: number[] = [];
  const applied: string[] = [];
  const results = new Map<string, Record<string, unknown>>();
  const refused: string[] = [];
  const handler: OutboxHandler = {
    topic: 'rail.payment',
    async send(message) {
      sends.push(message.id);
      attempts.push(message.attempt);
      return behaviour(message);
    },
    async sent(_tx, answered) {
      for (const { message, result } of answered) {
        applied.push(message.id);
        results.set(message.id, result);
      }
    },
    refusalOf: (error) => (error instanceof Refused ? 'REFUSED' : undefined),
    async refused(_tx, refusals) {
      refused.push(...refusals.map(({ message }) => message.id));
    },
  };
  return { handler, sends, attempts, applied, results, refused };
}

function dispatcher(db: Db, handler: OutboxHandler, overrides: Partial<OutboxDispatcherOptions> = {}) {
  const warnings: object[] = [];
  const outbox = new OutboxDispatcher({
    db,
    handlers: [handler],
    now: () => T0,
    realNow: () => T0,
    random: () => 0.5,
    logger: { warn: (object) => warnings.push(object), error: (object) => warnings.push(object) },
    leaseMs: 60_000,
    sendTimeoutMs: 5_000,
    batchSize: 10,
    concurrency: 4,
    backoffBaseMs: 1000,
    backoffMaxMs: 3_600_000,
    ...overrides,
  });
  return { outbox, warnings };
}

/** A dispatcher of webhook-shaped rows: a subject's messages in sequence, at most `atOnce` per receiver (`to`). */
function inOrderDispatcher(
  db: Db,
  handler: OutboxHandler,
  atOnce: number,
  overrides: Partial<OutboxDispatcherOptions>,
) {
  return dispatcher(
    db,
    { ...handler, topic: 'webhook.delivery' },
    { inOrderBySubject: true, perReceiver: { key: 'to', atOnce }, ...overrides },
  );
}

async function enqueueMessages(db: Db, count: number, dueAt = T0): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await withTransaction(db, (tx) =>
    enqueue(
      tx,
      ids.map((id) => ({
        id,
        topic: 'rail.payment' as const,
        subjectId: randomUUID(),
        payload: { n: id },
        createdAt: T0,
        dueAt,
      })),
    ),
  );
  return ids;
}

async function rowOf(db: Db, id: string) {
  const { rows } = await sql<{
    attempts: number;
    due_at: Date;
    last_error: string | null;
    leased_until: Date | null;
  }>`select attempts, due_at, last_error, leased_until from outbox where id = ${id}::uuid`.execute(db);
  return rows[0];
}

test('each due message is sent once after it committed and its answer applied once; one not yet due waits', async (t) => {
  const [db] = await openTwoHandles(t);
  const due = await enqueueMessages(db, 23);
  const [later] = await enqueueMessages(db, 1, new Date(T0.getTime() + 60_000));
  const receiver = recordingHandler(async (message) => ({ accepted: message.id }));
  // A message written by a transaction that rolled back is never seen.
  await assert.rejects(
    withTransaction(db, async (tx) => {
      await enqueue(tx, [
        {
          id: randomUUID(),
          topic: 'rail.payment',
          subjectId: randomUUID(),
          payload: {},
          createdAt: T0,
          dueAt: T0,
        },
      ]);
      throw new Error('rolled back');
    }),
  );
  const { outbox } = dispatcher(db, receiver.handler);
  assert.deepEqual(await outbox.dispatchDue(T0), { sent: 23, retried: 0, refused: 0 });
  assert.deepEqual(receiver.sends.sort(), [...due].sort());
  assert.deepEqual(receiver.applied.sort(), [...due].sort());
  assert.deepEqual(
    receiver.attempts,
    due.map(() => 1),
  );
  assert.deepEqual(receiver.results.get(due[0]!), { accepted: due[0] });
  assert.equal(await rowOf(db, due[0]!), undefined, 'a sent message leaves the outbox');
  assert.deepEqual(
    await outbox.dispatchDue(T0),
    { sent: 0, retried: 0, refused: 0 },
    'nothing is sent twice',
  );
  assert.ok(await rowOf(db, later!), 'not yet due: still waiting');
  assert.deepEqual(await outbox.dispatchDue(new Date(T0.getTime() + 60_000)), {
    sent: 1,
    retried: 0,
    refused: 0,
  });
});

test('a receiver that fails is asked again after a backoff with jitter, and its answer is applied once', async (t) => {
  const [db] = await openTwoHandles(t);
  const [id] = await enqueueMessages(db, 1);
  let failures = 2;
  const receiver = recordingHandler(async () => {
    if (failures-- > 0) throw new Error('connection reset');
    return { ok: true };
  });
  const { outbox, warnings } = dispatcher(db, receiver.handler);
  assert.deepEqual(await outbox.dispatchDue(T0), { sent: 0, retried: 1, refused: 0 });
  const once = (await rowOf(db, id!))!;
  // Equal jitter: half the step fixed, half random (0.5 here): 1 s step → 750 ms.
  assert.equal(new Date(once.due_at).getTime() - T0.getTime(), 750);
  assert.equal(once.last_error, 'connection reset');
  assert.equal(once.leased_until, null);
  assert.equal(warnings.length, 1);
  assert.deepEqual(await outbox.dispatchDue(T0), { sent: 0, retried: 0, refused: 0 }, 'not before its time');
  const retryAt = new Date(once.due_at);
  assert.deepEqual(await outbox.dispatchDue(retryAt), { sent: 0, retried: 1, refused: 0 });
  const twice = (await rowOf(db, id!))!;
  assert.equal(new Date(twice.due_at).getTime() - retryAt.getTime(), 1500, 'the step doubles');
  assert.deepEqual(await outbox.dispatchDue(new Date(twice.due_at)), { sent: 1, retried: 0, refused: 0 });
  assert.deepEqual(receiver.attempts, [1, 2, 3]);
  assert.equal(await rowOf(db, id!), undefined);
  assert.deepEqual(receiver.applied, [id]);
});

test('a refusal for good closes the message and is applied once', async (t) => {
  const [db] = await openTwoHandles(t);
  const [id] = await enqueueMessages(db, 1);
  const receiver = recordingHandler(async () => {
    throw new Refused('no such account');
  });
  const { outbox } = dispatcher(db, receiver.handler);
  assert.deepEqual(await outbox.dispatchDue(T0), { sent: 0, retried: 0, refused: 1 });
  assert.deepEqual(receiver.refused, [id]);
  assert.deepEqual(receiver.applied, []);
  assert.equal(await rowOf(db, id!), undefined, 'a refused message leaves the outbox');
  assert.deepEqual(await outbox.dispatchDue(T0), { sent: 0, retried: 0, refused: 0 });
});

test('a send that does not answer in time is retried; one that cannot answer within the lease is not started', async (t) => {
  const [db] = await openTwoHandles(t);
  const slow = await enqueueMessages(db, 1);
  const hanging = recordingHandler(() => new Promise(() => {}));
  const timed = dispatcher(db, hanging.handler, { sendTimeoutMs: 50, leaseMs: 10_000 });
  assert.deepEqual(await timed.outbox.dispatchDue(T0), { sent: 0, retried: 1, refused: 0 });
  assert.match((await rowOf(db, slow[0]!))?.last_error ?? '', /no answer within 50 ms/);

  // A lease barely longer than the timeout: after the first send (150 ms) no other can answer within it.
  const queued = await enqueueMessages(db, 3, new Date(T0.getTime() - 1));
  const paced = recordingHandler(async () => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return {};
  });
  const { outbox } = dispatcher(db, paced.handler, { sendTimeoutMs: 1000, leaseMs: 1100, concurrency: 1 });
  const first = await outbox.dispatchDue(T0);
  assert.deepEqual(
    first,
    { sent: 3, retried: 0, refused: 0 },
    'released messages are sent in the rounds after',
  );
  assert.equal(paced.sends.length, 3, 'each sent once');
  assert.deepEqual(paced.attempts, [1, 1, 1], 'a release is not an attempt');
  for (const id of queued) assert.equal(await rowOf(db, id), undefined);
});

test('a message claimed by a process that died is sent again once its lease has passed', async (t) => {
  const [db] = await openTwoHandles(t);
  const [id] = await enqueueMessages(db, 1);
  // What a process that claimed it and died before it answered leaves behind: its claim and its lease.
  await sql`update outbox set attempts = 1, leased_until = ${new Date(T0.getTime() + 60_000).toISOString()}::timestamptz
    where id = ${id!}::uuid`.execute(db);
  const receiver = recordingHandler(async () => ({ ok: true }));
  let wall = T0;
  const second = dispatcher(db, receiver.handler, { realNow: () => wall });
  assert.deepEqual(
    await second.outbox.dispatchDue(T0),
    { sent: 0, retried: 0, refused: 0 },
    'leased: not taken',
  );
  wall = new Date(T0.getTime() + 60_000);
  assert.deepEqual(await second.outbox.dispatchDue(T0), {
    sent: 1,
    retried: 0,
    refused: 0,
  });
  assert.deepEqual(receiver.applied, [id]);
});

test('a lease is real time: a sandbox clock that jumps ahead does not free a message another dispatcher is sending', async (t) => {
  const [one, two] = await openTwoHandles(t);
  const [id] = await enqueueMessages(one, 1);
  const release = Promise.withResolvers<void>();
  const sending = Promise.withResolvers<void>();
  const receiver = recordingHandler(async () => {
    sending.resolve();
    await release.promise;
    return {};
  });
  const realTime = { realNow: () => new Date() };
  const first = dispatcher(one, receiver.handler, realTime).outbox.dispatchDue(T0);
  await sending.promise;
  // The sandbox's clock advanced by a day while the first dispatcher was still waiting for its receiver.
  const dayLater = await dispatcher(two, receiver.handler, realTime).outbox.dispatchDue(
    new Date(T0.getTime() + 86_400_000),
  );
  release.resolve();
  assert.deepEqual(await first, { sent: 1, retried: 0, refused: 0 });
  assert.deepEqual(dayLater, { sent: 0, retried: 0, refused: 0 }, 'its lease still held');
  assert.deepEqual(receiver.sends, [id], 'sent once');
});

test('two dispatchers on one database send every message once between them', async (t) => {
  if (!onPostgres) t.skip('the embedded database is one process');
  const [one, two] = await openTwoHandles(t);
  const ids = await enqueueMessages(one, 120);
  const receiver = recordingHandler(async () => {
    await new Promise((resolve) => setTimeout(resolve, 2));
    return {};
  });
  const [a, b] = await Promise.all([
    dispatcher(one, receiver.handler).outbox.dispatchDue(T0),
    dispatcher(two, receiver.handler).outbox.dispatchDue(T0),
  ]);
  assert.equal(a.sent + b.sent, ids.length);
  assert.equal(receiver.sends.length, ids.length, 'no message sent twice');
  assert.equal(new Set(receiver.applied).size, ids.length);
  assert.ok(a.sent > 0 && b.sent > 0, `both worked: ${a.sent} and ${b.sent}`);
});

test("a receiver that hangs holds at most its own lanes: another receiver's messages leave in order meanwhile", async (t) => {
  const [db] = await openTwoHandles(t);
  // Webhook-shaped rows: a subject's messages leave in sequence, each once the one before it left the outbox.
  const fastSubject = randomUUID();
  const rows = [
    ...Array.from({ length: 10 }, (_, n) => ({ to: 'fast', subject: fastSubject, sequence: n + 1 })),
    ...Array.from({ length: 6 }, (_, n) => ({ to: 'hanging', subject: randomUUID(), sequence: 100 + n })),
  ].map((row) => ({ ...row, id: randomUUID() }));
  for (const row of rows)
    await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
      values (${row.id}::uuid, 'webhook.delivery', ${row.subject}::uuid, ${JSON.stringify({ to: row.to })}::jsonb,
        ${T0.toISOString()}::timestamptz, ${T0.toISOString()}::timestamptz, ${row.sequence})`.execute(db);
  const fastSent: string[] = [];
  const fastDone = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  let hangingNow = 0;
  let hangingMost = 0;
  const receiver = recordingHandler(async (message) => {
    if (message.payload.to === 'fast') {
      fastSent.push(message.id);
      if (fastSent.length === 10) fastDone.resolve();
      return {};
    }
    hangingMost = Math.max(hangingMost, ++hangingNow);
    await release.promise;
    hangingNow--;
    return {};
  });
  const { outbox } = inOrderDispatcher(db, receiver.handler, 2, { concurrency: 4, sendTimeoutMs: 30_000 });
  const dispatched = outbox.dispatchDue(T0);
  const fastInTime = await Promise.race([
    fastDone.promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000)),
  ]);
  const hangingWhileFast = hangingNow;
  release.resolve();
  const report = await dispatched;
  assert.ok(
    fastInTime,
    `the other receiver's ten messages left while the first hung (${fastSent.length} did)`,
  );
  assert.deepEqual(
    fastSent,
    rows.filter((row) => row.to === 'fast').map((row) => row.id),
    'in their order',
  );
  assert.equal(hangingWhileFast, 2, 'the hanging receiver held its two lanes meanwhile');
  assert.equal(hangingMost, 2, 'and never more, counting its sends in flight');
  assert.deepEqual(report, { sent: 16, retried: 0, refused: 0 });
});

test('a message committed while a send hangs leaves on its nudge, not after the hanging send', async (t) => {
  const [db] = await openTwoHandles(t);
  const release = Promise.withResolvers<void>();
  const hangs = Promise.withResolvers<void>();
  const later = Promise.withResolvers<void>();
  const [hanging] = await enqueueMessages(db, 1);
  const receiver = recordingHandler(async (message) => {
    if (message.id === hanging) {
      hangs.resolve();
      await release.promise;
    } else later.resolve();
    return {};
  });
  const { outbox } = dispatcher(db, receiver.handler, { sendTimeoutMs: 30_000 });
  t.after(async () => {
    release.resolve();
    await outbox.stop();
  });
  outbox.start(60_000);
  await hangs.promise;
  const [next] = await enqueueMessages(db, 1);
  outbox.nudge();
  const sentInTime = await Promise.race([
    later.promise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000)),
  ]);
  assert.ok(sentInTime, 'the later message was sent while the first still hung');
  assert.deepEqual(receiver.sends, [hanging, next]);
});

test('two dispatchers claiming in order on one database send every message once between them', async (t) => {
  if (!onPostgres) t.skip('the embedded database is one process');
  const [one, two] = await openTwoHandles(t);
  // Webhook-shaped rows of 40 receivers, 3 messages of a subject each: claims race on the same ranked rows.
  const rows = Array.from({ length: 40 }, (_, receiver) =>
    Array.from({ length: 5 }, () => randomUUID()).flatMap((subject) =>
      [1, 2, 3].map((n) => ({ id: randomUUID(), to: `r${receiver}`, subject, sequence: n })),
    ),
  ).flat();
  await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
    select r.id, 'webhook.delivery', r.subject, jsonb_build_object('to', r.receiver), ${T0.toISOString()}::timestamptz,
      ${T0.toISOString()}::timestamptz, r.sequence
    from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.subject)}::uuid[],
      ${rows.map((r) => r.to)}::text[], ${rows.map((r) => r.sequence)}::bigint[]) as r(id, subject, receiver, sequence)`.execute(
    one,
  );
  const receiver = recordingHandler(async () => ({}));
  const inOrder = (db: Db) =>
    inOrderDispatcher(db, receiver.handler, 4, { concurrency: 16, batchSize: 8 }).outbox.dispatchDue(T0);
  const [a, b] = await Promise.all([inOrder(one), inOrder(two)]);
  assert.equal(a.sent + b.sent, rows.length);
  const twice = receiver.sends.filter((id, index) => receiver.sends.indexOf(id) !== index);
  assert.deepEqual(twice, [], 'no message sent twice');
  assert.equal(receiver.sends.length, rows.length);
});

test('backoff: equal jitter within [step/2, step], doubling up to the maximum', () => {
  const options = { backoffBaseMs: 1000, backoffMaxMs: 8000 };
  assert.equal(backoffMs(1, { ...options, random: () => 0 }), 500);
  assert.equal(backoffMs(1, { ...options, random: () => 0.999999 }), 1000);
  assert.equal(backoffMs(3, { ...options, random: () => 0 }), 2000);
  assert.equal(backoffMs(50, { ...options, random: () => 0 }), 4000);
  assert.equal(backoffMs(50, { ...options, random: () => 0.999999 }), 8000);
});
