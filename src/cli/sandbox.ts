import { loadConfig } from '../config.ts';
import { serverJobs } from '../jobs/server-jobs.ts';
import { createMoneyCore } from '../money/money-core.ts';
import { type AdvanceReport, SandboxAdvanceError } from '../sandbox/sandbox-advance.ts';
import { SandboxClock } from '../sandbox/sandbox-clock.ts';
import { SandboxControls, type SandboxTime } from '../sandbox/sandbox-controls.ts';
import { advanceTargetOf, SANDBOX_ADVANCE_DAYS_MAX } from '../sandbox/sandbox-target.ts';
import { describeDemoSeed } from '../seed/demo.ts';
import { type CliContext, type Command, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

/** Runs a sandbox command on the migrated database; production is refused in one line before anything is opened. */
async function withSandbox(
  name: string,
  context: CliContext,
  work: (controls: SandboxControls) => Promise<number>,
): Promise<number> {
  const config = loadConfig(context.env);
  if (config.env !== 'uat') {
    writeLine(context.stderr, `ewa sandbox ${name}: the sandbox clock is for UAT only (EWA_ENV=production).`);
    return 1;
  }
  return withMigratedDatabase(
    context,
    async ({ database }) => {
      const realNow = context.now ?? (() => new Date());
      const clock = await SandboxClock.open(database.db, realNow);
      // The rails and the outbox work on the sandbox's time, as a server's do.
      const core = createMoneyCore(database.db, config, { now: clock.now });
      const controls = new SandboxControls({
        db: database.db,
        config,
        clock,
        jobs: serverJobs(core, config),
        soleProcess: database.kind === 'pglite',
        realNow,
      });
      return work(controls);
    },
    config,
  );
}

function timeJson(time: SandboxTime) {
  return { now: time.now.toISOString(), real_now: time.realNow.toISOString(), offset_ms: time.offsetMs };
}

function timeLine(time: SandboxTime): string {
  const days = time.offsetMs / 86_400_000;
  const ahead =
    time.offsetMs === 0 ? 'real time' : `${days.toFixed(days < 10 ? 2 : 1)} days ahead of real time`;
  return `Sandbox time: ${time.now.toISOString()} (${ahead}; offset ${time.offsetMs} ms)`;
}

const clockCommand: Command = {
  name: 'sandbox clock',
  summary: "Show the sandbox's time (real time plus what `ewa sandbox advance` moved it)",
  help: [
    'Usage: ewa sandbox clock [--json]',
    '',
    "Prints the sandbox's time, which the money work of every process on this database follows (transfers,",
    'earnings, settlement, payday, the scheduler), and how far it is ahead of real time. Sign-in and tokens keep',
    'real time. UAT only.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  run: (flags, _positionals, context) =>
    withSandbox('clock', context, async (controls) => {
      const time = await controls.time();
      writeLine(context.stdout, flags.json ? JSON.stringify(timeJson(time)) : timeLine(time));
      return 0;
    }),
};

const advanceCommand: Command = {
  name: 'sandbox advance',
  summary: "Move the sandbox's time forward, running what those days would have run",
  help: [
    'Usage: ewa sandbox advance (--days N | --to DATE) [--json]',
    '',
    `Moves the sandbox's time forward by N days (1 to ${SANDBOX_ADVANCE_DAYS_MAX}) or to DATE (YYYY-MM-DD, or`,
    'YYYY-MM-DDTHH:MM; UTC unless an offset such as -05:00 follows; later than the sandbox time, within',
    `${SANDBOX_ADVANCE_DAYS_MAX} days). Walking there a quarter hour at a time, it runs at each step what the`,
    "server's scheduler runs at that instant, in its order: rail settlement and returns (and the ACH files with",
    "EWA_RAIL=ach), salary accrual and the accessible-share credit, the demo workers' shifts, payday, the purge",
    'of expired idempotency keys. Each run is claimed once in scheduled_runs, as the scheduler claims it, so',
    'nothing runs twice, whoever ran it. Time only moves forward; `ewa sandbox reset` puts it back.',
    '',
    'One advance (or reset) runs at a time on a database: another one meanwhile exits 1 with nothing done. An',
    'advance cut off (a crash, a job that failed) leaves the clock at the last step done; advancing again goes on',
    'from there. Progress goes to standard error. UAT only.',
    '',
    'Examples: ewa sandbox advance --days 14',
    '          ewa sandbox advance --to 2026-04-03T09:30-04:00',
  ].join('\n'),
  options: { days: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } },
  run: (flags, _positionals, context) => {
    const target = advanceTargetOf({ days: flags.days, to: flags.to }, (field) => `--${field}`);
    return withSandbox('advance', context, async (controls) => {
      let progress: ReturnType<typeof startProgress> | undefined;
      let report: AdvanceReport;
      try {
        report = await controls.advance(target, {
          label: (field) => `--${field}`,
          onProgress(done, total) {
            progress ??= startProgress(context, 'Advancing the sandbox', total);
            progress.update(done);
          },
        });
      } catch (error) {
        if (!(error instanceof SandboxAdvanceError)) throw error;
        writeLine(context.stderr, `ewa sandbox advance: ${error.message}`);
        return 1;
      } finally {
        progress?.stop();
      }
      const time = await controls.time();
      if (flags.json) {
        writeLine(
          context.stdout,
          JSON.stringify({
            from: report.from.toISOString(),
            to: report.to.toISOString(),
            steps: report.steps,
            ...timeJson(time),
            jobs: report.jobs,
          }),
        );
        return 0;
      }
      writeLine(context.stdout, advanceText(report, time));
      return 0;
    });
  },
};

/** The summary of an advance: where it went, then each job's runs and the figures of what it did. */
function advanceText(report: AdvanceReport, time: SandboxTime): string {
  const width = Math.max(...Object.keys(report.jobs).map((name) => name.length), 4);
  const lines = Object.entries(report.jobs).map(([name, { runs, ...figures }]) => {
    const done = Object.entries(figures)
      .filter(([, value]) => value !== 0)
      .map(([key, value]) => `${key} ${value}`);
    return `  ${name.padEnd(width)}  ${runs} runs${done.length > 0 ? `: ${done.join(', ')}` : ''}`;
  });
  return [
    `Advanced the sandbox from ${report.from.toISOString()} to ${report.to.toISOString()} in ${report.steps} steps.`,
    ...lines,
    timeLine(time),
  ].join('\n');
}

const resetCommand: Command = {
  name: 'sandbox reset',
  summary: 'Put the sandbox back to its demo data, with the clock at real time',
  help: [
    'Usage: ewa sandbox reset [--json]',
    '',
    'Empties the employers, people, jobs, accounts, cards, earnings, paychecks, transfers, ledger, idempotency',
    'answers and scheduled runs (everything the demo data and what was done with it are made of), writes the demo',
    'data again as a first start does (its history as of now), and sets the sandbox clock back to real time. The',
    'emptying and the new demo records are one transaction. OAuth clients and their links to the demo employers,',
    'signing keys, tokens and webhook endpoints stay. UAT only.',
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  run: (flags, _positionals, context) =>
    withSandbox('reset', context, async (controls) => {
      const report = await controls.reset();
      const time = await controls.time();
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({
              demo: report.demo === 'BEING_MADE' ? 'being-made' : 'seeded',
              ...timeJson(time),
            })
          : `Reset the sandbox.\n${describeDemoSeed(report.demo)}\n${timeLine(time)}`,
      );
      return 0;
    }),
};

export const sandboxCommands: Command[] = [clockCommand, advanceCommand, resetCommand];
