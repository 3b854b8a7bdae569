/** A statement's result as the pool reads it: the rows, and how many rows a write touched. */
export interface SessionResult {
  rows: unknown[];
  affectedRows?: number;
}

/** A statement as it crosses to the embedded database: its text and parameters, nothing of Kysely's tree. */
export interface SessionStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** A statement's outcome in a batch: its result, or the error it failed with. */
export type SessionOutcome = { ok: true; result: SessionResult } | { ok: false; error: unknown };

/**
 * The one session of an embedded database: a PGlite instance in this process, or one in a process of its own
 * (pglite-process.ts). Statements are given one at a time; the pool (pglite-pool.ts) sees to that.
 */
export interface PGliteSession {
  query(sql: string, parameters: unknown[]): Promise<SessionResult>;
  /** A script of statements by the simple protocol, a result each. */
  exec(sql: string): Promise<SessionResult[]>;
  /**
   * A statement batch in one exchange, where the session has one of its own (a database in another process); where
   * it has none, the pool runs the statements one by one (session-statements.ts).
   */
  batch?(statements: readonly SessionStatement[]): Promise<SessionOutcome[]>;
  close(): Promise<void>;
}
