import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { sql } from 'kysely';
import type { WebhooksConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { afterSql, fetchSize, type ListOrder, PAGE_KEY, type Page, pageKeySql } from '../db/keyset-page.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { idAsShown, isUuid } from '../domain/uuid.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { EVENT_TYPE_NAMES, isWebhookEventType, type WebhookEventType } from './event-types.ts';
import { isPrivateAddress } from './private-addresses.ts';
import { newWebhookSecret, type WebhookSecretBox } from './webhook-secrets.ts';

export const URL_LENGTH_MAX = 2048;
export const DESCRIPTION_LENGTH_MAX = 200;
/** How long the secrets a rotation replaces keep signing, unless the caller says: receivers move over meanwhile. */
export const ROTATION_OVERLAP_DEFAULT_SECONDS = 86_400;
export const ROTATION_OVERLAP_MAX_SECONDS = 7 * 86_400;

export interface WebhookEndpoint {
  id: string;
  clientId: string;
  url: string;
  description: string | null;
  /** Null: every type. */
  eventTypes: WebhookEventType[] | null;
  status: 'ENABLED' | 'DISABLED';
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface EndpointInput {
  url?: string | undefined;
  description?: string | null | undefined;
  eventTypes?: readonly string[] | null | undefined;
}

/** Who is asking: a client manages its own endpoints only; the operator (no client) every endpoint. */
export type EndpointOwner = { clientId: string } | 'operator';

type EndpointRow = {
  id: string;
  client_id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  status: string;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
};

function endpointOf(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    clientId: row.client_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types as WebhookEventType[] | null,
    status: row.status as WebhookEndpoint['status'],
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** The order of the endpoints list: oldest first, then by id. */
export const ENDPOINT_LIST_ORDER: ListOrder = {
  list: 'webhook_endpoints',
  key: { column: 'webhook_endpoints.created_at', type: 'timestamptz' },
  id: 'webhook_endpoints.id',
};

/** Thrown when the endpoint does not exist or is not the caller's: the routes answer 404 either way. */
export class EndpointNotFound extends Error {
  override name = 'EndpointNotFound';
  readonly endpointId: string;
  constructor(endpointId: string) {
    super(`No webhook endpoint ${idAsShown(endpointId)} is visible to this caller.`);
    this.endpointId = endpointId;
  }
}

/**
 * Webhook endpoints and their secrets, for the partner's REST routes, the operator's /admin routes and the CLI
 * alike: every rule about what an endpoint may be lives here.
 */
export class WebhookEndpoints {
  readonly #db: Db;
  readonly #config: WebhooksConfig;
  readonly #secrets: WebhookSecretBox;

  constructor(db: Db, config: WebhooksConfig, secrets: WebhookSecretBox) {
    this.#db = db;
    this.#config = config;
    this.#secrets = secrets;
  }

  /** A new endpoint and its first secret, which is shown this once. */
  async create(
    clientId: string,
    input: EndpointInput,
    now: Date,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const url = this.checkUrl(input.url);
    const description = checkDescription(input.description);
    const eventTypes = checkEventTypes(input.eventTypes);
    return withTransaction(this.#db, async (tx) => {
      // The client's row is held, so that two creations at once cannot both pass the count below.
      const client = await sql`select client_id from oauth_clients where client_id = ${clientId}
        and deleted_at is null for update`.execute(tx);
      if (client.rows.length === 0)
        throw new InputRefusedError(`No client ${clientId}.`, { field: 'client' });
      const { rows } = await sql<{ count: string }>`select count(*) as count from webhook_endpoints
        where client_id = ${clientId}`.execute(tx);
      if (Number(rows[0]?.count) >= this.#config.endpointsPerClientMax)
        throw new InputRefusedError(
          `A client may have at most ${this.#config.endpointsPerClientMax} webhook endpoints; delete one first.`,
          { field: 'url' },
        );
      const id = randomUUID();
      const row = await tx
        .insertInto('webhook_endpoints')
        .values({
          id,
          client_id: clientId,
          url,
          description,
          event_types: eventTypes,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const secret = await this.#addSecret(tx, id, now);
      return { endpoint: endpointOf(row as EndpointRow), secret };
    });
  }

  async list(owner: EndpointOwner, limit = 1000): Promise<WebhookEndpoint[]> {
    let query = this.#db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id');
    if (owner !== 'operator') query = query.where('client_id', '=', owner.clientId);
    const rows = await query.limit(limit).execute();
    return rows.map((row) => endpointOf(row as EndpointRow));
  }

  /**
   * One page of the list, in its order (ENDPOINT_LIST_ORDER), with one more endpoint when another page follows; each
   * with its sort key as text, for the next page's cursor.
   */
  async listPage(
    owner: EndpointOwner,
    page: Page,
  ): Promise<{ endpoint: WebhookEndpoint; pageKey: string }[]> {
    let query = this.#db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .select(pageKeySql(ENDPOINT_LIST_ORDER).as(PAGE_KEY))
      .where(afterSql(ENDPOINT_LIST_ORDER, page))
      .orderBy('created_at')
      .orderBy('id');
    if (owner !== 'operator') query = query.where('client_id', '=', owner.clientId);
    const rows = await query.limit(fetchSize(page)).execute();
    return rows.map((row) => ({ endpoint: endpointOf(row as EndpointRow), pageKey: row[PAGE_KEY] }));
  }

  async find(owner: EndpointOwner, id: string): Promise<WebhookEndpoint> {
    const row = await this.#db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', uuidOrNil(id))
      .where((eb) => (owner === 'operator' ? eb.val(true) : eb('client_id', '=', owner.clientId)))
      .executeTakeFirst();
    if (!row) throw new EndpointNotFound(id);
    return endpointOf(row as EndpointRow);
  }

  /**
   * Changes what is given. `enabled: true` turns a disabled endpoint back on (what it missed meanwhile is sent again
   * by redelivery, not by this); `enabled: false` turns it off.
   */
  async update(
    owner: EndpointOwner,
    id: string,
    input: EndpointInput & { enabled?: boolean | undefined },
    now: Date,
  ): Promise<WebhookEndpoint> {
    const changes: Record<string, unknown> = { updated_at: now };
    if (input.url !== undefined) changes.url = this.checkUrl(input.url);
    if (input.description !== undefined) changes.description = checkDescription(input.description);
    if (input.eventTypes !== undefined) changes.event_types = checkEventTypes(input.eventTypes);
    if (input.enabled !== undefined) {
      changes.status = input.enabled ? 'ENABLED' : 'DISABLED';
      changes.disabled_reason = input.enabled ? null : 'Disabled by request.';
    }
    await this.find(owner, id);
    const row = await this.#db
      .updateTable('webhook_endpoints')
      .set(changes)
      .where('id', '=', uuidOrNil(id))
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new EndpointNotFound(id);
    return endpointOf(row as EndpointRow);
  }

  /** Deletes the endpoint, its secrets and delivery log, and the deliveries still waiting for it. */
  async remove(owner: EndpointOwner, id: string): Promise<void> {
    const endpoint = await this.find(owner, id);
    await withTransaction(this.#db, async (tx) => {
      await sql`delete from outbox where topic = 'webhook.delivery'
        and payload->>'endpointId' = ${endpoint.id}`.execute(tx);
      await tx.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
    });
  }

  /**
   * A new secret; the current one keeps signing for `overlapSeconds` (default a day), so that the receiver can
   * verify with either while it moves to the new one (0 retires it at once). Any older secret still overlapping is
   * retired now: at most two sign at any time, and expired ones are deleted.
   */
  async rotateSecret(
    owner: EndpointOwner,
    id: string,
    overlapSeconds: number | undefined,
    now: Date,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string; previousExpireAt: Date }> {
    const overlap = overlapSeconds ?? ROTATION_OVERLAP_DEFAULT_SECONDS;
    if (!Number.isSafeInteger(overlap) || overlap < 0 || overlap > ROTATION_OVERLAP_MAX_SECONDS)
      throw new InputError(
        `overlap_seconds must be a whole number from 0 to ${ROTATION_OVERLAP_MAX_SECONDS} (seven days).`,
        { field: 'overlap_seconds' },
      );
    const endpoint = await this.find(owner, id);
    const previousExpireAt = new Date(now.getTime() + overlap * 1000);
    const secret = await withTransaction(this.#db, async (tx) => {
      await sql`select id from webhook_endpoints where id = ${endpoint.id} for update`.execute(tx);
      await sql`delete from webhook_secrets where endpoint_id = ${endpoint.id}
        and expires_at is not null and expires_at <= ${now.toISOString()}::timestamptz`.execute(tx);
      await sql`update webhook_secrets set expires_at = ${now.toISOString()}::timestamptz
        where endpoint_id = ${endpoint.id} and expires_at is not null`.execute(tx);
      await sql`update webhook_secrets set expires_at = ${previousExpireAt.toISOString()}::timestamptz
        where endpoint_id = ${endpoint.id} and expires_at is null`.execute(tx);
      return this.#addSecret(tx, endpoint.id, now);
    });
    return { endpoint, secret, previousExpireAt };
  }

  /** The endpoint's secrets, opened from their sealed form (in base64, as the delivery's query reads them). */
  openSecrets(endpointId: string, sealedBase64: readonly string[]): string[] {
    return sealedBase64.map((sealed) => this.#secrets.open(endpointId, Buffer.from(sealed, 'base64')));
  }

  /** The URL as it will be called, or an InputError saying what is wrong with it. */
  checkUrl(value: string | undefined): string {
    if (value === undefined || value.trim() === '')
      throw new InputError('url is required: where the events are sent.', { field: 'url' });
    if (value.length > URL_LENGTH_MAX)
      throw new InputError(`url must be at most ${URL_LENGTH_MAX} characters.`, { field: 'url' });
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InputError(`url ${JSON.stringify(value)} is not an absolute URL.`, { field: 'url' });
    }
    const allowed = this.#config.requireHttps ? ['https:'] : ['https:', 'http:'];
    if (!allowed.includes(url.protocol))
      throw new InputError(
        `url must start with ${allowed.map((p) => `${p}//`).join(' or ')}${this.#config.requireHttps ? ' (this server sends webhooks over TLS only)' : ''}.`,
        { field: 'url' },
      );
    if (url.username || url.password)
      throw new InputError('url must not carry a user name or password; authenticate by the signature.', {
        field: 'url',
      });
    if (value.includes('#')) throw new InputError('url must not have a #fragment.', { field: 'url' });
    if (url.port === '0') throw new InputError('url must not name port 0.', { field: 'url' });
    const host = url.hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    if (!this.#config.allowPrivateAddresses && (isLocalName(host) || (isIP(host) && isPrivateAddress(host))))
      throw new InputError(
        'url must be a public address: this server does not call loopback or private networks.',
        {
          field: 'url',
        },
      );
    // Checked again as it will be stored: the URL's own encoding can make it longer than what was sent.
    if (url.href.length > URL_LENGTH_MAX)
      throw new InputError(`url must be at most ${URL_LENGTH_MAX} characters once encoded.`, {
        field: 'url',
      });
    return url.href;
  }

  async #addSecret(tx: Tx, endpointId: string, now: Date): Promise<string> {
    const secret = newWebhookSecret();
    await tx
      .insertInto('webhook_secrets')
      .values({
        id: randomUUID(),
        endpoint_id: endpointId,
        sealed: this.#secrets.seal(endpointId, secret),
        created_at: now,
      })
      .execute();
    return secret;
  }
}

/** Names that are this host by convention (the rest is found when the name is resolved for each delivery). */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain';
}

function checkDescription(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (value.length > DESCRIPTION_LENGTH_MAX)
    throw new InputError(`description must be at most ${DESCRIPTION_LENGTH_MAX} characters.`, {
      field: 'description',
    });
  return value;
}

function checkEventTypes(value: readonly string[] | null | undefined): WebhookEventType[] | null {
  if (value === undefined || value === null) return null;
  if (value.length === 0)
    throw new InputError('event_types must name at least one type, or be left out for every type.', {
      field: 'event_types',
    });
  const unknown = value.filter((type) => !isWebhookEventType(type));
  if (unknown.length > 0)
    throw new InputError(
      `event_types has unknown types (${unknown.slice(0, 3).join(', ')}); known: ${EVENT_TYPE_NAMES.join(', ')}.`,
      { field: 'event_types' },
    );
  return [...new Set(value)] as WebhookEventType[];
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** An id that is no UUID names nothing: the lookup finds no row instead of failing on the cast. */
export function uuidOrNil(id: string): string {
  return isUuid(id) ? id.toLowerCase() : NIL_UUID;
}
