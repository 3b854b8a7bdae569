/**
 * The webhook side: the endpoint registered with the EWA server at start, and the receiver that verifies each
 * delivery (Standard Webhooks signatures, with the `standardwebhooks` package) before anything reads it.
 */
import { Webhook } from 'standardwebhooks';
import { callApi } from './ewa-api.js';

const EVENT_TYPES = ['transfer.created', 'transfer.settled', 'transfer.failed'];
/** Delivery ids kept to drop repeats (deliveries are at-least-once); the oldest are forgotten first. */
const SEEN_IDS_MAX = 10_000;

export class WebhookReceiver {
  #config;
  #oauth;
  #verifier;
  #seenIds = new Set();
  endpointId;

  /** `onEvent(event)` is called once per verified, new delivery. */
  constructor(config, oauth, onEvent) {
    this.#config = config;
    this.#oauth = oauth;
    this.onEvent = onEvent;
  }

  /**
   * Replaces the endpoints this app registered before at the same URL with a new one. The signing secret is shown
   * only in the answer to its creation, so a restarted app cannot recover the old one: it keeps the new one in
   * memory.
   */
  async register() {
    const { apiUrl, webhookUrl } = this.#config;
    const token = await this.#oauth.clientToken('client:admin');
    const existing = await callApi(apiUrl, token, 'GET', '/rest/webhook_endpoints');
    for (const endpoint of existing.data.filter((each) => each.attributes.url === webhookUrl))
      await callApi(apiUrl, token, 'DELETE', `/rest/webhook_endpoints/${endpoint.id}`);
    const created = await callApi(apiUrl, token, 'POST', '/rest/webhook_endpoints', {
      body: {
        data: { type: 'webhook_endpoints', attributes: { url: webhookUrl, event_types: EVENT_TYPES } },
      },
    });
    this.#verifier = new Webhook(created.data.attributes.secret);
    this.endpointId = created.data.id;
    return created.data;
  }

  /** Removes the endpoint on the way out, so that the server stops sending to an app that is gone. */
  async unregister() {
    if (!this.endpointId) return;
    const token = await this.#oauth.clientToken('client:admin');
    await callApi(this.#config.apiUrl, token, 'DELETE', `/rest/webhook_endpoints/${this.endpointId}`);
    this.endpointId = undefined;
  }

  /**
   * One delivery: the raw body and its headers. Answers the HTTP status for the sender: 204 when verified (a
   * repeat too, so that it stops retrying), 400 when the signature, the timestamp or the body is wrong.
   */
  receive(rawBody, headers) {
    if (!this.#verifier) return 503;
    let event;
    try {
      // Checks the signature over id, timestamp and the exact bytes received, and that the timestamp is recent.
      event = this.#verifier.verify(rawBody, {
        'webhook-id': headers['webhook-id'],
        'webhook-timestamp': headers['webhook-timestamp'],
        'webhook-signature': headers['webhook-signature'],
      });
    } catch {
      return 400;
    }
    const deliveryId = headers['webhook-id'];
    if (this.#seenIds.has(deliveryId)) return 204;
    this.#seenIds.add(deliveryId);
    if (this.#seenIds.size > SEEN_IDS_MAX) this.#seenIds.delete(this.#seenIds.values().next().value);
    this.onEvent({ ...event, deliveryId, verified: true, receivedAt: new Date().toISOString() });
    return 204;
  }
}
