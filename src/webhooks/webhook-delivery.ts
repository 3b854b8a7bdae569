import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { WebhooksConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { OutboxDispatcher, type OutboxHandler, type OutboxLogger } from '../outbox/outbox-dispatcher.ts';
import { AccountPricer, type AccountPricing } from '../resources/accounts/account-pricing.ts';
import type { WebhookEndpoints } from './webhook-endpoints.ts';
import { pricedAccountEvent, webhookPayload } from './webhook-payload.ts';
import { AddressRefused, postJson } from './webhook-post.ts';

/** Why a delivery is not tried again. */
export type GiveUpReason = 'ENDPOINT_GONE' | 'ENDPOINT_DISABLED' | 'RETRY_WINDOW_PASSED' | 'ADDRESS_REFUSED';

class DeliveryGivenUp extends Error {
  override name = 'DeliveryGivenUp';
  readonly reason: GiveUpReason;
  constructor(reason: GiveUpReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface WebhookDeliveryOptions {
  db: Db;
  endpoints: WebhookEndpoints;
  config: WebhooksConfig;
  /** The API's public URL: the links in the resources sent. */
  baseUrl: string;
  /** The application's clock (the dispatcher's); each send is told the instant it is sent as of. */
  now: () => Date;
  /**
   * Real time (the server's, which rotations are stamped with; `now` when absent). The receiver lives in the real
   * world, so a sandbox clock moved ahead changes neither which secrets sign nor how long a delivery is tried
   * (EWA_WEBHOOK_RETRY_HOURS from its first try): an advance, a quarter hour a step, would otherwise give up a
   * delivery tried a moment before.
   */
  realNow?: () => Date;
  logger: OutboxLogger;
  /** The rails' payable kinds, which decide whether a state's free option is added to an account event's fees. */
  pricing?: AccountPricing;
}

interface DeliveryTarget {
  url: string;
  status: string;
  client_live: boolean;
  event_type: string;
  resource_type: string;
  occurred_at: Date;
  data: Record<string, unknown>;
  sealed_secrets: string[];
}

/**
 * Delivers one event to one endpoint: the body signed by the Standard Webhooks scheme with every current secret
 * of the endpoint (webhook-id is the event's id, the same on every attempt and redelivery, so receivers can
 * deduplicate), each attempt written to the delivery log. A 2xx answer delivers it; anything else is retried by
 * the dispatcher's backoff until EWA_WEBHOOK_RETRY_HOURS after its first try, then given up and the endpoint
 * disabled, and the operator told (an error in the log; `ewa webhooks list` shows why).
 */
export function webhookDeliveryHandler(options: WebhookDeliveryOptions): OutboxHandler {
  const { db, config } = options;
  const pricer = new AccountPricer(options.pricing);
  return {
    topic: 'webhook.delivery',
    async send(message) {
      const { eventId, endpointId } = message.payload as { eventId: string; endpointId: string };
      const realNow = (options.realNow ?? options.now)();
      const target = await targetOf(db, eventId, endpointId, realNow);
      const log = (outcome: string, statusCode: number | null, durationMs: number, error: string | null) =>
        db
          .insertInto('webhook_deliveries')
          .values({
            id: randomUUID(),
            event_id: eventId,
            endpoint_id: endpointId,
            attempt: message.attempt,
            attempted_at: new Date(),
            duration_ms: Math.round(durationMs),
            status_code: statusCode,
            outcome,
            error: error?.slice(0, 500) ?? null,
          })
          .execute();
      if (!target?.client_live)
        throw new DeliveryGivenUp('ENDPOINT_GONE', 'the endpoint, its client or the event no longer exists');
      if (target.status !== 'ENABLED') {
        await log('GIVEN_UP', null, 0, 'the endpoint is disabled');
        throw new DeliveryGivenUp('ENDPOINT_DISABLED', 'the endpoint is disabled');
      }
      const retryMs = config.retryHours * 3_600_000;
      if (realNow.getTime() - message.createdAt.getTime() > retryMs) {
        await log('GIVEN_UP', null, 0, `not accepted within ${config.retryHours} hours`);
        throw new DeliveryGivenUp('RETRY_WINDOW_PASSED', `not accepted within ${config.retryHours} hours`);
      }
      const event = await pricedAccountEvent(db, pricer, {
        id: eventId,
        type: target.event_type,
        resourceType: target.resource_type,
        occurredAt: new Date(target.occurred_at),
        data: target.data,
      });
      const body = JSON.stringify(webhookPayload(event, options.baseUrl));
      // The receiver checks the timestamp against its own clock: real time, whatever the sandbox's says.
      const sentAt = new Date();
      const secrets = options.endpoints.openSecrets(endpointId, target.sealed_secrets);
      const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, sentAt, body)).join(' ');
      const started = performance.now();
      let statusCode: number;
      try {
        statusCode = await postJson(
          target.url,
          body,
          {
            'webhook-id': eventId,
            'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
            'webhook-signature': signature,
            'user-agent': 'ewa-server-webhooks',
          },
          { timeoutMs: config.timeoutSeconds * 1000, allowPrivateAddresses: config.allowPrivateAddresses },
        );
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        if (error instanceof AddressRefused) {
          await log('GIVEN_UP', null, performance.now() - started, text);
          throw new DeliveryGivenUp('ADDRESS_REFUSED', text);
        }
        await log('FAILED', null, performance.now() - started, text);
        throw error;
      }
      const delivered = statusCode >= 200 && statusCode < 300;
      await log(
        delivered ? 'DELIVERED' : 'FAILED',
        statusCode,
        performance.now() - started,
        delivered ? null : `HTTP ${statusCode}`,
      );
      if (!delivered) throw new Error(`the receiver answered HTTP ${statusCode}`);
      return { statusCode };
    },
    async sent() {},
    refusalOf: (error) => (error instanceof DeliveryGivenUp ? error.reason : undefined),
    async refused(tx, refusals, at) {
      const expired = refusals.filter((r) => r.reason === 'RETRY_WINDOW_PASSED');
      if (expired.length === 0) return;
      const ids = [...new Set(expired.map((r) => (r.message.payload as { endpointId: string }).endpointId))];
      const reason = `Deliveries were not accepted within ${config.retryHours} hours (disabled ${at.toISOString()}).`;
      const { rows } = await sql<{ id: string; url: string; client_id: string }>`update webhook_endpoints
        set status = 'DISABLED', disabled_reason = ${reason}, updated_at = ${at.toISOString()}::timestamptz
        where id = any(${ids}::uuid[]) and status = 'ENABLED' returning id, url, client_id`.execute(tx);
      for (const endpoint of rows)
        options.logger.error(
          { webhookEndpointId: endpoint.id, clientId: endpoint.client_id, url: endpoint.url },
          `webhook endpoint disabled: ${reason} Fix the receiver, then enable it (ewa webhooks enable) and redeliver what it missed (ewa webhooks redeliver).`,
        );
    },
  };
}

/** The endpoint, the event, and the secrets that sign at `secretsAt` (newest first): one round trip. */
async function targetOf(
  db: Db,
  eventId: string,
  endpointId: string,
  secretsAt: Date,
): Promise<DeliveryTarget | undefined> {
  const { rows } = await sql<DeliveryTarget>`select ep.url, ep.status, c.deleted_at is null as client_live,
      ev.type as event_type, ev.resource_type, ev.occurred_at, ev.data,
      array(select encode(s.sealed, 'base64') from webhook_secrets s where s.endpoint_id = ep.id
        and (s.expires_at is null or s.expires_at > ${secretsAt.toISOString()}::timestamptz)
        order by s.created_at desc) as sealed_secrets
    from webhook_endpoints ep
      join oauth_clients c on c.client_id = ep.client_id
      join webhook_events ev on ev.id = ${eventId}::uuid
    where ep.id = ${endpointId}::uuid`.execute(db);
  return rows[0];
}

/**
 * The dispatcher of webhook deliveries, apart from the rail's: a slow or dead receiver holds up other deliveries
 * at most, never a payment, and takes at most 4 of the 16 lanes at once. Deliveries of one endpoint and resource
 * leave in order. A delivery is given up EWA_WEBHOOK_RETRY_HOURS after its first try, on this dispatcher's clock.
 */
export function webhookDispatcher(
  options: WebhookDeliveryOptions & { random?: () => number; leaseSeconds: number },
): OutboxDispatcher {
  const sendTimeoutMs = options.config.timeoutSeconds * 1000 + 5_000;
  return new OutboxDispatcher({
    db: options.db,
    handlers: [webhookDeliveryHandler(options)],
    inOrderBySubject: true,
    perReceiver: { key: 'endpointId', atOnce: 4 },
    createdAtFirstClaim: true,
    now: options.now,
    ...(options.realNow ? { realNow: options.realNow } : {}),
    random: options.random ?? Math.random,
    logger: options.logger,
    leaseMs: Math.max(options.leaseSeconds * 1000, sendTimeoutMs * 4),
    sendTimeoutMs,
    batchSize: 64,
    concurrency: 16,
    backoffBaseMs: 5_000,
    backoffMaxMs: 3_600_000,
  });
}
