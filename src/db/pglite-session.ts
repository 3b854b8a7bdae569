/** A statement's result as the pool reads it: the rows, and how many rows a write touched. */
export interface SessionResult {
  rows: unknown[];
  affectedRows?: number;
}

/**
 * The one session of an embedded database: a PGlite instance in this process, or one in a process of its own
 * (pglite-process.ts). Statements are given one at a time; the pool (pglite-pool.ts) sees to that.
 */
export interface PGliteSession {
  query(sql: string, parameters: unknown[]): Promise<SessionResult>;
  /** A script of statements by the simple protocol, a result each. */
  exec(sql: string): Promise<SessionResult[]>;
  close(): Promise<void>;
}
