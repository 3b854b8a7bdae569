import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import { statementLog } from '../platform/statement-spans.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { embeddedOptions, parseBigint } from './pglite-options.ts';
import { PGlitePool } from './pglite-pool.ts';
import { openPGliteProcess } from './pglite-process.ts';
import type { PGliteSession } from './pglite-session.ts';
import { preparingPool } from './prepared-pool.ts';
import type { DB } from './schema.ts';
import { sessionLimitOptions } from './session-limits.ts';

export type Db = Kysely<DB>;

export interface Database {
  readonly db: Db;
  readonly kind: DatabaseConfig['kind'];
  /** Resolves when the database answers a trivial query within the time given, rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** The connection pool as it is now (the metrics read it on each scrape). */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

/** Connections of a pool: open and lent out, open and free, the most it opens, and borrowers waiting for one. */
export interface PoolStats {
  inUse: number;
  idle: number;
  max: number;
  waiting: number;
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  return config.kind === 'pglite' ? openPGlite(config) : openPostgres(config);
}

/**
 * The PGlite files live in `<dataDir>/pgdata`, beside the lock file that keeps a second process out. PGlite has no
 * timers inside (statement_timeout and lock_timeout do nothing there) and one session, so no lock is ever waited
 * for within it: the wait for that one session is what its pool bounds.
 */
async function openPGlite(config: Extract<DatabaseConfig, { kind: 'pglite' }>): Promise<Database> {
  const { dataDir } = config;
  const inMemory = dataDir === ':memory:';
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let pglite: PGliteSession;
  try {
    pglite = inMemory
      ? await openInThisProcess(config)
      : await openPGliteProcess(
          {
            pgdata: join(dataDir, 'pgdata'),
            templateDir: config.templateDir ?? null,
            shippedTemplate: config.shippedTemplate,
          },
          { liftoffOnly: config.wasmLiftoffOnly },
        );
  } catch (error) {
    unlock();
    throw error;
  }
  const pool = new PGlitePool(pglite, { connectTimeoutMs: config.limits.connectTimeoutMs });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: statementLog() });
  let closed = false;
  return {
    db,
    kind: 'pglite',
    poolStats: () => pool.stats(),
    ping: (timeoutMs) =>
      closed
        ? Promise.reject(new Error('database closed'))
        : withTimeout(sql`select 1`.execute(db), timeoutMs),
    async close() {
      closed = true;
      await db.destroy();
      try {
        await pglite.close();
      } finally {
        unlock();
      }
    },
  };
}

/**
 * A database in memory (every test opens many) stays in this process, where opening it costs no process start.
 * Imported here: a process on PostgreSQL never loads the embedded database's code, nor tar, which unpacks its
 * template (docs/design/performance.md#memory).
 */
async function openInThisProcess(
  config: Extract<DatabaseConfig, { kind: 'pglite' }>,
): Promise<PGliteSession> {
  const [{ openCluster, shippedTemplateFile }, pgliteOptions] = await Promise.all([
    import('./pglite-cluster.ts'),
    embeddedOptions(),
  ]);
  const { pglite } = await openCluster({
    pgdata: undefined,
    templateDir: config.templateDir,
    shippedTemplate: config.shippedTemplate ? await shippedTemplateFile() : undefined,
    pgliteOptions,
  });
  return pglite;
}

/** How much longer than statement_timeout a statement's answer may take before its connection is cut. */
const ANSWER_MARGIN_MS = 2000;

async function openPostgres(config: Extract<DatabaseConfig, { kind: 'postgres' }>): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    // Both connecting and waiting for a connection of a pool that is all in use: past it, 503 (prepared-pool.ts).
    connectionTimeoutMillis: config.limits.connectTimeoutMs,
    // Statements are sent without waiting for the answer before them, so a statement batch (statement-batch.ts)
    // is one round trip; one statement at a time behaves as without it.
    pipeline: true,
    // No JIT compilation: every statement here touches a few rows, and the generic plan of a statement over arrays
    // (an advance's, whose arrays are estimated at a hundred rows) can cost enough on large tables to be compiled
    // on every call, seconds each. Statement, lock and idle-transaction limits (session-limits.ts). Tests run each
    // suite in a schema of its own; production leaves the search path.
    options: [
      '-c jit=off',
      ...sessionLimitOptions(config.limits),
      ...(config.schema ? [`-c search_path=${config.schema}`] : []),
    ].join(' '),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? parseBigint : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server must not crash the process; the next query reports the failure.
  pool.on('error', () => {});
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({
      // Past the statement limit and a margin for the server's own cancellation to arrive first.
      pool: preparingPool(pool, {
        answerDeadlineMs:
          config.limits.statementTimeoutMs > 0 ? config.limits.statementTimeoutMs + ANSWER_MARGIN_MS : 0,
      }),
    }),
    log: statementLog(),
  });
  let closed = false;
  return {
    db,
    kind: 'postgres',
    poolStats: () => ({
      inUse: pool.totalCount - pool.idleCount,
      idle: pool.idleCount,
      max: config.poolSize,
      waiting: pool.waitingCount,
    }),
    // Kysely opens its pool lazily, even after destroy(); the flag keeps a closed handle closed.
    ping: (timeoutMs) =>
      closed
        ? Promise.reject(new Error('database closed'))
        : withTimeout(sql`select 1`.execute(db), timeoutMs),
    close: async () => {
      closed = true;
      await db.destroy();
    },
  };
}

async function withTimeout(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
