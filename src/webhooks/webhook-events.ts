import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { afterSql, fetchSize, type ListOrder, PAGE_KEY, type Page, pageKeySql } from '../db/keyset-page.ts';
import { withTransaction } from '../db/transaction.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { TEST_EVENT_TYPE } from './event-types.ts';
import {
  type EndpointOwner,
  uuidOrNil,
  type WebhookEndpoint,
  type WebhookEndpoints,
} from './webhook-endpoints.ts';

/** One attempt in the delivery log. */
export interface DeliveryAttempt {
  id: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  attempt: number;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  outcome: 'DELIVERED' | 'FAILED' | 'GIVEN_UP';
  error: string | null;
}

export const DELIVERIES_LIST_MAX = 1000;
/** The order of the delivery log: the latest attempt first, then by id. */
export const DELIVERY_LIST_ORDER: ListOrder = {
  list: 'webhook_deliveries',
  key: { column: 'd.attempted_at', type: 'timestamptz' },
  id: 'd.id',
  direction: 'desc',
};
/** Test events one endpoint may have waiting at once. */
export const TESTS_QUEUED_MAX = 5;
/** Events one redelivery of a time range sends at most; a longer range is redelivered in parts. */
export const REDELIVERY_MAX = 10_000;
/** Deliveries that may wait for one endpoint before a redelivery is refused. */
export const QUEUED_MAX = 50_000;
/** Instants PostgreSQL and JavaScript both hold. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 0, 1);

function checkInstant(field: 'from' | 'to', value: Date | undefined): void {
  if (!value || Number.isNaN(value.getTime()) || value.getTime() < EARLIEST || value.getTime() >= LATEST)
    throw new InputError(`${field} must be an instant (ISO 8601) between 1970 and 9999.`, { field });
}

/** The event log's side of webhooks: test events, the delivery log, redelivery. */
export class WebhookEvents {
  readonly #db: Db;
  readonly #endpoints: WebhookEndpoints;

  constructor(db: Db, endpoints: WebhookEndpoints) {
    this.#db = db;
    this.#endpoints = endpoints;
  }

  /**
   * A `webhook.test` event to this endpoint alone (whatever types it receives), to check the receiver. At most
   * TESTS_QUEUED_MAX wait at once for one endpoint: more is TOO_MANY_REQUESTS, not a growing queue.
   */
  async sendTest(owner: EndpointOwner, endpointId: string, now: Date): Promise<string> {
    const endpoint = await this.#endpoints.find(owner, endpointId);
    if (endpoint.status !== 'ENABLED')
      throw new InputRefusedError(
        `Webhook endpoint ${endpoint.id} is disabled: enable it before testing it.`,
        {
          field: 'endpoint',
        },
      );
    const eventId = randomUUID();
    await withTransaction(this.#db, async (tx) => {
      // The endpoint's row is held while its waiting tests are counted, so that two requests cannot both pass.
      await sql`select id from webhook_endpoints where id = ${endpoint.id} for update`.execute(tx);
      const { rows: waiting } = await sql<{ n: number }>`select count(*)::integer as n from outbox
        where topic = 'webhook.delivery' and payload->>'endpointId' = ${endpoint.id} and payload->>'test' = 'true'`.execute(
        tx,
      );
      if ((waiting[0]?.n ?? 0) >= TESTS_QUEUED_MAX)
        throw new AppError('TOO_MANY_REQUESTS', {
          detail: `${TESTS_QUEUED_MAX} test events already wait for this endpoint; try again once they are delivered.`,
          headers: { 'retry-after': '10' },
        });
      // No organization or person: the fan-out sends it nowhere; it is queued for this endpoint below, as a
      // subject of its own (tests need no order among themselves).
      const { rows } = await sql<{ seq: string }>`insert into webhook_events
          (id, type, audience, resource_type, resource_id, occurred_at, data)
        values (${eventId}::uuid, ${TEST_EVENT_TYPE}, 'ORGANIZATION', 'webhook_endpoints', ${endpoint.id}::uuid,
          ${now.toISOString()}::timestamptz, ${JSON.stringify(testData(endpoint))}::jsonb)
        returning seq`.execute(tx);
      await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
        values (${randomUUID()}::uuid, 'webhook.delivery', md5(${endpoint.id} || '/' || ${eventId})::uuid,
          ${JSON.stringify({ eventId, endpointId: endpoint.id, test: true })}::jsonb, ${now.toISOString()}::timestamptz,
          '-infinity', ${rows[0]?.seq}::bigint)`.execute(tx);
    });
    return eventId;
  }

  /** The latest attempts first, of one endpoint or one event (or all, for the operator). */
  async deliveries(
    owner: EndpointOwner,
    filter: { endpointId?: string | undefined; eventId?: string | undefined; limit?: number | undefined },
  ): Promise<DeliveryAttempt[]> {
    await this.#checkDeliveryFilter(owner, filter);
    const limit = filter.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > DELIVERIES_LIST_MAX)
      throw new InputError(`limit must be a whole number from 1 to ${DELIVERIES_LIST_MAX}.`, {
        field: 'limit',
      });
    return (await this.#deliveryRows(owner, filter, limit, undefined)).map((row) => row.attempt);
  }

  /**
   * One page of the delivery log, in its order (DELIVERY_LIST_ORDER), with one more attempt when another page
   * follows; each with its sort key as text, for the next page's cursor.
   */
  async deliveriesPage(
    owner: EndpointOwner,
    filter: { endpointId?: string | undefined; eventId?: string | undefined },
    page: Page,
  ): Promise<{ attempt: DeliveryAttempt; pageKey: string }[]> {
    await this.#checkDeliveryFilter(owner, filter);
    return this.#deliveryRows(owner, filter, fetchSize(page), page);
  }

  async #checkDeliveryFilter(
    owner: EndpointOwner,
    filter: { endpointId?: string | undefined; eventId?: string | undefined },
  ): Promise<void> {
    if (filter.endpointId !== undefined) await this.#endpoints.find(owner, filter.endpointId);
    if (filter.eventId !== undefined && !isUuid(filter.eventId))
      throw new InputError(
        `event_id must be an event's id (a UUID), not ${JSON.stringify(filter.eventId)}.`,
        {
          field: 'event',
        },
      );
  }

