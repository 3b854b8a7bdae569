import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { type BatchOutcome, firstFailure, rowsOf, runBatch } from '../db/statement-batch.ts';
import { AppError } from '../errors/app-error.ts';
import type { KeyedRequest, KeyedWork, StoredResponse } from './idempotency.ts';

/** One keyed request waiting for, or in, a batch. */
export interface KeyedItem {
  request: KeyedRequest;
  work: KeyedWork;
  refusal: (error: AppError) => StoredResponse;
  resolve: (answer: StoredResponse) => void;
  reject: (error: unknown) => void;
}

export interface KeyedBatchOptions {
  lockMs: number;
  ttlMs: number;
  /** Requests in one transaction at most. */
  sizeMax: number;
  /** Batches of one process in flight at once; each holds one database connection. */
  inFlightMax: number;
  /** Told of each batch of two or more requests: how many, how long, and whether it committed. */
  onBatch?: (batch: { requests: number; ms: number; outcome: 'committed' | 'ran-alone' }) => void;
}

/** What a key's hold found for one request of a batch. */
interface HoldRow {
  n: number;
  locked: boolean;
  request_hash: string | null;
  response_status: number;
  response_body: string;
  expires_at: Date | null;
}

/** How a request of a batch ends: an answer to store (with the writes that go with it), or one already decided. */
type Verdict =
  | { kind: 'write'; answer: StoredResponse; writes: CompiledQuery[] }
  | { kind: 'done'; answer: StoredResponse }
  | { kind: 'failed'; error: unknown };

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/** A batch's reads stop at the first request whose reads failed: what they found cannot be trusted. */
class BatchAbandoned extends Error {}

/**
 * Group commit of keyed requests. Under load, the requests that arrive while a process's batches are in flight are
 * run together in one transaction: one BEGIN, one statement that holds every key, each request's reads, then each
 * request's writes, every answer in one statement, and one COMMIT, in two round trips for all of them. A commit
 * (its WAL flush) and a round trip cost more than an advance's own statements, so sharing them is most of the
 * database's work saved. A request that finds no batch in flight runs alone at once: a batch never waits to fill.
 *
 * Each request keeps every guarantee it has alone: its answer commits with its effects; a refusal writes nothing
 * but its answer; a busy key is 409 and a live answer is replayed. Two requests of one scope (one person) never
 * share a batch, nor run in two of this process's batches at once: each would read the person's money before the
 * other had taken any. Batches lock their people in the same order as every other money transaction, so they
 * never deadlock with each other. Whatever fails a batch as a whole (a statement error, a conflict one request's
 * checks could not see, a lost connection) rolls it back, and each of its requests then runs alone, where that
 * failure is answered as it would be without batching; a batch that did commit before its connection was lost is
 * found by those runs as stored answers, and replayed.
 */
export class KeyedBatcher {
  readonly #db: Db;
  readonly #options: KeyedBatchOptions;
  readonly #alone: (item: KeyedItem) => Promise<void>;
  readonly #waiting: KeyedItem[] = [];
  /**
   * Requests of this process by scope (in flight) and by scope and key (waiting or in flight). An entry older than
   * the lock time holds nothing: by then the database has ended a transaction that stopped answering, and a request
   * stuck in this process must not keep its person's other requests, or its key's retry, waiting for ever.
   */
  readonly #scopesInFlight = new Map<string, Hold>();
  readonly #keysHere = new Map<string, Hold>();
  #inFlight = 0;

  constructor(db: Db, options: KeyedBatchOptions, alone: (item: KeyedItem) => Promise<void>) {
    this.#db = db;
    this.#options = options;
    this.#alone = alone;
  }

