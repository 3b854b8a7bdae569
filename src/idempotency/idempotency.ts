import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { DatabaseUnavailableError } from '../db/database-unavailable.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import {
  answerOf,
  expiresAt,
  isKeyAnswered,
  liveAnswer,
  readAnswer,
  readAnswerSoon,
} from './idempotency-store.ts';
import { KeyedBatcher, type KeyedItem } from './keyed-batch.ts';
import { holdAndRead, rollback, writeAndCommit } from './keyed-transaction.ts';
import {
  type IdempotencyOptions,
  type KeyedRequest,
  type KeyedWork,
  keyLocked,
  type StoredResponse,
} from './keyed-work.ts';

/**
 * What a request asked, whatever spelling of its URL reached the route: the route's path (`/rest/transfers`, not
 * `/%72est/transfers`), then its query parameters in order of name, then its body with members in order of name.
 */
export function routeTarget(routeUrl: string, query: unknown): string {
  const entries = Object.entries((query ?? {}) as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  if (entries.length === 0) return routeUrl;
  return `${routeUrl}?${new URLSearchParams(entries.map(([name, value]): [string, string] => [name, String(value)])).toString()}`;
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** The same request is the same JSON whatever its key order or spacing. */
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
 * Idempotency keys of POST requests (table idempotency_keys), scoped to the caller. A key is held by the
 * transaction that runs its request, and the request costs two round trips to the database (statement batches):
 *   1. BEGIN; hold the key in one statement: a transaction-scoped advisory lock (another request with the key
 *      meanwhile is 409 IDEMPOTENCY_KEY_LOCKED), any stored answer (replayed when the body is the same,
 *      INVALID_IDEMPOTENCY_KEY when not), and an expired answer forgotten; the work's reads, which do nothing unless
 *      the key is fresh, with the plans they keep (generic ones, set by the hold);
 *   2. the work's writes, the answer, COMMIT.
 * So an answer and its effects commit together or not at all, and a process that dies mid-request leaves nothing
 * behind: PostgreSQL rolls its transaction back and frees the key. A request whose process stops answering is
 * ended by the database: the hold sets `idle_in_transaction_session_timeout` for its own transaction to `lockMs`
 * (EWA_IDEMPOTENCY_LOCK_SECONDS). The stored row is the last word: if two requests ever ran at once (a key's answer
 * committed between another's read and its lock), the second's answer fails on the key's primary key, its
 * transaction rolls back, and it answers what the first stored. Under load, requests share these transactions
 * (keyed-batch.ts).
 */
export class IdempotencyKeys {
  readonly #db: Db;
  readonly #options: IdempotencyOptions;
  readonly #batcher: KeyedBatcher;

  constructor(db: Db, options: IdempotencyOptions) {
    this.#db = db;
    this.#options = options;
    this.#batcher = new KeyedBatcher(db, options, (item: KeyedItem) =>
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
        const stored = await readAnswer(connection, request);
        if (!stored) throw keyLocked();
        return answerOf(stored, request);
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      // No connection was had: nothing ran, and another wait for one would only double the time to the 503.
      if (error instanceof DatabaseUnavailableError) throw error;
      // This request was cut off (its session ended, say): if its key was answered, by it or by a retry, answer that.
      const stored = await readAnswerSoon(this.#db, request);
      if (stored) return answerOf(stored, request);
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
      const held = await holdAndRead(
        connection,
        this.#db,
        work.kind,
        [request],
        [work.plan],
        this.#options.lockMs,
      );
      if (!held.ok) throw held.failure;
      const hold = held.holds[0];
      if (!hold) throw keyLocked();
      // A committed answer is final, whether or not this request holds the key: another retry holding it meanwhile
      // only replays it too.
      const live = liveAnswer(hold, request);
      if (live) return { kind: 'answer', answer: live };
      if (!hold.locked) throw keyLocked();
      let decision: Awaited<ReturnType<KeyedWork['decide']>>;
      try {
        decision = await work.decide(held.reads, connection);
      } catch (error) {
        if (error instanceof AppError && error.status < 500) return { kind: 'refused', error };
        throw error;
      }
      const writeFailure = await writeAndCommit(
        connection,
        this.#db,
        work.kind,
        decision.write === undefined ? [] : [decision.write],
        [{ request, answer: decision.answer }],
        this.#options.ttlMs,
      );
      open = false; // the COMMIT ended the transaction: committed, or rolled back if a statement before it failed
      if (writeFailure === undefined) return { kind: 'answer', answer: decision.answer };
      if (isKeyAnswered(writeFailure)) return { kind: 'answered-elsewhere' };
      const refused = work.refusalOf(writeFailure);
      if (refused) return { kind: 'refused', error: refused };
      throw writeFailure;
    } finally {
      if (open) await rollback(connection);
    }
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
        ${now}::timestamptz, ${expiresAt(request, this.#options.ttlMs)}::timestamptz)
      on conflict (scope, key) do update set request_hash = excluded.request_hash,
        response_status = excluded.response_status, response_body = excluded.response_body,
        created_at = excluded.created_at, expires_at = excluded.expires_at
        where k.expires_at <= ${now}::timestamptz
      returning k.key`.execute(runner);
    if (rows.length === 1) return answer;
    const stored = await readAnswer(runner, request);
    if (!stored) throw keyLocked();
    return answerOf(stored, request);
  }
}

/** Forgets the answers whose keys have expired (a scheduled job). */
export async function purgeExpiredKeys(db: Db, now: Date): Promise<number> {
  const result = await sql`delete from idempotency_keys
    where expires_at <= ${now.toISOString()}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
