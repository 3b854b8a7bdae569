import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { claimCandidates } from '../../src/outbox/claim-candidates.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';

const BACKLOG = 3_000;
const SLOW = randomUUID();
const OTHER = randomUUID();

test("a claim of webhook deliveries reads each endpoint from its first due delivery, not the endpoint's backlog", async (t) => {
  const app = await buildTestApp(t);
  const { db } = app.database;
  // One endpoint far behind (a delivery per resource, as after an outage), another with a few.
  await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
    select gen_random_uuid(), 'webhook.delivery', gen_random_uuid(),
      jsonb_build_object('eventId', gen_random_uuid(), 'endpointId', case when g <= ${BACKLOG} then ${SLOW} else ${OTHER} end),
      now(), now() - interval '1 hour' + g * interval '1 ms', g
    from generate_series(1, ${BACKLOG + 3}) as g`.execute(db);
  await sql`analyze outbox`.execute(db);
  const query = (busy: Map<string, number>) =>
    claimCandidates({
      topics: ['webhook.delivery'],
      now: new Date().toISOString(),
      realAt: new Date().toISOString(),
      batchSize: 16,
      inOrderBySubject: true,
      perReceiver: { key: 'endpointId', atOnce: 4 },
      busy,
    });

  const { rows: chosen } = await db.transaction().execute((tx) =>
    sql<{
      id: string;
    }>`select o.payload->>'endpointId' as endpoint from outbox o where o.id in (${query(new Map([[SLOW, 1]]))})`.execute(
      tx,
    ),
  );
  const byEndpoint = Map.groupBy(chosen as unknown as { endpoint: string }[], (row) => row.endpoint);
  assert.equal(byEndpoint.get(SLOW)?.length, 3, 'the lanes its sends in flight leave free');
  assert.equal(byEndpoint.get(OTHER)?.length, 3, 'the other endpoint is not kept waiting behind the backlog');

  const { rows } = await db
    .transaction()
    .execute((tx) =>
      sql<{ 'QUERY PLAN': string }>`explain (analyze, costs off, timing off) ${query(new Map())}`.execute(tx),
    );
  const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
  t.diagnostic(plan);
  assert.match(plan, /outbox_webhook_receiver_idx/, plan);
  assert.doesNotMatch(plan, /Seq Scan on outbox|WindowAgg/, `no read of the whole outbox:\n${plan}`);
  const read = [
    ...plan.matchAll(/Index Scan using outbox_webhook_receiver_idx on outbox m .*rows=([\d.]+) loops=(\d+)/g),
  ];
  assert.ok(read.length > 0, plan);
  for (const [, perLoop, loops] of read)
    assert.ok(
      Number(perLoop) * Number(loops) <= 16,
      `the deliveries of each endpoint read, at most its lanes:\n${plan}`,
    );
});
