import { CompiledQuery, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { DatabaseUnavailableError } from './database-unavailable.ts';
import { type BatchOutcome, type BatchStatements, isBatch } from './statement-batch.ts';

/**
 * Sent first in a transaction whose statements should keep their generic plan. Statements over arrays (unnest) are
 * estimated at a hundred rows in their generic plan and at their true length in a custom one, so PostgreSQL never
 * finds the generic plan cheap enough and plans them again on every call: on the advance path that planning cost
 * more than running them. Their generic plans look rows up by index, as a custom plan for a few rows does.
 */
export const GENERIC_PLANS = CompiledQuery.raw(
  "select set_config('plan_cache_mode', 'force_generic_plan', true) as plan_cache_mode",
);

/**
 * A statement whose text starts with this comment is never prepared: PostgreSQL plans it on every call, for the
 * values and table sizes of that call. For a statement whose kept plan could be made while a table it reads was
 * nearly empty and then kept as the table grows (see idempotency-store.ts).
 */
export const PLANNED_EACH_CALL = '/* planned each call */';

/** Distinct statements prepared on one connection; statements beyond these run unprepared. */
const PREPARED_PER_CONNECTION = 1_000;

/** Statements with more parameters than this are bulk writes whose text changes with their size: never prepared. */
const MAX_PREPARED_PARAMETERS = 64;

/**
 * node-postgres sends a statement without a name as an unnamed statement, which PostgreSQL parses and plans again
 * on every call; on the advance path that was two thirds of the database's CPU. This pool gives every statement
 * with parameters a name on its connection, so it is parsed once per connection, and PostgreSQL may keep a
 * generic plan for it (`plan_cache_mode = auto`). The names are per connection, so the statements die with it.
 */
export function preparingPool(pool: pg.Pool, options: { answerDeadlineMs?: number } = {}): PostgresPool {
  const namesOf = new WeakMap<pg.PoolClient, Map<string, string>>();
  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect().catch((error: unknown) => {
        // Refused, unreachable, or every connection still in use after connectionTimeoutMillis.
        throw new DatabaseUnavailableError(`no database connection: ${(error as Error)?.message}`, {
          cause: error,
        });
      });
      let names = namesOf.get(client);
      if (!names) {
        names = new Map();
        namesOf.set(client, names);
        // A session the server ends while it is checked out (idle_in_transaction_session_timeout, a restart) must
        // not crash the process: its next query fails, and the pool drops it when it is released.
        client.on('error', () => {});
      }
      return preparingClient(client, names, options.answerDeadlineMs ?? 0);
    },
  };
}

/**
 * statement_timeout is the server's to keep: a server that stops answering (stopped, a network path that drops
 * packets without a reset, a failover) keeps none, and the request would wait as long as it does. Past the
 * deadline the connection is cut: its statement fails as a lost connection (503), and the pool drops it. A
 * transaction that lifts the statement limit (UNLIMITED_TRANSACTION, a migration) lifts this one too.
 */
function withAnswerDeadline<T>(client: pg.PoolClient, deadlineMs: number, answer: Promise<T>): Promise<T> {
  if (deadlineMs <= 0) return answer;
  const timer = setTimeout(() => {
    const { stream } = (client as unknown as { connection: { stream: { destroy(error?: Error): void } } })
      .connection;
    stream.destroy(new Error(`Connection terminated: the database did not answer within ${deadlineMs} ms`));
  }, deadlineMs);
  return answer.finally(() => clearTimeout(timer));
}

const LIFTS_STATEMENT_LIMIT = "set_config('statement_timeout', '0', true)";

function preparingClient(
  client: pg.PoolClient,
  names: Map<string, string>,
  answerDeadlineMs: number,
): PostgresPoolClient {
  let deadlineMs = answerDeadlineMs;
  const nameFor = (text: string, parameters: readonly unknown[]): string | undefined => {
    if (parameters.length === 0 || parameters.length > MAX_PREPARED_PARAMETERS) return undefined;
    if (text.startsWith(PLANNED_EACH_CALL)) return undefined;
    const known = names.get(text);
    if (known !== undefined || names.size >= PREPARED_PER_CONNECTION) return known;
    const name = `ewa_${names.size + 1}`;
    names.set(text, name);
    return name;
  };
  const send = (text: string, values: unknown[]) => {
    const name = nameFor(text, values);
    return name === undefined ? client.query(text, values) : client.query({ name, text, values });
  };
  return {
    release: (destroy?: boolean) => client.release(destroy),
    // biome-ignore lint/suspicious/noExplicitAny: kysely's overloads (text or cursor) are passed through as they are.
    query: ((textOrCursor: any, parameters?: readonly unknown[]) => {
      if (typeof textOrCursor !== 'string') return client.query(textOrCursor);
      const values = (parameters ?? []) as unknown[];
      if (isBatch(textOrCursor))
        return withAnswerDeadline(client, deadlineMs, sendBatch(client, values[0] as BatchStatements, send));
      if (textOrCursor.includes(LIFTS_STATEMENT_LIMIT)) deadlineMs = 0;
      return withAnswerDeadline(client, deadlineMs, send(textOrCursor, values));
    }) as PostgresPoolClient['query'],
  };
}

/**
 * A statement batch (statement-batch.ts) on a pipelining client (`pipeline: true`): every statement is handed to
 * the client before any answer is read, and the socket is corked meanwhile, so all of them leave in one write and
 * their answers come back together. Each statement keeps its own Sync, so a failure is that statement's alone, as
 * it would be sent one at a time. On a client that does not pipeline, the same code sends them one after another.
 */
async function sendBatch(
  client: pg.PoolClient,
  statements: BatchStatements,
  send: (text: string, values: unknown[]) => Promise<pg.QueryResult>,
): Promise<PostgresQueryResult<BatchOutcome>> {
  const stream = (client as unknown as { connection: { stream: NodeJS.WritableStream & Corkable } })
    .connection.stream;
  stream.cork();
  let answers: Promise<BatchOutcome>[];
  try {
    answers = statements.map((statement) =>
      send(statement.sql, [...statement.parameters]).then(
        (result): BatchOutcome => ({ ok: true, rows: result.rows }),
        (error: unknown): BatchOutcome => ({ ok: false, error }),
      ),
    );
  } finally {
    stream.uncork();
  }
  const rows = await Promise.all(answers);
  const failure = rows.find((outcome) => !outcome.ok && isConnectionError(outcome.error));
  if (failure && !failure.ok) throw failure.error;
  return { command: 'SELECT', rowCount: rows.length, rows };
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Errors of the connection rather than of a statement (they carry no SQLSTATE): the batch as a whole failed. */
function isConnectionError(error: unknown): boolean {
  return typeof (error as { code?: unknown } | null)?.code !== 'string';
}
