import { createHash } from 'node:crypto';
import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { type BatchOutcome, firstFailure, rowsOf, runBatch } from '../db/statement-batch.ts';
import { AppError } from '../errors/app-error.ts';
import { KeyedBatcher, type KeyedBatchOptions, type KeyedItem, keyLocked, keyReused } from './keyed-batch.ts';

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
  /** Keyed requests that arrive together share one transaction, this many at most (keyed-batch.ts); 1 turns it off. */
  batchSizeMax: number;
  /** Transactions of keyed requests (alone or batched) in flight at once in this process. */
  inFlightMax: number;
  onBatch?: KeyedBatchOptions['onBatch'];
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

/**
 * True in SQL, inside the transaction of a keyed request, once that request holds its key and the key has no live
 * answer: the condition a request's reads put on themselves, so that a request that will not run locks nothing.
 */
const KEY_FRESH = sql`current_setting('ewa.key_fresh', true) = 'true'`;

/** A request's work in two round trips: its reads, sent with the key's hold; then its writes, sent with the answer. */
export interface KeyedWork {
  /** Statements sent in the round trip that holds the key; each should read and lock nothing unless `keyFresh`. */
  reads(keyFresh: RawBuilder<unknown>): CompiledQuery[];
  /**
   * From what the reads returned (one outcome each), the answer and the statements that write the request's
   * effects; these are sent with the answer and COMMIT. `runner` is the request's transaction, for what a rare path
   * must read on its own. Throws an AppError below 500 to refuse.
   */
  decide(
    outcomes: readonly BatchOutcome[],
    runner: Kysely<DB>,
  ): Promise<{ answer: StoredResponse; writes: CompiledQuery[] }>;
  /** The refusal that a failure of the writes stands for (a conflict the reads could not see), if it is one. */
  refusalOf(error: unknown): AppError | undefined;
}

interface HoldRow extends KeyRow {
  locked: boolean;
}

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/**
 * Idempotency keys of POST requests (table idempotency_keys), scoped to the caller. A key is held by the
 * transaction that runs its request, and the request costs two round trips to the database (statement batches):
 *   1. BEGIN; hold the key in one statement: a transaction-scoped advisory lock (another request with the key
 *      meanwhile is 409 IDEMPOTENCY_KEY_LOCKED), any stored answer (replayed when the body is the same,
 *      INVALID_IDEMPOTENCY_KEY when not), and an expired answer forgotten; the work's reads, which do nothing unless
 *      the key is fresh;
 *   2. the work's writes, the answer, COMMIT.
 * So an answer and its effects commit together or not at all, and a process that dies mid-request leaves nothing
 * behind: PostgreSQL rolls its transaction back and frees the key. A request whose process stops answering is
 * ended by the database: the hold sets `idle_in_transaction_session_timeout` for its own transaction to `lockMs`
 * (EWA_IDEMPOTENCY_LOCK_SECONDS). The stored row is the last word: if two requests ever ran at once (a key's answer
 * committed between another's read and its lock), the second's answer fails on the key's primary key, its
 * transaction rolls back, and it answers what the first stored.
 */
export class IdempotencyKeys {
  readonly #db: Db;
  readonly #options: IdempotencyOptions;
  readonly #batcher: KeyedBatcher;

