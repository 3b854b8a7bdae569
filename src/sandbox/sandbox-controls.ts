import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import type { ScheduledJob, SchedulerLogger } from '../jobs/scheduler.ts';
import { type AdvanceReport, advanceSandbox } from './sandbox-advance.ts';
import type { SandboxClock } from './sandbox-clock.ts';
import { type ResetReport, resetSandbox } from './sandbox-reset.ts';
import type { AdvanceTarget, FieldLabel } from './sandbox-target.ts';

/** The sandbox's time as a caller sees it. */
export interface SandboxTime {
  now: Date;
  realNow: Date;
  offsetMs: number;
}

export interface SandboxControlsOptions {
  db: Db;
  config: Config;
  /** The sandbox clock; none in production. */
  clock: SandboxClock | undefined;
  /** What the scheduler runs (serverJobs), for the advance to run the same. */
  jobs: readonly ScheduledJob[];
  /** The embedded database: one process alone opens it. */
  soleProcess: boolean;
  /** Real time: the money work's clock where there is no sandbox clock. */
  realNow: () => Date;
}

/**
 * What `ewa sandbox …` and /admin/sandbox/… do: read the sandbox's time, advance it, reset the demo data. In
 * production each refuses with FORBIDDEN before touching anything.
 */
export class SandboxControls {
  readonly #options: SandboxControlsOptions;
  /** The money work's clock: the sandbox's in UAT, real time in production. */
  readonly now: () => Date;

  constructor(options: SandboxControlsOptions) {
    this.#options = options;
    this.now = options.clock?.now ?? options.realNow;
  }

  /** Re-reads the offset (before each scheduler tick); nothing in production. */
  async refresh(): Promise<void> {
    await this.#options.clock?.refresh();
  }

  /** Refuses in production, before a caller looks at its input. */
  assertAvailable(): void {
    this.#clock();
  }

  async time(): Promise<SandboxTime> {
    const clock = this.#clock();
    await clock.refresh();
    return { now: clock.now(), realNow: clock.realNow(), offsetMs: clock.offsetMs };
  }

  advance(
    target: AdvanceTarget,
    options: {
      label: FieldLabel;
      onProgress?: (done: number, total: number) => void;
      logger?: Pick<SchedulerLogger, 'error'>;
    },
  ): Promise<AdvanceReport> {
    const { db, jobs, soleProcess } = this.#options;
    return advanceSandbox({ db, jobs, soleProcess, clock: this.#clock(), ...options }, target);
  }

  reset(): Promise<ResetReport> {
    const { db, config, soleProcess } = this.#options;
    return resetSandbox({ db, config, soleProcess, clock: this.#clock() });
  }

  #clock(): SandboxClock {
    if (!this.#options.clock || this.#options.config.env !== 'uat') throw sandboxRefused();
    return this.#options.clock;
  }
}

/** Production has no sandbox: its time is real time and its data real people's. */
export function sandboxRefused(): AppError {
  return new AppError('FORBIDDEN', {
    detail:
      'The sandbox clock and reset are for UAT only (EWA_ENV=production): production runs on real time and ' +
      'real data.',
  });
}
