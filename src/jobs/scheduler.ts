import type { Db } from '../db/database.ts';
import { addDays, localDateOf } from '../domain/calendar.ts';
import { claimRun, type FinishedRunState, finishRun } from './scheduled-run.ts';

export interface ScheduledJob {
  name: string;
  /** The run key for this instant, e.g. the local date for a daily job or a 1-minute bucket; undefined = nothing due. */
  runKeyAt(now: Date): string | undefined;
  // biome-ignore lint/suspicious/noConfusingVoidType: lets a job that reports nothing be an async function without a return.
  run(context: { now: Date; runKey: string; signal: AbortSignal }): Promise<Record<string, unknown> | void>;
  /** How long a RUNNING claim may last before another process takes it over as crashed; 1 hour when absent. */
  staleAfterMs?: number;
  /** How often a run key falls due, for the scheduled-work lag metric; absent for a job that runs once. */
  intervalSeconds?: number;
}

/** The part of a pino (or Fastify) logger the scheduler writes to. */
export interface SchedulerLogger {
  info(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export interface SchedulerOptions {
  db: Db;
  now: () => Date;
  logger: SchedulerLogger;
  tickMs: number;
  /**
   * Runs before each tick's jobs: the sandbox clock re-reads its offset there, so that a tick never acts on a time
   * that a sandbox reset in another process has taken back. A failure is logged and the tick goes on.
   */
  beforeTick?: () => Promise<void>;
}

/** A run this process claimed during a tick, and how it ended. */
export interface ScheduledRunReport {
  job: string;
  runKey: string;
  state: FinishedRunState;
}

/** Long enough for the daily jobs at scale; a job that may run longer sets its own. */
const DEFAULT_STALE_AFTER_MS = 60 * 60_000;

/**
 * Runs registered jobs when they are due, once per run key across every process sharing the database (see
 * claimRun). Ticks never overlap, a failing job is logged and recorded FAILED (and retried on a later tick while its
 * run key is still due), and nothing a job does can crash the process.
 */
export class Scheduler {
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #logger: SchedulerLogger;
  readonly #tickMs: number;
  readonly #beforeTick: (() => Promise<void>) | undefined;
  readonly #jobs = new Map<string, ScheduledJob>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  /** The tick in flight, or the last one; each tick chains on the one before so that none overlap. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    if (!Number.isSafeInteger(options.tickMs) || options.tickMs <= 0) {
      throw new RangeError(`tickMs must be a positive whole number (got ${options.tickMs}).`);
    }
    this.#db = options.db;
    this.#now = options.now;
    this.#logger = options.logger;
    this.#tickMs = options.tickMs;
    this.#beforeTick = options.beforeTick;
  }

