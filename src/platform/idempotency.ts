import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Tx } from '../db/transaction.ts';
import { AppError } from '../errors/app-error.ts';

/** An answer kept under an idempotency key: replayed byte for byte. */
export interface StoredResponse {
  status: number;
  body: string;
}

/**
 * A request's hold on its key. `lockedUntil` is the fencing token: every claim of a key sets a later one (a key is
 * taken over only once the previous lock has run out), so a request whose key was taken over cannot store its
 * answer, nor release the key, over the request that took it.
 */
export interface KeyClaim {
  scope: string;
  key: string;
  fingerprint: string;
  lockedUntil: string;
}

export type IdempotencyStart =
  | { kind: 'run'; claim: KeyClaim }
  | { kind: 'replay'; response: StoredResponse };

/**
 * Thrown inside the transaction of a request that lost its key to a retry, so that its effects roll back: the
 * retry is the one that runs. The request then answers what the key holds (`answerAfterLoss`).
 */
export class IdempotencyKeyLost extends Error {
  constructor(claim: KeyClaim) {
    super(`idempotency key ${claim.key} of ${claim.scope} was taken over by a retry`);
    this.name = 'IdempotencyKeyLost';
  }
}

export interface IdempotencyOptions {
  ttlMs: number;
  lockMs: number;
}

interface KeyRow {
  request_hash: string;
  state: 'IN_FLIGHT' | 'COMPLETE';
  response_status: number | null;
  response_body: string | null;
  locked_until: Date;
  expires_at: Date;
}

/** The same request is the same JSON whatever its key order or spacing. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotency keys of POST requests (table idempotency_keys), scoped to the caller. The first request with a key
 * claims it (IN_FLIGHT) in a statement of its own; its answer is stored by `complete`, inside the transaction that
 * writes its effects when it has any, so an answer and its effects are kept together or not at all. A process
 * that dies holding a key leaves it IN_FLIGHT with nothing written; after `lockMs` a retry may claim it again. A
 * request that was only slow, not dead, then finds its claim gone when it stores its answer, and its transaction
 * rolls back: one key, one effect.
 */
export class IdempotencyKeys {
  readonly #db: Db;
  readonly #options: IdempotencyOptions;

  constructor(db: Db, options: IdempotencyOptions) {
    this.#db = db;
    this.#options = options;
  }

  async start(scope: string, key: string, fingerprint: string, now: Date): Promise<IdempotencyStart> {
    const lockedUntil = new Date(now.getTime() + this.#options.lockMs).toISOString();
    const claim: KeyClaim = { scope, key, fingerprint, lockedUntil };
    const expiresAt = new Date(now.getTime() + this.#options.ttlMs).toISOString();
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await sql`insert into idempotency_keys (scope, key, request_hash, state, locked_until,
          created_at, expires_at)
        values (${scope}, ${key}, ${fingerprint}, 'IN_FLIGHT', ${lockedUntil}::timestamptz,
          ${now.toISOString()}::timestamptz, ${expiresAt}::timestamptz)
        on conflict (scope, key) do nothing returning key`.execute(this.#db);
      if (claimed.rows.length === 1) return { kind: 'run', claim };
      const { rows } = await sql<KeyRow>`select request_hash, state, response_status, response_body,
          locked_until, expires_at
        from idempotency_keys where scope = ${scope} and key = ${key}`.execute(this.#db);
      const row = rows[0];
      if (!row) continue;
      if (new Date(row.expires_at) <= now) {
        // An expired key is forgotten: the request is new.
        await sql`delete from idempotency_keys where scope = ${scope} and key = ${key}
          and expires_at <= ${now.toISOString()}::timestamptz`.execute(this.#db);
        continue;
      }
      if (row.request_hash !== fingerprint)
        throw new AppError('INVALID_IDEMPOTENCY_KEY', {
          detail: 'This Idempotency-Key was used for a different request; send a new key for a new request.',
          source: { header: 'Idempotency-Key' },
        });
      if (row.state === 'COMPLETE' && row.response_status !== null && row.response_body !== null)
        return { kind: 'replay', response: { status: row.response_status, body: row.response_body } };
      if (new Date(row.locked_until) > now)
        throw new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
      // The request that held the key died without an answer and without effects: take the key over.
      const taken = await sql`update idempotency_keys set locked_until = ${lockedUntil}::timestamptz
        where scope = ${scope} and key = ${key} and state = 'IN_FLIGHT'
          and locked_until = ${row.locked_until.toISOString()}::timestamptz returning key`.execute(this.#db);
      if (taken.rows.length === 1) return { kind: 'run', claim };
      throw new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
    }
    throw new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
  }

  /**
   * Stores the answer; pass the transaction that wrote the request's effects, or the database when none. Throws
   * IdempotencyKeyLost, storing nothing, when the claim is no longer the key's (a retry took it over).
   */
  async complete(runner: Tx | Db, claim: KeyClaim, response: StoredResponse): Promise<void> {
    const { rows } =
      await sql`update idempotency_keys set state = 'COMPLETE', response_status = ${response.status},
        response_body = ${response.body}
      where scope = ${claim.scope} and key = ${claim.key} and state = 'IN_FLIGHT'
        and locked_until = ${claim.lockedUntil}::timestamptz
      returning key`.execute(runner);
    if (rows.length !== 1) throw new IdempotencyKeyLost(claim);
  }

  /** What a request that lost its key answers: the stored answer of the retry that took it, else 409. */
  async answerAfterLoss(claim: KeyClaim): Promise<StoredResponse> {
    const { rows } =
      await sql<KeyRow>`select request_hash, state, response_status, response_body, locked_until,
        expires_at
      from idempotency_keys where scope = ${claim.scope} and key = ${claim.key}`.execute(this.#db);
    const row = rows[0];
    if (
      row?.state === 'COMPLETE' &&
      row.request_hash === claim.fingerprint &&
      row.response_status !== null &&
      row.response_body !== null
    )
      return { status: row.response_status, body: row.response_body };
    throw new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
  }

  /** Lets a key go unanswered (an unexpected failure), so that the client's retry runs again at once. */
  async release(claim: KeyClaim): Promise<void> {
    await sql`delete from idempotency_keys where scope = ${claim.scope} and key = ${claim.key}
      and state = 'IN_FLIGHT' and locked_until = ${claim.lockedUntil}::timestamptz`.execute(this.#db);
  }

  async purgeExpired(now: Date): Promise<number> {
    const result = await sql`delete from idempotency_keys
      where expires_at <= ${now.toISOString()}::timestamptz`.execute(this.#db);
    return Number(result.numAffectedRows ?? 0);
  }
}
