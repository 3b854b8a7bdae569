import type { Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { DB } from './schema.ts';

export type Tx = Transaction<DB>;

/**
 * Every write goes through here: the work runs in one transaction that commits only if it returns, so a failure
 * part-way leaves nothing behind. `serializable` is for the money path, which retries on serialization failure.
 */
export async function withTransaction<T>(
  db: Db,
  work: (tx: Tx) => Promise<T>,
  options: { serializable?: boolean; retries?: number } = {},
): Promise<T> {
  const attempts = 1 + (options.serializable ? (options.retries ?? 5) : 0);
  for (let attempt = 1; ; attempt++) {
    try {
      const builder = options.serializable
        ? db.transaction().setIsolationLevel('serializable')
        : db.transaction();
      return await builder.execute(work);
    } catch (error) {
      if (attempt >= attempts || !isRetryable(error)) throw error;
    }
  }
}

/** 40001 serialization_failure and 40P01 deadlock_detected are safe to retry from the start. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}