  /**
   * Answers the request, alone or in a batch. A request whose key another request of this process holds (waiting or
   * running) is 409 IDEMPOTENCY_KEY_LOCKED at once, as it would be from the database's lock.
   */
  submit(request: KeyedRequest, work: KeyedWork, refusal: KeyedItem['refusal']): Promise<StoredResponse> {
    const keyHere = `${request.scope} ${request.key}`;
    if (this.#holds(this.#keysHere, keyHere)) return Promise.reject(keyLocked());
    const hold = { sinceMs: performance.now() };
    this.#keysHere.set(keyHere, hold);
    const answer = new Promise<StoredResponse>((resolve, reject) => {
      this.#waiting.push({ request, work, refusal, resolve, reject });
      this.#drain();
    });
    return answer.finally(() => release(this.#keysHere, keyHere, hold));
  }

  #holds(holds: Map<string, Hold>, name: string): boolean {
    const hold = holds.get(name);
    return hold !== undefined && performance.now() - hold.sinceMs < this.#options.lockMs;
  }

  #drain(): void {
    while (this.#inFlight < this.#options.inFlightMax) {
      const batch = this.#take();
      if (batch.length === 0) return;
      this.#inFlight++;
      const hold = { sinceMs: performance.now() };
      for (const item of batch) this.#scopesInFlight.set(item.request.scope, hold);
      const ran = batch.length === 1 ? this.#alone(batch[0]!) : this.#runBatch(batch);
      void ran.finally(() => {
        this.#inFlight--;
        for (const item of batch) release(this.#scopesInFlight, item.request.scope, hold);
        this.#drain();
      });
    }
  }

  /** The oldest waiting requests, one per scope and none of a scope in flight, up to a batch's size. */
  #take(): KeyedItem[] {
    const taken: KeyedItem[] = [];
    const scopes = new Set<string>();
    for (let i = 0; i < this.#waiting.length && taken.length < this.#options.sizeMax; ) {
      const item = this.#waiting[i]!;
      const { scope } = item.request;
      if (scopes.has(scope) || this.#holds(this.#scopesInFlight, scope)) {
        i++;
        continue;
      }
      scopes.add(scope);
      taken.push(item);
      this.#waiting.splice(i, 1);
    }
    return taken;
  }

  async #runBatch(items: readonly KeyedItem[]): Promise<void> {
    const startedMs = performance.now();
    let verdicts: Verdict[] | undefined;
    try {
      verdicts = await this.#db.connection().execute((connection) => this.#transaction(connection, items));
    } catch {
      verdicts = undefined;
    }
    this.#options.onBatch?.({
      requests: items.length,
      ms: performance.now() - startedMs,
      outcome: verdicts ? 'committed' : 'ran-alone',
    });
    if (!verdicts) {
      // The batch as a whole failed and wrote nothing: each request runs alone and meets that failure on its own.
      await Promise.all(items.map((item) => this.#alone(item)));
      return;
    }
    verdicts.forEach((verdict, i) => {
      const item = items[i]!;
      if (verdict.kind === 'failed') item.reject(verdict.error);
      else item.resolve(verdict.answer);
    });
  }

  /** The batch's transaction; undefined when it was rolled back and its requests must run alone. */
  async #transaction(connection: Kysely<DB>, items: readonly KeyedItem[]): Promise<Verdict[] | undefined> {
    let open = true;
    try {
      const reads = items.map((item, n) => item.work.reads(freshGuard(n)));
      const held = await runBatch(connection, [BEGIN, this.#holdStatement(items), ...reads.flat()]);
      if (firstFailure(held) !== undefined) return undefined;
      const holds = rowsOf<HoldRow>(held[1]);
      const verdicts: Verdict[] = [];
      let at = 2;
      for (const [n, item] of items.entries()) {
        const outcomes = held.slice(at, at + reads[n]!.length);
        at += reads[n]!.length;
        verdicts.push(await this.#decide(item, holds[n], outcomes, connection));
      }
      const writing = verdicts.flatMap((verdict, n) => (verdict.kind === 'write' ? [{ verdict, n }] : []));
      if (writing.length === 0) {
        await runBatch(connection, [ROLLBACK]);
        open = false;
        return verdicts;
      }
      const written = await runBatch(connection, [
        ...writing.flatMap(({ verdict }) => verdict.writes),
        this.#insertAnswersStatement(
          writing.map(({ verdict, n }) => ({ item: items[n]!, answer: verdict.answer })),
        ),
        COMMIT,
      ]);
      open = false; // the COMMIT ended the transaction: committed, or rolled back if a statement before it failed
      return firstFailure(written) === undefined ? verdicts : undefined;
    } catch (error) {
      if (error instanceof BatchAbandoned) return undefined;
      throw error;
    } finally {
      if (open) await runBatch(connection, [ROLLBACK]);
    }
  }

  /** One request's verdict from its key's hold and its reads, as IdempotencyKeys decides a request alone. */
  async #decide(
    item: KeyedItem,
    hold: HoldRow | undefined,
    outcomes: readonly BatchOutcome[],
    connection: Kysely<DB>,
  ): Promise<Verdict> {
    const { request } = item;
    if (!hold?.locked) return { kind: 'failed', error: keyLocked() };
    if (hold.request_hash !== null && hold.expires_at !== null && new Date(hold.expires_at) > request.now) {
      if (hold.request_hash !== request.fingerprint) return { kind: 'failed', error: keyReused() };
      return { kind: 'done', answer: { status: hold.response_status, body: hold.response_body } };
    }
    try {
      const { answer, writes } = await item.work.decide(outcomes, connection);
      return { kind: 'write', answer, writes };
    } catch (error) {
      if (error instanceof AppError && error.status < 500)
        return { kind: 'write', answer: item.refusal(error), writes: [] };
      // Not a refusal: a failed read, or a fault. Alone, the request meets it again and answers it as it would.
      throw new BatchAbandoned();
    }
  }

  /**
   * Holds every key of the batch for its transaction, as IdempotencyKeys holds one (see there), and marks which
   * requests are fresh (their key held and without a live answer) for their reads' guards.
   */
  #holdStatement(items: readonly KeyedItem[]): CompiledQuery {
    const scopes = items.map((item) => item.request.scope);
    const keys = items.map((item) => item.request.key);
    const nows = items.map((item) => item.request.now.toISOString());
    return sql`with r as (select * from unnest(${scopes}::text[], ${keys}::text[], ${nows}::timestamptz[])
          with ordinality as r(scope, key, now, n)),
        h as materialized (
          select r.n, r.scope, r.key, r.now,
            pg_try_advisory_xact_lock(hashtextextended(r.scope || ' ' || r.key, 0)) as locked,
            k.request_hash, k.response_status, k.response_body, k.expires_at
          from r left join idempotency_keys k on k.scope = r.scope and k.key = r.key),
        forgotten as (delete from idempotency_keys k using h
          where h.locked and k.scope = h.scope and k.key = h.key and k.expires_at <= h.now)
      select set_config('idle_in_transaction_session_timeout', ${String(this.#options.lockMs)}, true) as idle_limit,
        set_config('ewa.fresh_requests', (select coalesce(string_agg(f.n::text, ','), '') from h f
          where f.locked and (f.expires_at is null or f.expires_at <= f.now)), true) as fresh,
        (h.n - 1)::integer as n, h.locked, h.request_hash, h.response_status, h.response_body, h.expires_at
      from h order by h.n`.compile(this.#db);
  }

  #insertAnswersStatement(answered: readonly { item: KeyedItem; answer: StoredResponse }[]): CompiledQuery {
    const column = <T>(pick: (entry: { item: KeyedItem; answer: StoredResponse }) => T) => answered.map(pick);
    return sql`insert into idempotency_keys (scope, key, request_hash, response_status, response_body, created_at,
        expires_at)
      select * from unnest(${column((e) => e.item.request.scope)}::text[], ${column((e) => e.item.request.key)}::text[],
        ${column((e) => e.item.request.fingerprint)}::text[], ${column((e) => e.answer.status)}::integer[],
        ${column((e) => e.answer.body)}::text[], ${column((e) => e.item.request.now.toISOString())}::timestamptz[],
        ${column((e) => new Date(e.item.request.now.getTime() + this.#options.ttlMs).toISOString())}::timestamptz[])`.compile(
      this.#db,
    );
  }
}

/** True in SQL once request `n` of the batch holds its key and the key has no live answer. */
function freshGuard(n: number): RawBuilder<unknown> {
  return sql`${String(n + 1)}::text = any(string_to_array(current_setting('ewa.fresh_requests', true), ','))`;
}

export const keyLocked = () =>
  new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });
export const keyReused = () =>
  new AppError('INVALID_IDEMPOTENCY_KEY', {
    detail: 'This Idempotency-Key was used for a different request; send a new key for a new request.',
    source: { header: 'Idempotency-Key' },
  });

/** When a request took its scope or key in this process. */
interface Hold {
  sinceMs: number;
}

/** Forgets a hold, unless a later request has taken the name over since this one expired. */
function release(holds: Map<string, Hold>, name: string, hold: Hold): void {
  if (holds.get(name) === hold) holds.delete(name);
}
