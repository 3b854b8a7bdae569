import { CompiledQuery, type Kysely } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { firstFailure, rowsOf, runBatch } from '../db/statement-batch.ts';
import {
  freshRequest,
  type HoldRow,
  holdKeysStatement,
  insertAnswersStatement,
} from './idempotency-store.ts';
import type { KeyedRequest, StoredResponse, WorkKind } from './keyed-work.ts';

/**
 * The two round trips of a transaction of keyed requests of one kind, one request alone (idempotency.ts) or a batch
 * (keyed-batch.ts): first BEGIN, every key held (which also makes the rest keep generic plans), the kind's reads;
 * then what the requests write, their answers and COMMIT.
 */

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

export type HeldReads =
  | { ok: true; holds: HoldRow[]; reads: Record<string, unknown>[][] }
  | { ok: false; failure: unknown };

/** Opens the transaction: one hold row per request, in their order, and each read statement's rows. */
export async function holdAndRead<Plan>(
  connection: Kysely<DB>,
  db: Db,
  kind: WorkKind<Plan, unknown>,
  requests: readonly KeyedRequest[],
  plans: readonly Plan[],
  lockMs: number,
): Promise<HeldReads> {
  const outcomes = await runBatch(connection, [
    BEGIN,
    holdKeysStatement(db, requests, lockMs),
    ...kind.reads(plans, freshRequest),
  ]);
  const failure = firstFailure(outcomes);
  if (failure !== undefined) return { ok: false, failure };
  return {
    ok: true,
    holds: rowsOf<HoldRow>(outcomes[1]),
    reads: outcomes.slice(2).map((outcome) => rowsOf<Record<string, unknown>>(outcome)),
  };
}

/** Each read statement's rows for request n (1-based). */
export function readsOf(reads: readonly Record<string, unknown>[][], n: number): Record<string, unknown>[][] {
  return reads.map((rows) => rows.filter((row) => Number(row.n) === n));
}

/**
 * Ends the transaction with the writes and the answers. Returns the first failure, if a statement failed: then the
 * COMMIT rolled the whole transaction back. Either way the transaction is over.
 */
export async function writeAndCommit<Write>(
  connection: Kysely<DB>,
  db: Db,
  kind: WorkKind<unknown, Write>,
  writes: readonly Write[],
  answered: readonly { request: KeyedRequest; answer: StoredResponse }[],
  ttlMs: number,
): Promise<unknown> {
  const outcomes = await runBatch(connection, [
    ...(writes.length === 0 ? [] : kind.writes(writes)),
    insertAnswersStatement(db, answered, ttlMs),
    COMMIT,
  ]);
  return firstFailure(outcomes);
}

export async function rollback(connection: Kysely<DB>): Promise<void> {
  await runBatch(connection, [ROLLBACK]);
}