  constructor(db: Db, options: IdempotencyOptions) {
    this.#db = db;
    this.#options = options;
    this.#batcher = new KeyedBatcher(
      db,
      {
        lockMs: options.lockMs,
        ttlMs: options.ttlMs,
        sizeMax: options.batchSizeMax,
        inFlightMax: options.inFlightMax,
        ...(options.onBatch ? { onBatch: options.onBatch } : {}),
      },
      (item: KeyedItem) =>
        this.#runAlone(item.request, item.work, item.refusal).then(item.resolve, item.reject),
    );
  }

  /**
   * Runs `work` once per key: in one transaction with the key held, its answer stored with its effects. A refusal
   * (an AppError below 500) writes nothing but its answer, so that a retry gets it again. Requests that arrive
   * while others are in flight share a transaction (keyed-batch.ts), with the same guarantees.
   */
  run(
    request: KeyedRequest,
    work: KeyedWork,
    refusal: (error: AppError) => StoredResponse,
  ): Promise<StoredResponse> {
    return this.#batcher.submit(request, work, refusal);
  }

  /** One request in a transaction of its own; a refusal rolls it back and is stored on its own. */
  async #runAlone(
    request: KeyedRequest,
    work: KeyedWork,
    refusal: (error: AppError) => StoredResponse,
  ): Promise<StoredResponse> {
    try {
      return await this.#db.connection().execute(async (connection) => {
        const outcome = await this.#attempt(connection, request, work);
        if (outcome.kind === 'answer') return outcome.answer;
        if (outcome.kind === 'refused') return this.#storeAlone(connection, request, refusal(outcome.error));
        // Another request with this key answered first: answer what it stored.
        const stored = await this.#read(connection, request);
        if (!stored) throw keyLocked();
        return this.#answerOf(stored, request);
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      // This request was cut off (its session ended, say): if its key was answered, by it or by a retry, answer that.
      const stored = await this.#read(this.#db, request).catch(() => undefined);
      if (stored) return this.#answerOf(stored, request);
      throw error;
    }
  }

  /** The request's transaction, from BEGIN to its end; it is never left open. */
  async #attempt(
    connection: Kysely<DB>,
    request: KeyedRequest,
    work: KeyedWork,
  ): Promise<
    | { kind: 'answer'; answer: StoredResponse }
    | { kind: 'refused'; error: AppError }
    | { kind: 'answered-elsewhere' }
  > {
    let open = true;
    try {
      const held = await runBatch(connection, [
        BEGIN,
        this.#holdStatement(request),
        ...work.reads(KEY_FRESH),
      ]);
      const failure = firstFailure(held);
      if (failure) throw failure;
      const hold = rowsOf<HoldRow>(held[1])[0];
      if (!hold?.locked) throw keyLocked();
      if (hold.request_hash !== null && new Date(hold.expires_at) > request.now)
        return { kind: 'answer', answer: this.#answerOf(hold, request) };
      let decision: Awaited<ReturnType<KeyedWork['decide']>>;
      try {
        decision = await work.decide(held.slice(2), connection);
      } catch (error) {
        if (error instanceof AppError && error.status < 500) return { kind: 'refused', error };
        throw error;
      }
      const written = await runBatch(connection, [
        ...decision.writes,
        this.#insertAnswerStatement(request, decision.answer),
        COMMIT,
      ]);
      open = false; // the COMMIT ended the transaction: committed, or rolled back if a statement before it failed
      const writeFailure = firstFailure(written);
      if (writeFailure === undefined) return { kind: 'answer', answer: decision.answer };
      if (isKeyAnswered(writeFailure)) return { kind: 'answered-elsewhere' };
      const refused = work.refusalOf(writeFailure);
      if (refused) return { kind: 'refused', error: refused };
      throw writeFailure;
    } finally {
      if (open) await runBatch(connection, [ROLLBACK]);
    }
  }

  /**
   * Takes the key for this transaction, reads its stored answer and, once the key is held, forgets that answer if
   * it has expired: the request is new. Marks the transaction KEY_FRESH when the key is held and has no live answer.
   * The lock is taken in a CTE that both the delete and the answer read, so it is taken exactly once; the delete's
   * snapshot is the statement's, so the answer returned is the row as it was before it was forgotten.
   */
  #holdStatement(request: KeyedRequest): CompiledQuery {
    const { scope, key } = request;
    const now = request.now.toISOString();
    return sql`with h as materialized (
        select pg_try_advisory_xact_lock(hashtextextended(${scope} || ' ' || ${key}, 0)) as locked,
          k.request_hash, k.response_status, k.response_body, k.expires_at
        from (select 1) as one left join idempotency_keys k on k.scope = ${scope} and k.key = ${key}),
      forgotten as (delete from idempotency_keys k using h
        where h.locked and k.scope = ${scope} and k.key = ${key} and k.expires_at <= ${now}::timestamptz)
      select set_config('idle_in_transaction_session_timeout', ${String(this.#options.lockMs)}, true) as idle_limit,
        set_config('ewa.key_fresh', (h.locked and (h.expires_at is null
          or h.expires_at <= ${now}::timestamptz))::text, true) as fresh,
        h.locked, h.request_hash, h.response_status, h.response_body, h.expires_at
      from h`.compile(this.#db);
  }

  /** The answer, stored with the request's effects; a live answer under the key fails it (isKeyAnswered). */
  #insertAnswerStatement(request: KeyedRequest, answer: StoredResponse): CompiledQuery {
    return sql`insert into idempotency_keys (scope, key, request_hash, response_status, response_body, created_at,
        expires_at)
      values (${request.scope}, ${request.key}, ${request.fingerprint}, ${answer.status}, ${answer.body},
        ${request.now.toISOString()}::timestamptz, ${this.#expiresAt(request)}::timestamptz)`.compile(
      this.#db,
    );
  }

  #expiresAt(request: KeyedRequest): string {
    return new Date(request.now.getTime() + this.#options.ttlMs).toISOString();
  }

  #answerOf(row: KeyRow, request: KeyedRequest): StoredResponse {
    if (row.request_hash !== request.fingerprint) throw keyReused();
    return { status: row.response_status, body: row.response_body };
  }

  async #read(runner: Kysely<DB>, request: KeyedRequest): Promise<KeyRow | undefined> {
    const { rows } = await sql<KeyRow>`select request_hash, response_status, response_body, expires_at
      from idempotency_keys where scope = ${request.scope} and key = ${request.key}
        and expires_at > ${request.now.toISOString()}::timestamptz`.execute(runner);
    return rows[0];
  }

  /**
   * A refusal wrote nothing, so its answer is stored alone, over an expired one; if a retry stored a live one
   * meanwhile, that one stands.
   */
  async #storeAlone(
    runner: Kysely<DB>,
    request: KeyedRequest,
    answer: StoredResponse,
  ): Promise<StoredResponse> {
    const now = request.now.toISOString();
    const { rows } = await sql`insert into idempotency_keys as k (scope, key, request_hash, response_status,
        response_body, created_at, expires_at)
      values (${request.scope}, ${request.key}, ${request.fingerprint}, ${answer.status}, ${answer.body},
        ${now}::timestamptz, ${this.#expiresAt(request)}::timestamptz)
      on conflict (scope, key) do update set request_hash = excluded.request_hash,
        response_status = excluded.response_status, response_body = excluded.response_body,
        created_at = excluded.created_at, expires_at = excluded.expires_at
        where k.expires_at <= ${now}::timestamptz
      returning k.key`.execute(runner);
    if (rows.length === 1) return answer;
    const stored = await this.#read(runner, request);
    if (!stored) throw keyLocked();
    return this.#answerOf(stored, request);
  }
}

/** The answer could not be stored: a live answer is under the key already. */
function isKeyAnswered(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'idempotency_keys_pkey';
}

/** Forgets the answers whose keys have expired (a scheduled job). */
export async function purgeExpiredKeys(db: Db, now: Date): Promise<number> {
  const result = await sql`delete from idempotency_keys
    where expires_at <= ${now.toISOString()}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