  register(job: ScheduledJob): this {
    if (this.#jobs.has(job.name)) throw new Error(`A scheduled job named ${job.name} is already registered.`);
    this.#jobs.set(job.name, job);
    return this;
  }

  /** Ticks at once, then every tickMs after the previous tick ends. The timer never keeps the process alive. */
  start(): void {
    if (this.#started || this.#abort.signal.aborted) return;
    this.#started = true;
    this.#schedule(0);
  }

  /** Aborts the jobs' signal, cancels the next tick and resolves once the tick in flight has ended. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('The scheduler is stopping.'));
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#tail;
  }

  /** Runs one tick now, after any tick in flight; resolves with the runs this process claimed. */
  runDue(): Promise<ScheduledRunReport[]> {
    const tick = this.#tail.then(() => this.#tick());
    this.#tail = tick.catch(() => {});
    return tick;
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.runDue()
        .catch((error: unknown) => this.#logger.error({ err: error }, 'scheduler tick failed'))
        .finally(() => {
          if (!this.#abort.signal.aborted) this.#schedule(this.#tickMs);
        });
    }, delayMs);
    this.#timer.unref();
  }

  async #tick(): Promise<ScheduledRunReport[]> {
    const reports: ScheduledRunReport[] = [];
    try {
      await this.#beforeTick?.();
    } catch (error) {
      this.#logger.error({ err: error }, 'scheduler could not prepare its tick');
    }
    for (const job of this.#jobs.values()) {
      if (this.#abort.signal.aborted) break;
      const report = await this.#runIfDue(job);
      if (report) reports.push(report);
    }
    return reports;
  }

  async #runIfDue(job: ScheduledJob): Promise<ScheduledRunReport | undefined> {
    const now = this.#now();
    let runKey: string | undefined;
    try {
      runKey = job.runKeyAt(now);
      if (runKey === undefined) return undefined;
      const claimed = await claimRun(
        this.#db,
        job.name,
        runKey,
        now,
        job.staleAfterMs ?? DEFAULT_STALE_AFTER_MS,
      );
      if (!claimed) return undefined;
    } catch (error) {
      this.#logger.error({ job: job.name, runKey, err: error }, 'scheduled job could not be claimed');
      return undefined;
    }
    this.#logger.info({ job: job.name, runKey }, 'scheduled job started');
    let state: FinishedRunState;
    let detail: Record<string, unknown> | undefined;
    try {
      detail = (await job.run({ now, runKey, signal: this.#abort.signal })) ?? undefined;
      state = 'DONE';
    } catch (error) {
      state = 'FAILED';
      detail = { error: error instanceof Error ? error.message : String(error) };
      this.#logger.error({ job: job.name, runKey, err: error }, 'scheduled job failed');
    }
    await this.#record(job.name, runKey, state, detail, now);
    return { job: job.name, runKey, state };
  }

  async #record(
    jobName: string,
    runKey: string,
    state: FinishedRunState,
    detail: Record<string, unknown> | undefined,
    claimedAt: Date,
  ): Promise<void> {
    const context = { job: jobName, runKey, state };
    try {
      if (!(await finishRun(this.#db, jobName, runKey, this.#now(), state, detail, claimedAt))) {
        this.#logger.error(context, 'scheduled job ended after another process took its run over as stale');
      } else if (state === 'DONE' && typeof detail?.attention === 'string') {
        // Done, but with something an operator must look at (an ACH return file refused, say): logged as an error.
        this.#logger.error({ ...context, detail }, `scheduled job needs attention: ${detail.attention}`);
      } else if (state === 'DONE') {
        this.#logger.info({ ...context, detail }, 'scheduled job done');
      }
    } catch (error) {
      // The row stays RUNNING and is taken over once stale.
      this.#logger.error({ ...context, err: error }, 'scheduled job result could not be recorded');
    }
  }
}

/**
 * The key of a daily job due at `atLocalTime` ('HH:MM', wall clock in `timeZone`): the local date of the latest
 * such time at or before `now`. Before that time it is still yesterday's key, so a process that starts after a
 * missed run still does it; a day missed entirely is not run (jobs that must cover every day catch up themselves).
 * Wall-clock comparison keeps DST right: a skipped time counts as passed, a repeated one keeps the same key.
 */
export function dailyRunKey(now: Date, timeZone: string, atLocalTime: string): string {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(atLocalTime);
  if (!match) throw new RangeError(`atLocalTime must be HH:MM in 24-hour time (got "${atLocalTime}").`);
  const dueMinute = Number(match[1]) * 60 + Number(match[2]);
  const today = localDateOf(now, timeZone);
  return localMinuteOfDay(now, timeZone) >= dueMinute ? today : addDays(today, -1);
}

/** The key of a job due every `minutes`: the start of the UTC bucket `now` falls in, e.g. '2025-03-01T10:05Z'. */
export function everyMinutesRunKey(now: Date, minutes: number): string {
  if (!Number.isSafeInteger(minutes) || minutes < 1 || minutes > 1440) {
    throw new RangeError(`minutes must be a whole number from 1 to 1440 (got ${minutes}).`);
  }
  const bucketMs = minutes * 60_000;
  const start = Math.floor(now.getTime() / bucketMs) * bucketMs;
  return `${new Date(start).toISOString().slice(0, 16)}Z`;
}

const clockFormatters = new Map<string, Intl.DateTimeFormat>();

function localMinuteOfDay(instant: Date, timeZone: string): number {
  let formatter = clockFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      hour: '2-digit',
      minute: '2-digit',
    });
    clockFormatters.set(timeZone, formatter);
  }
  let minute = 0;
  for (const part of formatter.formatToParts(instant)) {
    if (part.type === 'hour') minute += Number(part.value) * 60;
    if (part.type === 'minute') minute += Number(part.value);
  }
  return minute;
}
