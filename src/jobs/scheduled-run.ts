import type { Db } from '../db/database.ts';

export type FinishedRunState = 'DONE' | 'FAILED';

/**
 * Claims the run `runKey` of `jobName` for this process, so that it runs once however many processes try it.
 * The first claim inserts the row. A claim on a row that exists wins only if that row is FAILED, or RUNNING since
 * before `now - staleAfterMs` (its process died); a DONE row is never claimed again. The takeover is a
 * compare-and-set: the UPDATE's own WHERE holds the condition, and PostgreSQL re-checks it against the row as the
 * first taker left it, so when several processes race for one row the first taker's fresh `started_at` makes every
 * other one update nothing. A claim is a row, not an advisory lock, because it must outlive the transaction: it
 * records the run for every process until the next run key.
 *
 * `staleAfterMs` must exceed the job's longest run plus the clock skew between processes, or a slow but living
 * run is taken over and its work done twice.
 */
export async function claimRun(
  db: Db,
  jobName: string,
  runKey: string,
  now: Date,
  staleAfterMs: number,
): Promise<boolean> {
  if (!Number.isSafeInteger(staleAfterMs) || staleAfterMs <= 0) {
    throw new RangeError(`staleAfterMs must be a positive whole number (got ${staleAfterMs}).`);
  }
  const inserted = await db
    .insertInto('scheduled_runs')
    .values({ job_name: jobName, run_key: runKey, state: 'RUNNING', started_at: now })
    .onConflict((conflict) => conflict.columns(['job_name', 'run_key']).doNothing())
    .returning('run_key')
    .executeTakeFirst();
  if (inserted) return true;
  const staleBefore = new Date(now.getTime() - staleAfterMs);
  const takenOver = await db
    .updateTable('scheduled_runs')
    .set({ state: 'RUNNING', started_at: now, finished_at: null, detail: null })
    .where('job_name', '=', jobName)
    .where('run_key', '=', runKey)
    .where((eb) =>
      eb.or([
        eb('state', '=', 'FAILED'),
        eb.and([eb('state', '=', 'RUNNING'), eb('started_at', '<', staleBefore)]),
      ]),
    )
    .returning('run_key')
    .executeTakeFirst();
  return takenOver !== undefined;
}

/**
 * Records how a claimed run ended. With `claimedAt` (the `now` the claim was made with) the write is fenced: a run
 * that another process took over as stale records nothing, so its late result cannot overwrite the taker's.
 * Returns whether the result was recorded.
 */
export async function finishRun(
  db: Db,
  jobName: string,
  runKey: string,
  now: Date,
  state: FinishedRunState,
  detail: Record<string, unknown> | undefined,
  claimedAt?: Date,
): Promise<boolean> {
  let update = db
    .updateTable('scheduled_runs')
    .set({ state, finished_at: now, detail: detail === undefined ? null : JSON.stringify(detail) })
    .where('job_name', '=', jobName)
    .where('run_key', '=', runKey)
    .where('state', '=', 'RUNNING');
  // Claims are written from JavaScript Dates (whole milliseconds), so equality with the stored value is exact.
  if (claimedAt) update = update.where('started_at', '=', claimedAt);
  const result = await update.executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * Marks FAILED, so that they are claimed again, the runs still RUNNING that were claimed at a sandbox time after
 * `after`: only an advance that died can have claimed them, since every living process claims at the clock's now.
 * Returns how many. The caller holds the sandbox's lease, so no other advance is walking meanwhile.
 */
export async function failRunsClaimedAfter(db: Db, after: Date): Promise<number> {
  const result = await db
    .updateTable('scheduled_runs')
    .set((eb) => ({
      state: 'FAILED',
      // When it ended is not known; when it began is the latest instant it is known to have run at.
      finished_at: eb.ref('started_at'),
      detail: JSON.stringify({ error: 'the sandbox advance that ran it stopped before it ended' }),
    }))
    .where('state', '=', 'RUNNING')
    .where('started_at', '>', after)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
