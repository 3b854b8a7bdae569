import type { CompiledQuery, Kysely, RawBuilder } from 'kysely';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';

/** What keyed requests are and do: the vocabulary the idempotency files share, importing none of them. */

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
  /** Told of each batch of two or more requests: how many, how long, and whether it committed. */
  onBatch?: (batch: {
    requests: number;
    ms: number;
    outcome: 'committed' | 'ran-alone' | 'connection-lost';
  }) => void;
}

export const keyLocked = () =>
  new AppError('IDEMPOTENCY_KEY_LOCKED', { source: { header: 'Idempotency-Key' } });

export const keyReused = () =>
  new AppError('INVALID_IDEMPOTENCY_KEY', {
    detail: 'This Idempotency-Key was used for a different request; send a new key for a new request.',
    source: { header: 'Idempotency-Key' },
  });

/** A condition in SQL on a request's position `n` (1-based) among the requests read together. */
export type ReadGuard = (n: RawBuilder<unknown>) => RawBuilder<unknown>;

/**
 * Requests of one kind, read and written together: each statement serves every request it is given, one alone or a
 * batch (keyed-batch.ts), with the same text, so that it is prepared once.
 */
export interface WorkKind<Plan, Write> {
  /**
   * Statements, sent in the round trip that holds the keys, that read for every plan; each row they return names
   * its request by a column `n`, the plan's 1-based position. Request n reads and locks nothing unless `fresh(n)`.
   */
  reads(plans: readonly Plan[], fresh: ReadGuard): CompiledQuery[];
  /** Statements that write every request's effects, sent with the answers and COMMIT. */
  writes(writes: readonly Write[]): CompiledQuery[];
}

/** One request's work: its kind, what it asks of the reads, and how it decides from what they found. */
export interface KeyedWork<Plan = unknown, Write = unknown> {
  kind: WorkKind<Plan, Write>;
  plan: Plan;
  /**
   * From this request's rows of each read statement, its answer and what it writes (nothing for a preview).
   * `runner` is the request's transaction, for what a rare path must read on its own. Throws an AppError below 500
   * to refuse.
   */
  decide(
    reads: readonly Record<string, unknown>[][],
    runner: Kysely<DB>,
  ): Promise<{ answer: StoredResponse; write: Write | undefined }>;
  /** The refusal that a failure of the writes stands for (a conflict the reads could not see), if it is one. */
  refusalOf(error: unknown): AppError | undefined;
}
