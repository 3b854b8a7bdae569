import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { OutboxDispatcher, OutboxLogger } from '../outbox/outbox-dispatcher.ts';
import { webhookDispatcher } from './webhook-delivery.ts';
import { WebhookEndpoints } from './webhook-endpoints.ts';
import { WebhookEvents } from './webhook-events.ts';
import { WebhookSecretBox } from './webhook-secrets.ts';

/** Webhooks of one process: endpoints and their secrets, the event log, and the dispatcher that delivers. */
export interface Webhooks {
  endpoints: WebhookEndpoints;
  events: WebhookEvents;
  dispatcher: OutboxDispatcher;
}

export function createWebhooks(
  db: Db,
  config: Config,
  options: {
    now?: () => Date;
    /**
     * Real time, when `now` is the sandbox's: secrets expire on it, a delivery's retry window and the dispatcher's
     * leases run on it (WebhookDeliveryOptions.realNow).
     */
    realNow?: () => Date;
    logger: OutboxLogger;
    random?: () => number;
    /** The rails' payable kinds, and those paid within thirty minutes, for the fees an account event shows (AccountPricing). */
    payable?: readonly string[];
    instant?: readonly string[] | undefined;
  },
): Webhooks {
  const endpoints = new WebhookEndpoints(db, config.webhooks, new WebhookSecretBox(config.masterKey));
  return {
    endpoints,
    events: new WebhookEvents(db, endpoints),
    dispatcher: webhookDispatcher({
      db,
      endpoints,
      config: config.webhooks,
      baseUrl: config.api.publicUrl,
      now: options.now ?? (() => new Date()),
      ...(options.realNow ? { realNow: options.realNow } : {}),
      logger: options.logger,
      leaseSeconds: config.money.outbox.leaseSeconds,
      ...(options.random ? { random: options.random } : {}),
      pricing: { payable: options.payable, instant: options.instant },
    }),
  };
}