  /** At most `limit` attempts of the filter, after the page's cursor when there is one. */
  async #deliveryRows(
    owner: EndpointOwner,
    filter: { endpointId?: string | undefined; eventId?: string | undefined },
    limit: number,
    page: Page | undefined,
  ): Promise<{ attempt: DeliveryAttempt; pageKey: string }[]> {
    let query = this.#db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
      .select([
        'd.id',
        'd.event_id',
        'e.type',
        'd.endpoint_id',
        'd.attempt',
        'd.attempted_at',
        'd.duration_ms',
        'd.status_code',
        'd.outcome',
        'd.error',
      ])
      .select(pageKeySql(DELIVERY_LIST_ORDER).as(PAGE_KEY))
      .where(afterSql(DELIVERY_LIST_ORDER, page))
      .orderBy('d.attempted_at', 'desc')
      .orderBy('d.id')
      .limit(limit);
    if (owner !== 'operator') query = query.where('ep.client_id', '=', owner.clientId);
    if (filter.endpointId !== undefined)
      query = query.where('d.endpoint_id', '=', uuidOrNil(filter.endpointId));
    if (filter.eventId !== undefined) query = query.where('d.event_id', '=', uuidOrNil(filter.eventId));
    const rows = await query.execute();
    return rows.map((row) => ({
      attempt: {
        id: row.id,
        eventId: row.event_id,
        eventType: row.type,
        endpointId: row.endpoint_id,
        attempt: row.attempt,
        attemptedAt: new Date(row.attempted_at),
        durationMs: row.duration_ms,
        statusCode: row.status_code,
        outcome: row.outcome as DeliveryAttempt['outcome'],
        error: row.error,
      },
      pageKey: row[PAGE_KEY],
    }));
  }

  /**
   * Sends events again: one event (to every endpoint that receives it, or to one), or every event of a time range
   * to one endpoint, oldest first. Only to endpoints that are enabled and would receive the event today (its client
   * still sees the organization or person). All or nothing: a range of more than REDELIVERY_MAX events queues none
   * and says where to split it. Answers how many deliveries were queued.
   */
  async redeliver(
    owner: EndpointOwner,
    request: {
      eventId?: string | undefined;
      endpointId?: string | undefined;
      from?: Date | undefined;
      to?: Date | undefined;
    },
    now: Date,
  ): Promise<number> {
    const { eventId, endpointId, from, to } = request;
    if ((eventId === undefined) === (from === undefined && to === undefined))
      throw new InputError('Redeliver either one event (event_id) or a time range (from and to), not both.', {
        field: eventId === undefined ? 'event' : 'from',
      });
    if (eventId === undefined) {
      if (endpointId === undefined)
        throw new InputError('A time range is redelivered to one endpoint: name it.', { field: 'endpoint' });
      checkInstant('from', from);
      checkInstant('to', to);
      if (from! >= to!) throw new InputError('from must be before to.', { field: 'from' });
    }
    if (endpointId !== undefined) {
      const endpoint = await this.#endpoints.find(owner, endpointId);
      if (endpoint.status !== 'ENABLED')
        throw new InputRefusedError(
          `Webhook endpoint ${endpoint.id} is disabled: enable it before redelivering to it.`,
          {
            field: 'endpoint',
          },
        );
    }
    const clientCondition =
      owner === 'operator'
        ? sql`true`
        : sql`exists (select 1 from webhook_endpoints mine where mine.id = r.endpoint_id
            and mine.client_id = ${owner.clientId})`;
    const endpointCondition =
      endpointId === undefined ? sql`true` : sql`r.endpoint_id = ${uuidOrNil(endpointId)}::uuid`;
    const eventCondition =
      eventId === undefined
        ? sql`e.occurred_at >= ${from!.toISOString()}::timestamptz and e.occurred_at < ${to!.toISOString()}::timestamptz`
        : sql`e.id = ${uuidOrNil(eventId)}::uuid`;
    return withTransaction(this.#db, async (tx) => {
      const { rows: chosen } = await sql<{
        event_id: string;
        endpoint_id: string;
        resource_id: string;
        seq: string;
        occurred_at: Date;
      }>`select e.id as event_id, r.endpoint_id, e.resource_id, e.seq, e.occurred_at from webhook_events e
          join (select event_id, endpoint_id from webhook_recipients
            -- A test event goes to the endpoint it was sent to, while that is enabled.
            union all select test.id, test.resource_id from webhook_events test
              join webhook_endpoints ep on ep.id = test.resource_id and ep.status = 'ENABLED'
            where test.type = ${TEST_EVENT_TYPE}) r on r.event_id = e.id
        where ${eventCondition} and ${endpointCondition} and ${clientCondition}
        order by e.seq limit ${REDELIVERY_MAX + 1}`.execute(tx);
      if (chosen.length > REDELIVERY_MAX)
        throw new InputError(
          `The range holds more than ${REDELIVERY_MAX} events, and none was queued: redeliver from ${from!.toISOString()} to ${new Date(chosen[REDELIVERY_MAX]!.occurred_at).toISOString()}, then from there on.`,
          { field: 'to' },
        );
      if (chosen.length === 0) {
        if (eventId !== undefined)
          throw new InputRefusedError(
            `Event ${eventId} does not exist (events are kept for EWA_WEBHOOK_RETENTION_DAYS), or no enabled endpoint of this caller receives it.`,
            { field: 'event' },
          );
        return 0;
      }
      const endpointIds = [...new Set(chosen.map((c) => c.endpoint_id))];
      // The endpoints' rows are held while what waits for them is counted: no queue grows past its bound.
      await sql`select id from webhook_endpoints where id = any(${endpointIds}::uuid[]) order by id for update`.execute(
        tx,
      );
      const { rows: waiting } = await sql<{ n: number }>`select count(*)::integer as n from outbox
        where topic = 'webhook.delivery' and payload->>'endpointId' = any(${endpointIds}::text[])`.execute(
        tx,
      );
      if ((waiting[0]?.n ?? 0) + chosen.length > QUEUED_MAX)
        throw new InputRefusedError(
          `More than ${QUEUED_MAX} deliveries would wait for this endpoint; none was queued. Try again once it has caught up.`,
          { field: endpointId === undefined ? 'event' : 'endpoint' },
        );
      await sql`insert into outbox (id, topic, subject_id, payload, created_at, due_at, sequence)
        select gen_random_uuid(), 'webhook.delivery', md5(c.endpoint_id::text || '/' || c.resource_id::text)::uuid,
          jsonb_build_object('eventId', c.event_id, 'endpointId', c.endpoint_id),
          ${now.toISOString()}::timestamptz, '-infinity', c.seq
        from unnest(${chosen.map((c) => c.event_id)}::uuid[], ${chosen.map((c) => c.endpoint_id)}::uuid[],
          ${chosen.map((c) => c.resource_id)}::uuid[], ${chosen.map((c) => c.seq)}::bigint[])
          as c(event_id, endpoint_id, resource_id, seq)`.execute(tx);
      return chosen.length;
    });
  }

  /** Events and delivery log older than the retention, at most `limit` a call (the scheduled purge repeats it). */
  async purgeBefore(before: Date, limit = 10_000): Promise<number> {
    const { rows } = await sql<{ purged: string }>`with gone as (delete from webhook_events
        where id in (select id from webhook_events where occurred_at < ${before.toISOString()}::timestamptz
          and not exists (select 1 from outbox o where o.topic = 'webhook.delivery'
            and o.payload->>'eventId' = webhook_events.id::text)
          order by occurred_at limit ${limit})
        returning 1)
      select count(*) as purged from gone`.execute(this.#db);
    return Number(rows[0]?.purged ?? 0);
  }
}

function testData(endpoint: WebhookEndpoint) {
  return {
    type: 'webhook_endpoints',
    id: endpoint.id,
    attributes: {
      url: endpoint.url,
      message: 'A test event: your receiver got it and can verify its signature.',
    },
  };
}
