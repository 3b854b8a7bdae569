import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { AppError } from '../errors/app-error.ts';

/** An answer kept under an idempotency key: replayed byte for byte. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** One request under its key: who sent it (the scope), the key, and what it asked (the fingerprint). */
export interface KeyedRequest {
  scope: string;
  key: string;
  fingerprint: string;
  now: Date;
}

export interface IdempotencyOptions {
  ttlMs: number;
  /** The holding transaction is ended by PostgreSQL once it has sat idle this long (its process stopped answering). */
  lockMs: number;
}

interface KeyRow {
  request_hash: string;
  response_status: number;
  response_body: string;
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

const keyLocked = () => new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
const keyReused = () =>
  new AppError('INVALID_IDEMPOTENCY_KEY', {
    detail: 'This Idempotency-Key was used for a different request; send a new key for a new request.',
    source: { header: 'Idempotency-Key' },
  });

/** Another request with this key stored its answer first. */
class KeyTaken extends Error {
  override name = 'KeyTaken';
}

/**
 * Idempotency keys of POST requests (table idempotency_keys), scoped to the caller. A key is held by the
 * transaction that runs its request: the first statement takes a transaction-scoped advisory lock on the key
 * (another request with the key meanwhile is 409 IDEMPOTENCY_KEY_LOCKED) and reads any stored answer (replayed
 * when the body is the same, INVALID_IDEMPOTENCY_KEY when not); the answer is stored by the same transaction that
 * writes the request's effects. So an answer and its effects commit together or not at all, and a process that
 * dies mid-request leaves nothing behind: PostgreSQL rolls its transaction back and frees the key. A request whose
 * process stops answering is ended by the database: the first statement sets `idle_in_transaction_session_timeout`
 * for its own transaction to `lockMs` (EWA_IDEMPOTENCY_LOCK_SECONDS). The stored row is the last word: if two requests ever ran at once (a key's
 * answer committed between another's read and its lock), the second finds a live answer when it stores its own,
 * rolls back, and answers what the first stored.
 */
export class IdempotencyKeys {
  readonly #db: Db;
  readonly #options: IdempotencyOptions;

  constructor(db: Db, options: IdempotencyOptions) {
    this.#db = db;
    this.#options = options;
  }

  /**
   * Runs `work` once per key: in one transaction with the key held, its answer stored with its effects. A refusal
   * (an AppError below 500) rolls its transaction back and is stored on its own, so that a retry gets it again.
   */
  async run(
    request: KeyedRequest,
    work: (tx: Tx) => Promise<StoredResponse>,
    refusal: (error: AppError) => StoredResponse,
  ): Promise<StoredResponse> {
    let held = false;
    try {
      return await withTransaction(this.#db, async (tx) => {
        const stored = await this.#hold(tx, request);
        if (stored) return stored;
        held = true;
        const answer = await work(tx);
        await this.#store(tx, request, answer);
        return answer;
      });
    } catch (error) {
      if (held && error instanceof AppError && error.status < 500)
        return this.#storeAlone(request, refusal(error));
      if (held) {
        // Another request with this key answered first (or this one was cut off): answer what it stored.
        const stored = await this.#read(request);
        if (stored) return this.#answerOf(stored, request);
        if (error instanceof KeyTaken) throw keyLocked();
      }
      throw error;
    }
  }

  /** Takes the key for this transaction and reads its stored answer, if any; an expired answer is forgotten. */
  async #hold(tx: Tx, request: KeyedRequest): Promise<StoredResponse | undefined> {
    const { scope, key } = request;
    const { rows } = await sql<KeyRow & { locked: boolean }>`select
        set_config('idle_in_transaction_session_timeout', ${String(this.#options.lockMs)}, true) as idle_limit,
        pg_try_advisory_xact_lock(hashtextextended(${scope} || ' ' || ${key}, 0)) as locked,
        k.request_hash, k.response_status, k.response_body, k.expires_at
      from (select 1) as one
        left join idempotency_keys k on k.scope = ${scope} and k.key = ${key}`.execute(tx);
    const row = rows[0];
    if (!row?.locked) throw keyLocked();
    // An expired answer is forgotten: the request is new, and storing its answer replaces the old one.
    if (row.request_hash === null || new Date(row.expires_at) <= request.now) return undefined;
    return this.#answerOf(row, request);
  }

  #answerOf(row: KeyRow, request: KeyedRequest): StoredResponse {
    if (row.request_hash !== request.fingerprint) throw keyReused();
    return { status: row.response_status, body: row.response_body };
  }

  async #read(request: KeyedRequest): Promise<KeyRow | undefined> {
    const { rows } = await sql<KeyRow>`select request_hash, response_status, response_body, expires_at
      from idempotency_keys where scope = ${request.scope} and key = ${request.key}
        and expires_at > ${request.now.toISOString()}::timestamptz`.execute(this.#db);
    return rows[0];
  }

  /** Stores the answer, over an expired one; throws KeyTaken when a live answer is there already. */
  async #store(runner: Tx | Db, request: KeyedRequest, answer: StoredResponse): Promise<void> {
    const now = request.now.toISOString();
    const expiresAt = new Date(request.now.getTime() + this.#options.ttlMs).toISOString();
    const { rows } = await sql`insert into idempotency_keys as k (scope, key, request_hash, response_status,
        response_body, created_at, expires_at)
      values (${request.scope}, ${request.key}, ${request.fingerprint}, ${answer.status}, ${answer.body},
        ${now}::timestamptz, ${expiresAt}::timestamptz)
      on conflict (scope, key) do update set request_hash = excluded.request_hash,
        response_status = excluded.response_status, response_body = excluded.response_body,
        created_at = excluded.created_at, expires_at = excluded.expires_at
        where k.expires_at <= ${now}::timestamptz
      returning k.key`.execute(runner);
    if (rows.length !== 1)
      throw new KeyTaken(`idempotency key ${request.key} of ${request.scope} is answered`);
  }

  /** A refusal wrote nothing, so its answer is stored alone; if a retry stored one meanwhile, that one stands. */
  async #storeAlone(request: KeyedRequest, answer: StoredResponse): Promise<StoredResponse> {
    try {
      await this.#store(this.#db, request, answer);
      return answer;
    } catch (error) {
      if (!(error instanceof KeyTaken)) throw error;
      const stored = await this.#read(request);
      if (!stored) throw keyLocked();
      return this.#answerOf(stored, request);
    }
  }
}

/** Forgets the answers whose keys have expired (a scheduled job). */
export async function purgeExpiredKeys(db: Db, now: Date): Promise<number> {
  const result = await sql`delete from idempotency_keys
    where expires_at <= ${now.toISOString()}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
