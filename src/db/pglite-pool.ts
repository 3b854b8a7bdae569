import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { DatabaseUnavailableError } from './database-unavailable.ts';
import type { PGliteSession } from './pglite-session.ts';
import { runStatement, runStatements } from './session-statements.ts';
import { type BatchOutcome, type BatchStatements, isBatch } from './statement-batch.ts';

/**
 * Makes one PGlite session (in this process or in one of its own) look like a `pg` pool to Kysely's PostgresDialect.
 * PGlite is a single session, so the pool hands out that one connection to one borrower at a time, in the order they
 * asked: a transaction (BEGIN … COMMIT on a borrowed connection) can never interleave with another caller's
 * statements. A borrower that waits longer than `connectTimeoutMs` is refused with DatabaseUnavailableError (503), as
 * a PostgreSQL pool that is all in use refuses. Written here rather than taken from a package because the published PGlite dialects
 * either pin an older PGlite or pull a CLI framework with them.
 */
export class PGlitePool implements PostgresPool {
  readonly options = {};
  readonly #pg: PGliteSession;
  readonly #connectTimeoutMs: number;
  #busy = false;
  readonly #waiting: { take: () => void }[] = [];

  constructor(pg: PGliteSession, options: { connectTimeoutMs: number }) {
    this.#pg = pg;
    this.#connectTimeoutMs = options.connectTimeoutMs;
  }

  async connect(): Promise<PostgresPoolClient> {
    await this.#acquire(this.#connectTimeoutMs);
    let released = false;
    return {
      query: (sql: string, parameters: readonly unknown[]) => this.#query(sql, parameters),
      release: () => {
        if (released) return;
        released = true;
        this.#release();
      },
    } as unknown as PostgresPoolClient;
  }

  /** The session, once every earlier borrower has released it; refused after `timeoutMs` (none: wait). */
  #acquire(timeoutMs?: number): Promise<void> {
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = {
        take: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(new DatabaseUnavailableError(`the embedded database stayed busy for ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.#waiting.push(waiter);
    });
  }

  /** Hands the session to the next borrower, still busy, or frees it. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next.take();
    else this.#busy = false;
  }

  async #query(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<unknown>> {
    if (isBatch(sql)) return this.#batch(parameters[0] as BatchStatements);
    const result = await runStatement(this.#pg, sql, parameters);
    return { command: commandOf(sql), rowCount: result.affectedRows ?? 0, rows: result.rows };
  }

  /**
   * The statements of a batch, one after another. A database in a process of its own takes the whole batch as one
   * message and answers it with one; in this process there is no exchange to save.
   */
  async #batch(statements: BatchStatements): Promise<PostgresQueryResult<BatchOutcome>> {
    const plain = statements.map(({ sql, parameters }) => ({ sql, parameters }));
    const outcomes = this.#pg.batch ? await this.#pg.batch(plain) : await runStatements(this.#pg, plain);
    const rows: BatchOutcome[] = outcomes.map((outcome) =>
      outcome.ok ? { ok: true, rows: outcome.result.rows as Record<string, unknown>[] } : outcome,
    );
    return { command: 'SELECT', rowCount: rows.length, rows };
  }

  /** The one session: lent out or free, and the borrowers queued for it. */
  stats(): { inUse: number; idle: number; max: number; waiting: number } {
    return { inUse: this.#busy ? 1 : 0, idle: this.#busy ? 0 : 1, max: 1, waiting: this.#waiting.length };
  }

  /** Resolves once every borrower before it has released the session. */
  async end(): Promise<void> {
    await this.#acquire();
    this.#release();
  }
}

function commandOf(sql: string): PostgresQueryResult<unknown>['command'] {
  const word = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SELECT';
  return (['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(word) ? word : 'SELECT') as 'SELECT';
}
