import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import type { ScheduledJob } from '../jobs/scheduler.ts';

export interface MetricsOptions {
  database: Database;
  /** The money work's clock (the sandbox's in UAT): outbox due times and scheduled runs are stamped with it. */
  now: () => Date;
  /** The scheduled jobs, for their names and intervals. */
  jobs: readonly ScheduledJob[];
  /** The database part of a scrape is given up after this; the rest of the scrape is still served. */
  databaseTimeoutMs: number;
}

/** What one scrape reads from the database; only `ok` when the reading failed or came too late. */
export interface DatabaseReading {
  ok: boolean;
  outbox?: { topic: string; depth: number; lagSeconds: number }[];
  pendingTransfers?: number;
  jobs?: { name: string; lastSuccessAgeSeconds?: number }[];
}

/**
 * The topics and their partial indexes (migration 0013). The topic is written into the statement, not passed as a
 * parameter: a prepared statement's generic plan cannot match a partial index's WHERE to a parameter.
 */
const OUTBOX_TOPICS = ['rail.payment', 'webhook.delivery'] as const;

/**
 * Reads the outbox, the pending transfers and the scheduled runs in one read-only transaction whose statements
 * PostgreSQL stops after `databaseTimeoutMs`, so that a slow database cannot keep a connection for long. Each
 * statement walks a partial or primary-key index only: its cost follows the backlog, not the tables' history.
 */
export async function readDatabaseMetrics(options: MetricsOptions): Promise<DatabaseReading> {
  const { database, now: clock, jobs, databaseTimeoutMs } = options;
  const now = clock();
  const due = jobs.filter((job) => job.runKeyAt(now) !== undefined).map((job) => job.name);
  return database.db
    .transaction()
    .setAccessMode('read only')
    .execute(async (tx) => {
      await sql`select set_config('statement_timeout', ${String(databaseTimeoutMs)}, true)`.execute(tx);
      const outbox = [];
      for (const topic of OUTBOX_TOPICS) {
        // count(*) and min(due_at) over the topic's (due_at, …) index; a message waiting for a retry counts from
        // its retry time, so lag says the dispatchers are behind, and depth that messages are piling up.
        const { rows } = await sql<{ depth: number; oldest_due: Date | null }>`
        select count(*)::int as depth, min(due_at) filter (where due_at <= ${now}) as oldest_due
        from outbox where topic = ${sql.lit(topic)}`.execute(tx);
        const row = rows[0];
        const oldestDue = row?.oldest_due ? new Date(row.oldest_due).getTime() : undefined;
        outbox.push({
          topic,
          depth: row?.depth ?? 0,
          lagSeconds: oldestDue === undefined ? 0 : Math.max(0, (now.getTime() - oldestDue) / 1000),
        });
      }
      const pending = await sql<{ pending: number }>`
      select count(*)::int as pending from transfers where status = 'PENDING'`.execute(tx);
      // The latest DONE run of each job, walking its primary key (job_name, run_key) backwards: run keys are dates
      // or UTC minutes, so their order is time's.
      const runs = await sql<{ name: string; finished_at: Date | null }>`
      select j.name, r.finished_at
      from unnest(${due}::text[]) as j(name)
      left join lateral (
        select finished_at from scheduled_runs
        where job_name = j.name and state = 'DONE'
        order by run_key desc limit 1
      ) r on true`.execute(tx);
      return {
        ok: true,
        outbox,
        pendingTransfers: pending.rows[0]?.pending ?? 0,
        jobs: runs.rows.map((run) => ({
          name: run.name,
          ...(run.finished_at
            ? {
                lastSuccessAgeSeconds: Math.max(
                  0,
                  (now.getTime() - new Date(run.finished_at).getTime()) / 1000,
                ),
              }
            : {}),
        })),
      };
    });
}
