import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createMoneyCore } from '../src/money/money-core.ts';
import { createWebhooks } from '../src/webhooks/webhooks.ts';
import {
  type BenchWorker,
  createBenchEmployer,
  createBenchWorkers,
  openBenchSchema,
  recordShifts,
} from './money-fixture.ts';
import { takeAdvances } from './money-payroll.ts';
import { writeSection } from './report.ts';

const DURING_PERIOD = new Date('2026-03-11T15:30:00Z');
const IN_FLIGHT = 8;
/** Deliveries queued at once for the backlog measure: what an endpoint down for a busy hour leaves behind. */
const BACKLOG = 40_000;
const format = (value: number) => value.toLocaleString('en-US');
const SILENT = { warn: () => {}, error: () => {} };

/** One advance of each worker through the transfer service, IN_FLIGHT at a time; their rate per second. */
async function advancesPerSecond(
  money: ReturnType<typeof createMoneyCore>,
  workers: readonly BenchWorker[],
): Promise<number> {
  const started = performance.now();
  await takeAdvances(money, workers, IN_FLIGHT);
  return workers.length / ((performance.now() - started) / 1000);
}

/**
 * What webhooks cost the money path and how fast they leave, on PostgreSQL, in one run: advances of half the
 * workers with no endpoint (the events are not even recorded), then of the other half with an endpoint that wants
 * every event (each advance records transfer.created and earnings_balance.updated and queues their deliveries);
 * then those deliveries sent, signed, to a local receiver answering 204; then a backlog of BACKLOG deliveries of the
 * same events queued at once and sent the same way, whose rate should stay near the first (a claim must not cost
 * the backlog).
 */
export async function webhooksScenario(options: { workers: number }): Promise<void> {
  const bench = await openBenchSchema(16);
  const received = { count: 0 };
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received.count++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { db } = bench.database;
    const money = createMoneyCore(db, bench.config);
    const organizationId = await createBenchEmployer(db);
    const workers = await createBenchWorkers(db, organizationId, options.workers);
    await recordShifts(money.earnings, workers, {
      amountMinor: 16_000,
      workedOn: '2026-03-10',
      now: DURING_PERIOD,
      label: 'webhooks',
      batchSize: 1000,
    });
    const half = Math.floor(workers.length / 2);
    const without = await advancesPerSecond(money, workers.slice(0, half));
    await sql`insert into oauth_clients (client_id, name, is_public) values ('bench-partner', 'Bench partner', false)`.execute(
      db,
    );
    await sql`insert into oauth_client_organizations (client_id, organization_id)
      values ('bench-partner', ${organizationId}::uuid)`.execute(db);
    // The second half signed in to the partner's app (a grant each, as the authorization server saves it), so that
    // their transfers' events, which only their own tokens read, may reach the partner's endpoint.
    await sql`insert into oauth_payloads (model, id, payload)
      select 'Grant', 'bench-' || person_id, jsonb_build_object('accountId', person_id, 'clientId', 'bench-partner')
      from unnest(${workers.slice(half).map((w) => w.personId)}::text[]) as g(person_id)`.execute(db);
    const webhooks = createWebhooks(db, bench.config, { logger: SILENT, now: () => DURING_PERIOD });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const { endpoint } = await webhooks.endpoints.create('bench-partner', { url }, DURING_PERIOD);
    const withEndpoint = await advancesPerSecond(money, workers.slice(half));
    const { rows } = await sql<{ queued: number }>`select count(*)::integer as queued from outbox
      where topic = 'webhook.delivery'`.execute(db);
    const queued = rows[0]?.queued ?? 0;
    const sendAll = async () => {
      const started = performance.now();
      let sent = 0;
      for (;;) {
        const report = await webhooks.dispatcher.dispatchDue(DURING_PERIOD);
        sent += report.sent;
        if (report.sent + report.retried === 0) break;
      }
      return { sent, seconds: (performance.now() - started) / 1000 };
    };
    const first = await sendAll();
    // A backlog: the same events again, BACKLOG deliveries queued at once, each its own subject (none waits for
    // another), to the same endpoint; sent as the first were. Each claim must find the few it may take among them.
    await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
      select gen_random_uuid(), 'webhook.delivery', gen_random_uuid(),
        jsonb_build_object('eventId', e.id, 'endpointId', ${endpoint.id}::uuid), ${DURING_PERIOD.toISOString()}::timestamptz,
        '-infinity', e.seq
      from generate_series(1, ceil(${BACKLOG}::numeric / greatest(${queued}, 1))::integer) as round
        cross join webhook_events e
      limit ${BACKLOG}`.execute(db);
    await sql`analyze outbox`.execute(db);
    const receivedBefore = received.count;
    const backlog = await sendAll();
    writeSection(
      'webhooks',
      [
        '## Webhooks: their cost to advances, and deliveries',
        '',
        `${format(options.workers)} workers on PostgreSQL, each with a shift; half take an advance with no webhook endpoint registered, then the other half, who signed in to the partner's app, with one endpoint that wants every event of their employer (each advance then records \`transfer.created\` and \`earnings_balance.updated\` and queues a delivery of each); then those deliveries are sent, signed, to a local receiver answering 204; then ${format(BACKLOG)} deliveries of the same events are queued at once to the same endpoint (as an endpoint down for a busy hour leaves them) and sent the same way. Advances through \`TransferService.create\`, ${IN_FLIGHT} at a time.`,
        '',
        '| measure | figure | beside |',
        '|---|---|---|',
        `| advances/s, no endpoint (events not recorded) | ${format(Math.round(without))} | reference |`,
        `| advances/s, an endpoint wanting every event | ${format(Math.round(withEndpoint))} | ${Math.round((withEndpoint / without) * 100)} % of the reference |`,
        `| deliveries sent (16 at a time, one dispatcher) | ${format(first.sent)} of ${format(queued)} queued, ${format(receivedBefore)} received | ${format(Math.round(first.sent / first.seconds))} deliveries/s (reference) |`,
        `| deliveries sent with a backlog (the same, ${format(BACKLOG)} queued at once) | ${format(backlog.sent)} of ${format(BACKLOG)} queued, ${format(received.count - receivedBefore)} received | ${format(Math.round(backlog.sent / backlog.seconds))} deliveries/s, ${Math.round((backlog.sent / backlog.seconds / (first.sent / first.seconds)) * 100)} % of the reference |`,
      ].join('\n'),
    );
  } finally {
    receiver.close();
    await bench.drop();
  }
}
