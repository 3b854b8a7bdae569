import type { Kysely } from 'kysely';
import type { Db } from '../db/database.ts';
import { DatabaseUnavailableError, isConnectionLost } from '../db/database-unavailable.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import { answerOf, type HoldRow, liveAnswer, readAnswer, readAnswerSoon } from './idempotency-store.ts';
import { holdAndRead, readsOf, rollback, writeAndCommit } from './keyed-transaction.ts';
import {
  type IdempotencyOptions,
  type KeyedRequest,
  type KeyedWork,
  keyLocked,
  type StoredResponse,
} from './keyed-work.ts';

/** One keyed request waiting for, or in, a batch. */
export interface KeyedItem {
  request: KeyedRequest;
  work: KeyedWork;
  refusal: (error: AppError) => StoredResponse;
  resolve: (answer: StoredResponse) => void;
  reject: (error: unknown) => void;
}

/** How a request of a batch ends: an answer to store (with what it writes), or one already decided. */
type Verdict =
  | { kind: 'write'; answer: StoredResponse; write: unknown }
  | { kind: 'done'; answer: StoredResponse }
  | { kind: 'failed'; error: unknown };

/** A fault (not a refusal) in one request's decision: the batch is given up and its requests run alone. */
class BatchAbandoned extends Error {}

/**
 * Group commit of keyed requests. Under load, the requests that arrive while a process's batches are in flight are
 * run together in one transaction: one BEGIN, one statement that holds every key, the reads of all of them (each of
 * their kind's read statements serves them all), then all their writes, every answer in one statement, and one
 * COMMIT, in two round trips for all of them (keyed-transaction.ts). Sharing the commit (its WAL flush), the round
 * trips and the statements' start-up is what brings advances near pgbench's TPC-B rate (BENCHMARKS.md). A request that finds no batch in flight runs alone at once: a batch never waits to fill.
 *
 * Each request keeps every guarantee it has alone: its answer commits with its effects; a refusal writes nothing
 * but its answer; a busy key is 409 and a live answer is replayed. Two requests of one scope (one person) never
 * share a batch, nor run in two of this process's batches at once: each would read the person's money before the
 * other had taken any. Batches lock their people in the same order as every other money transaction, so they
 * never deadlock with each other. Whatever fails a batch as a whole (a statement error, a conflict one request's
 * checks could not see) rolls it back, and each of its requests then runs alone, where that failure is answered as it
 * would be without batching. A batch that could get or keep no connection is not run again: each request answers the
 * answer stored under its key if the batch committed before the loss (looked for briefly), or the loss, a 503.
 */
export class KeyedBatcher {
  readonly #db: Db;
  readonly #options: IdempotencyOptions;
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

  constructor(db: Db, options: IdempotencyOptions, alone: (item: KeyedItem) => Promise<void>) {
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
    // Another request of this process holds the key: a retry of an answered request replays the answer, as the
    // other does; a request whose first is still running is 409.
    if (this.#holds(this.#keysHere, keyHere))
      return readAnswer(this.#db, request).then((row) => {
        if (!row) throw keyLocked();
        return answerOf(row, request);
      });
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

  /** The oldest waiting requests of one kind, one per scope and none of a scope in flight, up to a batch's size. */
  #take(): KeyedItem[] {
    const taken: KeyedItem[] = [];
    const scopes = new Set<string>();
    for (let i = 0; i < this.#waiting.length && taken.length < this.#options.batchSizeMax; ) {
      const item = this.#waiting[i]!;
      const { scope } = item.request;
      const otherKind = taken.length > 0 && item.work.kind !== taken[0]!.work.kind;
      if (otherKind || scopes.has(scope) || this.#holds(this.#scopesInFlight, scope)) {
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
    let lost: unknown;
    try {
      verdicts = await this.#db.connection().execute((connection) => this.#transaction(connection, items));
    } catch (error) {
      verdicts = undefined;
      if (isConnectionLost(error)) lost = error;
    }
    this.#options.onBatch?.({
      requests: items.length,
      ms: performance.now() - startedMs,
      outcome: verdicts ? 'committed' : lost ? 'connection-lost' : 'ran-alone',
    });
    if (lost) {
      // Alone, each would wait for a connection of a database that just failed to give or keep one: each answers
      // what the batch committed, if it did before the loss and that can be read at once, or the loss (503).
      await Promise.all(
        items.map(async (item) => {
          // No connection was had at all: the batch never ran, there is nothing to look for.
          const stored =
            lost instanceof DatabaseUnavailableError
              ? undefined
              : await readAnswerSoon(this.#db, item.request);
          if (!stored) return item.reject(lost);
          try {
            item.resolve(answerOf(stored, item.request));
          } catch (error) {
            item.reject(error);
          }
        }),
      );
      return;
    }
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
    const { kind } = items[0]!.work;
    let open = true;
    try {
      const held = await holdAndRead(
        connection,
        this.#db,
        kind,
        items.map((item) => item.request),
        items.map((item) => item.work.plan),
        this.#options.lockMs,
      );
      if (!held.ok) return undefined;
      const verdicts: Verdict[] = [];
      for (const [index, item] of items.entries())
        verdicts.push(
          await this.#decide(item, held.holds[index], readsOf(held.reads, index + 1), connection),
        );
      const writing = verdicts.flatMap((verdict, index) =>
        verdict.kind === 'write' ? [{ verdict, item: items[index]! }] : [],
      );
      if (writing.length === 0) return verdicts; // nothing to store: the finally rolls back
      const failure = await writeAndCommit(
        connection,
        this.#db,
        kind,
        writing.flatMap(({ verdict }) => (verdict.write === undefined ? [] : [verdict.write])),
        writing.map(({ verdict, item }) => ({ request: item.request, answer: verdict.answer })),
        this.#options.ttlMs,
      );
      open = false; // the COMMIT ended the transaction: committed, or rolled back if a statement before it failed
      // A session lost around the COMMIT may have committed: its requests look for their answers (#runBatch).
      if (failure !== undefined && isConnectionLost(failure)) throw failure;
      return failure === undefined ? verdicts : undefined;
    } catch (error) {
      if (error instanceof BatchAbandoned) return undefined;
      throw error;
    } finally {
      if (open) await rollback(connection);
    }
  }

  /** One request's verdict from its key's hold and its reads, as IdempotencyKeys decides a request alone. */
  async #decide(
    item: KeyedItem,
    hold: HoldRow | undefined,
    reads: Record<string, unknown>[][],
    connection: Kysely<DB>,
  ): Promise<Verdict> {
    if (!hold) return { kind: 'failed', error: keyLocked() };
    // A committed answer is final, whether or not this request holds the key: another retry holding it meanwhile
    // only replays it too.
    try {
      const live = liveAnswer(hold, item.request);
      if (live) return { kind: 'done', answer: live };
    } catch (error) {
      return { kind: 'failed', error };
    }
    if (!hold.locked) return { kind: 'failed', error: keyLocked() };
    try {
      const { answer, write } = await item.work.decide(reads, connection);
      return { kind: 'write', answer, write };
    } catch (error) {
      if (error instanceof AppError && error.status < 500)
        return { kind: 'write', answer: item.refusal(error), write: undefined };
      // Not a refusal: a fault. Alone, the request meets it again and answers it as it would.
      throw new BatchAbandoned();
    }
  }
}

/** When a request took its scope or key in this process. */
interface Hold {
  sinceMs: number;
}

/** Forgets a hold, unless a later request has taken the name over since this one expired. */
function release(holds: Map<string, Hold>, name: string, hold: Hold): void {
  if (holds.get(name) === hold) holds.delete(name);
}
