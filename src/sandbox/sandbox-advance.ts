import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db } from '../db/database.ts';
import { failRunsClaimedAfter } from '../jobs/scheduled-run.ts';
import { type ScheduledJob, Scheduler, type SchedulerLogger } from '../jobs/scheduler.ts';
import { raiseSandboxOffsetMs, readSandboxOffsetMs, type SandboxClock } from './sandbox-clock.ts';
import { SandboxLease } from './sandbox-lease.ts';
import { type AdvanceTarget, type FieldLabel, targetInstant } from './sandbox-target.ts';

/**
 * The instants an advance stops at: every quarter hour (UTC) after the start, and the target. Each job's run key
 * is a minute or an hour bucket, so every hourly job runs once an hour as on a server, and settlement every quarter
 * hour rather than every minute: an advance of a month is 2,880 steps, not 43,200, and an instant transfer settles
 * within 17 minutes instead of 3, still within the thirty minutes it promises.
 */
export const ADVANCE_STEP_MS = 15 * 60_000;
/** How often, in real time, a long advance stores how far it got (and renews its lease). */
const SAVE_EVERY_MS = 1000;
/**
 * A run claimed this far past the sandbox's now was claimed by an advance ahead of the stored clock: servers claim
 * at their now, which may run ahead of this process's by their clocks' skew, never by a minute.
 */
const CLAIM_SKEW_MS = 60_000;

export interface AdvanceOptions {
  db: Db;
  /** The scheduled jobs of a server, in their order (serverJobs): the advance runs exactly these. */
  jobs: readonly ScheduledJob[];
  clock: SandboxClock;
  /** The embedded database: no other process can hold the lease. */
  soleProcess: boolean;
  /** How the caller names `days` and `to` in messages. */
  label: FieldLabel;
  onProgress?: (done: number, total: number) => void;
  /** Where the jobs' failures are told; nothing else is logged (an advance runs thousands of jobs). */
  logger?: Pick<SchedulerLogger, 'error'>;
}

/** What a job did over an advance: how many runs, and its figures summed (settled, paid, creditedMinor, …). */
export type JobTotals = Record<string, number>;

export interface AdvanceReport {
  from: Date;
  to: Date;
  steps: number;
  offsetMs: number;
  jobs: Record<string, JobTotals>;
}

/** A job failed during an advance: the clock stands at the step before, and the next advance runs it again. */
export class SandboxAdvanceError extends Error {
  override name = 'SandboxAdvanceError';
}

/**
 * Moves the sandbox's time from now to the target, running at each step what a server's scheduler would have run
 * at that instant: the same jobs, through the same Scheduler and its claims in scheduled_runs, so that the two
 * cannot drift apart and a run done once (by a server, or by an advance cut off before) is not done again. The
 * offset is stored as the walk goes (at most every second) and at the end, never lowered; after a crash the clock
 * stands at or before the last step done, so the next advance walks again from there and nothing is skipped. One
 * advance (or reset) at a time, by the lease.
 */
export async function advanceSandbox(options: AdvanceOptions, target: AdvanceTarget): Promise<AdvanceReport> {
  const { db, clock } = options;
  // Refused before the lease when it is plainly wrong, so that a bad request leaves no trace.
  targetInstant(target, clock.now(), options.label);
  const lease = await SandboxLease.take(db, {
    realNow: clock.realNow,
    soleProcess: options.soleProcess,
    what: 'advance',
  });
  try {
    const storedMs = await readSandboxOffsetMs(db);
    const from = new Date(clock.realNow().getTime() + storedMs);
    const to = targetInstant(target, from, options.label);
    // An advance that died had walked ahead of the clock it stored: the runs it left RUNNING there would look
    // fresh to this walk, which would skip them. They are failed, and so run again when the walk reaches them.
    await failRunsClaimedAfter(db, new Date(from.getTime() + CLAIM_SKEW_MS));
    clock.hold(storedMs);
    const walk = new Walk(options, from, to, storedMs);
    try {
      await walk.run(lease);
    } finally {
      clock.release(walk.offsetMs);
    }
    return { from, to, steps: walk.steps.length, offsetMs: walk.offsetMs, jobs: walk.totals };
  } finally {
    await lease.release();
  }
}

/** The steps from `from` (excluded) to `to` (included). */
function advanceSteps(from: Date, to: Date): Date[] {
  const steps: Date[] = [];
  for (let at = (Math.floor(from.getTime() / ADVANCE_STEP_MS) + 1) * ADVANCE_STEP_MS; at < to.getTime(); ) {
    steps.push(new Date(at));
    at += ADVANCE_STEP_MS;
  }
  steps.push(to);
  return steps;
}

