import { type CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import { PLANNED_EACH_CALL } from '../db/prepared-pool.ts';
import type { DB } from '../db/schema.ts';
import { type KeyedRequest, keyReused, type StoredResponse } from './keyed-work.ts';

/** The SQL of idempotency keys (table idempotency_keys), for one request or a batch of them. */

export interface KeyRow {
  request_hash: string;
  response_status: number;
  response_body: string;
  expires_at: Date;
}

/** What holding a key found, one row per request in the order given. */
export interface HoldRow {
  locked: boolean;
  request_hash: string | null;
  response_status: number;
  response_body: string;
  expires_at: Date | null;
}

/**
 * True in SQL once request `n` (1-based) of the transaction holds its key and the key has no live answer: the
 * condition a request's reads put on themselves, so that a request that will not run locks nothing.
 */
export function freshRequest(n: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${n}::text = any(string_to_array(current_setting('ewa.fresh_requests', true), ','))`;
}

/**
 * Takes each request's key for this transaction (a transaction-scoped advisory lock, tried, never waited for),
 * reads its stored answer and, once the key is held, forgets that answer if it has expired: the request is new.
 * Marks the fresh requests (key held, no live answer) for `freshRequest`, sets the transaction's
 * `idle_in_transaction_session_timeout` to `lockMs`, and makes the statements after it in the transaction keep their
 * generic plans (what GENERIC_PLANS in db/prepared-pool.ts does, without a statement of its own). Each lock is taken
 * in a CTE that both the delete and the answer read, so it is taken exactly once; the delete's snapshot is the statement's, so the answer returned is the
 * row as it was before it was forgotten. The delete names the rows it read (by ctid), so a row a retry replaced
 * meanwhile is not the row read and stays.
 *
 * It is planned on every call (PLANNED_EACH_CALL): a plan kept from when the table was empty (a hash join over it,
 * a scan for the rows to delete) grew slower with every answer stored. Each plan knows how many keys it holds and
 * how large the table is now, so it looks the keys up by primary key and deletes the rows it read by address.
 */
export function holdKeysStatement(
  db: Kysely<DB>,
  requests: readonly KeyedRequest[],
  lockMs: number,
): CompiledQuery {
  const scopes = requests.map((request) => request.scope);
  const keys = requests.map((request) => request.key);
  const nows = requests.map((request) => request.now.toISOString());
  return sql`${sql.raw(PLANNED_EACH_CALL)} with r as (select * from unnest(${scopes}::text[], ${keys}::text[], ${nows}::timestamptz[])
        with ordinality as r(scope, key, now, n)),
      h as materialized (
        select r.n, r.now, pg_try_advisory_xact_lock(hashtextextended(r.scope || ' ' || r.key, 0)) as locked,
          k.ctid as row_id, k.request_hash, k.response_status, k.response_body, k.expires_at
        from r left join idempotency_keys k on k.scope = r.scope and k.key = r.key),
      forgotten as (delete from idempotency_keys k
        where k.ctid = any(array(select h.row_id from h where h.locked and h.expires_at <= h.now)))
    select set_config('idle_in_transaction_session_timeout', ${String(lockMs)}, true) as idle_limit,
      set_config('plan_cache_mode', 'force_generic_plan', true) as plan_cache_mode,
      set_config('ewa.fresh_requests', (select coalesce(string_agg(f.n::text, ','), '') from h f
        where f.locked and (f.expires_at is null or f.expires_at <= f.now)), true) as fresh,
      h.locked, h.request_hash, h.response_status, h.response_body, h.expires_at
    from h order by h.n`.compile(db);
}

/** The answers, stored with the requests' effects; a live answer under one of the keys fails it (isKeyAnswered). */
export function insertAnswersStatement(
  db: Kysely<DB>,
  answered: readonly { request: KeyedRequest; answer: StoredResponse }[],
  ttlMs: number,
): CompiledQuery {
  const column = <T>(pick: (entry: { request: KeyedRequest; answer: StoredResponse }) => T) =>
    answered.map(pick);
  return sql`insert into idempotency_keys (scope, key, request_hash, response_status, response_body, created_at,
      expires_at)
    select * from unnest(${column((e) => e.request.scope)}::text[], ${column((e) => e.request.key)}::text[],
      ${column((e) => e.request.fingerprint)}::text[], ${column((e) => e.answer.status)}::integer[],
      ${column((e) => e.answer.body)}::text[], ${column((e) => e.request.now.toISOString())}::timestamptz[],
      ${column((e) => expiresAt(e.request, ttlMs))}::timestamptz[])`.compile(db);
}

export function expiresAt(request: KeyedRequest, ttlMs: number): string {
  return new Date(request.now.getTime() + ttlMs).toISOString();
}

/** The request's live answer, if its key has one. */
export async function readAnswer(runner: Kysely<DB>, request: KeyedRequest): Promise<KeyRow | undefined> {
  const { rows } = await sql<KeyRow>`select request_hash, response_status, response_body, expires_at
    from idempotency_keys where scope = ${request.scope} and key = ${request.key}
      and expires_at > ${request.now.toISOString()}::timestamptz`.execute(runner);
  return rows[0];
}

/**
 * How long a request whose session was lost looks for an answer its transaction may have committed before the loss:
 * bounded, so that a database that stopped answering does not add another wait for a connection to the request.
 */
export const READ_BACK_MS = 1000;

/**
 * The live answer stored under the request's key, if the database gives it within READ_BACK_MS; undefined when it
 * does not, or fails. A read still waiting then ends on its own (the pool's connect timeout bounds it).
 */
export function readAnswerSoon(runner: Kysely<DB>, request: KeyedRequest): Promise<KeyRow | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, READ_BACK_MS, undefined);
  });
  const read = readAnswer(runner, request).catch(() => undefined);
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** The answer could not be stored: a live answer is under the key already. */
export function isKeyAnswered(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'idempotency_keys_pkey';
}

/** The stored answer for this request; INVALID_IDEMPOTENCY_KEY when it answered another body. */
export function answerOf(row: KeyRow, request: KeyedRequest): StoredResponse {
  if (row.request_hash !== request.fingerprint) throw keyReused();
  return { status: row.response_status, body: row.response_body };
}

/** The live answer a held key already has, if any (replayed, or INVALID_IDEMPOTENCY_KEY). */
export function liveAnswer(hold: HoldRow, request: KeyedRequest): StoredResponse | undefined {
  if (hold.request_hash === null || hold.expires_at === null || new Date(hold.expires_at) <= request.now)
    return undefined;
  return answerOf(hold as KeyRow, request);
}
