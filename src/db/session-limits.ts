import { sql } from 'kysely';
import type { DatabaseLimits } from '../config.ts';

/**
 * The limits every PostgreSQL session of this process starts with, as startup options (`-c name=value`), beside
 * its other settings (database.ts): a statement that runs too long or waits too long for a lock is cancelled
 * (57014, 55P03), and a session left idle inside a transaction is ended, so that a held lock or a slow query
 * answers 503 SERVICE_UNAVAILABLE in bounded time instead of holding requests and connections
 * (database-unavailable.ts). A transaction may set its own for itself (the idempotency hold does).
 */
export function sessionLimitOptions(limits: DatabaseLimits): string[] {
  return [
    `-c statement_timeout=${limits.statementTimeoutMs}`,
    `-c lock_timeout=${limits.lockTimeoutMs}`,
    `-c idle_in_transaction_session_timeout=${limits.idleInTransactionTimeoutMs}`,
  ];
}

/**
 * Lifts the statement and lock limits for the rest of the current transaction, for work that may rightly run long
 * or wait its turn: a migration rebuilding a large table, or waiting for another process's migration.
 */
export const UNLIMITED_TRANSACTION = sql`select set_config('statement_timeout', '0', true),
  set_config('lock_timeout', '0', true)`;