/** One advance's walk through its steps. */
class Walk {
  readonly steps: Date[];
  readonly totals: Record<string, JobTotals> = {};
  offsetMs: number;
  readonly #options: AdvanceOptions;
  readonly #to: Date;
  #at: Date;
  #failure: string | undefined;

  constructor(options: AdvanceOptions, from: Date, to: Date, offsetMs: number) {
    this.#options = options;
    this.#to = to;
    this.#at = from;
    this.offsetMs = offsetMs;
    this.steps = advanceSteps(from, to);
  }

  async run(lease: SandboxLease): Promise<void> {
    const { db, clock, logger } = this.#options;
    const scheduler = new Scheduler({
      db,
      now: () => this.#at,
      logger: {
        info: () => {},
        error: (object, message) => {
          logger?.error(object, message);
          // A run that could not be claimed or recorded stops the walk as a failed one does; a run done but needing
          // an operator's attention (an ACH file refused) does not.
          if ((object as { state?: string }).state !== 'DONE') this.#failure ??= message ?? 'scheduler error';
        },
      },
      tickMs: 1,
    });
    for (const job of this.#options.jobs) scheduler.register(this.#counted(job));
    let savedAt = clock.realNow().getTime();
    for (const [index, step] of this.steps.entries()) {
      this.#at = step;
      clock.hold(Math.max(this.offsetMs, step.getTime() - clock.realNow().getTime()));
      const failed = (await scheduler.runDue()).find((run) => run.state === 'FAILED');
      if (failed || this.#failure !== undefined) {
        const standsAt = index === 0 ? undefined : this.steps[index - 1];
        if (standsAt) await this.#save(standsAt);
        throw new SandboxAdvanceError(
          `${failed ? `${failed.job} failed` : 'the scheduled work stopped'} at ${step.toISOString()} ` +
            `(${this.#failure ?? 'see the log'}); the sandbox clock stands at ` +
            `${new Date(clock.realNow().getTime() + this.offsetMs).toISOString()}. The next advance runs it again.`,
        );
      }
      if (clock.realNow().getTime() - savedAt >= SAVE_EVERY_MS && step !== this.#to) {
        await this.#save(step);
        await lease.renew().catch((error: Error) => {
          throw new SandboxAdvanceError(
            `${error.message}; the sandbox clock stands at ${step.toISOString()}.`,
          );
        });
        savedAt = clock.realNow().getTime();
      }
      this.#options.onProgress?.(index + 1, this.steps.length);
      // The embedded database answers within the same turn of the event loop: without a pause between steps, a
      // server would serve nothing else until the whole walk is done.
      await nextTurn();
    }
    await this.#save(this.#to);
  }

  /** Stores the offset that makes `instant` the sandbox's time now, unless the stored one is ahead already. */
  async #save(instant: Date): Promise<void> {
    const { db, clock } = this.#options;
    this.offsetMs = await raiseSandboxOffsetMs(db, instant.getTime() - clock.realNow().getTime());
    clock.hold(this.offsetMs);
  }

  /** The job, adding what each run reports to the totals, and keeping a failure's message for the report. */
  #counted(job: ScheduledJob): ScheduledJob {
    return {
      ...job,
      run: async (context) => {
        try {
          const detail = (await job.run(context)) ?? undefined;
          this.#add(job.name, detail);
          return detail;
        } catch (error) {
          this.#failure ??= `${job.name}: ${error instanceof Error ? error.message : String(error)}`;
          throw error;
        }
      },
    };
  }

  #add(name: string, detail: Record<string, unknown> | undefined): void {
    const totals = this.totals[name] ?? { runs: 0 };
    this.totals[name] = totals;
    totals.runs = (totals.runs ?? 0) + 1;
    for (const [key, value] of Object.entries(flatten(detail ?? {})))
      totals[key] = (totals[key] ?? 0) + value;
  }
}

/** The numbers of a job's report, nested ones named by their path (`sent.sent`). */
function flatten(detail: Record<string, unknown>, prefix = ''): Record<string, number> {
  const numbers: Record<string, number> = {};
  for (const [key, value] of Object.entries(detail)) {
    if (typeof value === 'number') numbers[`${prefix}${key}`] = value;
    else if (value && typeof value === 'object' && !Array.isArray(value))
      Object.assign(numbers, flatten(value as Record<string, unknown>, `${prefix}${key}.`));
  }
  return numbers;
}
