import type { PGliteSession, SessionOutcome, SessionResult, SessionStatement } from './pglite-session.ts';

type Runner = Pick<PGliteSession, 'query' | 'exec'>;

/**
 * One statement on an embedded database's session. Without parameters it goes by the simple protocol, which runs a
 * script of many statements (migrations), and answers the last one's result, as Kysely reads only that.
 */
export async function runStatement(
  session: Runner,
  sql: string,
  parameters: readonly unknown[],
): Promise<SessionResult> {
  if (parameters.length > 0) return session.query(sql, parameters as unknown[]);
  const results = await session.exec(sql);
  return results.at(-1) ?? { rows: [], affectedRows: 0 };
}

/**
 * A statement batch (statement-batch.ts) on one session: each statement once the one before it has answered, each
 * outcome on its own, as PostgreSQL runs a pipeline. The same function runs it in the database's own process
 * (pglite-process-child.ts), where the whole batch is one message there and one back, and in this process.
 */
export async function runStatements(
  session: Runner,
  statements: readonly SessionStatement[],
): Promise<SessionOutcome[]> {
  const outcomes: SessionOutcome[] = [];
  for (const { sql, parameters } of statements) {
    try {
      outcomes.push({ ok: true, result: await runStatement(session, sql, parameters) });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
}
