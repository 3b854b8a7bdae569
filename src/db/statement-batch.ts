import { CompiledQuery, type Kysely } from 'kysely';

/**
 * Statements sent to the database in one round trip, each answered on its own. Every round trip to PostgreSQL
 * costs both processes a write, a read and a wake-up, which on the advance path cost more than the statements
 * themselves; a batch pays that once for all its statements.
 *
 * The statements run in order, on one connection, exactly as if sent one after another: inside a transaction a
 * failure aborts it, so the statements after it fail too (25P02) and a COMMIT among them ends it with ROLLBACK.
 * Outside one, each statement commits on its own. The batch resolves with one outcome per statement; it rejects
 * only when the connection itself fails.
 *
 * A batch travels through Kysely (so it runs in a transaction's connection like any statement) as one query whose
 * text is BATCH_MARKER and whose only parameter is the list of statements; the pool adapters in this folder
 * (prepared-pool.ts, pglite-pool.ts) recognise it and answer one row per statement.
 */
export const BATCH_MARKER = '/* ewa statement batch */';

export type BatchOutcome = { ok: true; rows: Record<string, unknown>[] } | { ok: false; error: unknown };

/** What a pool adapter receives as the batch's one parameter. */
export type BatchStatements = readonly CompiledQuery[];

export function isBatch(text: string): boolean {
  return text === BATCH_MARKER;
}

export async function runBatch(
  runner: Kysely<unknown> | { executeQuery: Kysely<unknown>['executeQuery'] },
  statements: readonly CompiledQuery[],
): Promise<BatchOutcome[]> {
  if (statements.length === 0) return [];
  const marker = CompiledQuery.raw(BATCH_MARKER, [statements]);
  const { rows } = await runner.executeQuery<BatchOutcome>(marker);
  if (rows.length !== statements.length)
    throw new Error(`a batch of ${statements.length} statements answered ${rows.length} outcomes`);
  return rows;
}

/** The first failure of a batch, if any: the cause, where later statements only report the aborted transaction. */
export function firstFailure(outcomes: readonly BatchOutcome[]): unknown {
  for (const outcome of outcomes) if (!outcome.ok) return outcome.error;
  return undefined;
}

/** The rows of a statement that must have succeeded; its error is thrown otherwise. */
export function rowsOf<T>(outcome: BatchOutcome | undefined): T[] {
  if (!outcome) throw new Error('a batch answered fewer outcomes than it had statements');
  if (!outcome.ok) throw outcome.error;
  return outcome.rows as T[];
}
