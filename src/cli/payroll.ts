import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { achAttention } from '../jobs/money-jobs.ts';
import { createMoneyCore, type MoneyCore } from '../money/money-core.ts';
import type { PayrollReport } from '../money/payroll.ts';
import type { SettlementReport } from '../money/settlement.ts';
import {
  type AsOf,
  endOfDay,
  futureWarning,
  instantOf,
  latestToday,
  payrollAsOf,
  settlementAsOf,
} from './as-of.ts';
import { type Command, UsageError, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

/** Why the paychecks still PROCESSING wait (NO_DEFAULT_ACCOUNT, PENDING_ADVANCES), with how many of each. */
async function heldReasons(db: Db): Promise<Record<string, number>> {
  const { rows } = await sql<{ reason: string; n: number }>`select payout_held_reason as reason,
      count(*)::integer as n
    from paychecks where status = 'PROCESSING' and payout_held_reason is not null
    group by payout_held_reason order by payout_held_reason`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.reason, Number(row.n)]));
}

function add(a: CliSettlement, b: CliSettlement): CliSettlement {
  return {
    settled: a.settled + b.settled,
    failed: a.failed + b.failed,
    deposited: a.deposited + b.deposited,
    returned: a.returned + b.returned,
    achReturns: a.achReturns + b.achReturns,
    attention: [a.attention, b.attention].filter(Boolean).join('; ') || undefined,
  };
}

function settlementLines(report: CliSettlement): string[] {
  return [
    `  settled    ${report.settled}  advances delivered`,
    `  failed     ${report.failed}  advances the rail refused (amount and fee back in the earnings balance)`,
    `  deposited  ${report.deposited}  paychecks arrived`,
    `  returned   ${report.returned}  settled advances that came back (amount back in the earnings balance, or owed)`,
    `  ACH returns ${report.achReturns}  entries of the bank's return files applied (advances and paychecks)`,
  ];
}

/** The settlement's figures on the wire (--json). */
function settlementJson(report: CliSettlement) {
  return {
    settled: report.settled,
    failed: report.failed,
    deposited: report.deposited,
    returned: report.returned,
    ach_returns: report.achReturns,
    ...(report.attention ? { attention: report.attention } : {}),
  };
}

/**
 * Said on standard error, and the command exits 1, when the return files need a person: the scheduler logs it as a
 * job that needs attention, but a file this command read is not read again, so no one else would be told.
 */
function attentionCode(report: CliSettlement, stderr: NodeJS.WritableStream, command: string): number {
  if (!report.attention) return 0;
  writeLine(stderr, `ewa ${command}: the ACH return files need attention: ${report.attention}.`);
  return 1;
}

function heldText(reasons: Record<string, number>): string {
  const parts = Object.entries(reasons).map(([reason, count]) => `${reason} ${count}`);
  return parts.length > 0 ? `  (${parts.join(', ')})` : '';
}

const payrollRunCommand: Command = {
  name: 'payroll run',
  summary: 'Payday: close ended pay periods, pay out paychecks, then settle what the rail has finished',
  help: [
    'Usage: ewa payroll run [--date YYYY-MM-DD [--allow-future]] [--json]',
    '',
    'Runs what the scheduler runs, as of the end of --date (23:59:59.999 UTC; now without it): advances the rail',
    'has finished are settled (or failed) first, so that they hold no paycheck back; every pay period that has',
    'ended moves from ESTIMATED to PROCESSING; each PROCESSING paycheck is paid (what is left in the earnings',
    "balance for it leaves the balance, net pay less advances goes to the job's default bank account or card,",
    'IN_TRANSIT) or held, with the reason (NO_DEFAULT_ACCOUNT, PENDING_ADVANCES); then settlement runs again, so a',
    'paycheck whose deposit day has come is DEPOSITED. Safe to run again: nothing is ever paid twice.',
    '',
    "The run never looks past now: --date today (today in UTC or in any organization's time zone) runs as of now,",
    'since the end of that day is still to come, and a later --date is refused (exit code 2, nothing done).',
    "With --allow-future, a later --date runs as of 10:00 New York time that day, the scheduler's payday morning:",
    "every pay period ended by then, in any time zone, is closed and paid now, in that day's first ACH window",
    '(10:30), for good (the balances of those periods go to zero and earnings later recorded for them are',
    'refused), and advances and paychecks due by then are resolved before the rail has delivered them. The run',
    'says so on standard error first.',
    '',
    'Progress goes to standard error, the summary to standard output. Exit code 0, held paychecks or not.',
  ].join('\n'),
  options: { date: { type: 'string' }, 'allow-future': { type: 'boolean' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const allowFuture = flags['allow-future'] === true;
    if (allowFuture && flags.date === undefined)
      throw new UsageError('--allow-future goes with --date; without --date the run is as of now.');
    const end = flags.date === undefined ? undefined : endOfDay(flags.date);
    const clock = context.now?.() ?? new Date();
    return withMigratedDatabase(context, async ({ config, database }) => {
      const asOf: AsOf =
        end === undefined
          ? { instant: clock, future: false, clamped: false }
          : payrollAsOf(String(flags.date), end, clock, await latestToday(database.db, clock), allowFuture);
      if (asOf.future)
        writeLine(
          context.stderr,
          futureWarning(
            asOf,
            clock,
            'closing now, for good, every pay period that ends by then, and paying its paychecks.',
          ),
        );
      const now = asOf.instant;
      // The rails and the outbox work on the instant asked for, as the scheduler would have then.
      const core = createMoneyCore(database.db, config, { now: () => now });
      const before = await settleWithFiles(core, now);
      let progress: ReturnType<typeof startProgress> | undefined;
      let payroll: PayrollReport;
      try {
        payroll = await core.payroll(now, {
          onProgress(done: number, total: number) {
            progress ??= startProgress(context, 'Paying paychecks', total);
            progress.update(done);
          },
        });
      } finally {
        progress?.stop();
      }
      const held = await heldReasons(core.db);
      const settlement = add(before, await settleWithFiles(core, now));
      if (flags.json) {
        writeLine(
          context.stdout,
          JSON.stringify({
            as_of: now.toISOString(),
            ...payroll,
            held_reasons: held,
            ...settlementJson(settlement),
          }),
        );
        return attentionCode(settlement, context.stderr, 'payroll run');
      }
      writeLine(
        context.stdout,
        [
          `Payroll as of ${now.toISOString()}${asOfNote(asOf, flags.date)}`,
          `  closed     ${payroll.closed}  pay periods ended (ESTIMATED → PROCESSING)`,
          `  paid       ${payroll.paid}  paychecks sent (IN_TRANSIT, or DEPOSITED when advances took it all)`,
          `  held       ${payroll.held}  paychecks waiting${heldText(held)}`,
          ...settlementLines(settlement),
        ].join('\n'),
      );
      return attentionCode(settlement, context.stderr, 'payroll run');
    });
  },
};

const settleCommand: Command = {
  name: 'settle',
  summary: 'Settle what the payment rail has finished: advances SETTLED or FAILED, paychecks DEPOSITED',
  help: [
    'Usage: ewa settle [--at ISO_INSTANT [--allow-future]] [--json]',
    '',
    'Resolves, as of --at (now without it), every advance whose settlement time has passed (SETTLED, or FAILED',
    'with the amount and fee back in the earnings balance) and every paycheck IN_TRANSIT whose deposit has',
    'arrived (DEPOSITED). It sends what waits in the outbox first and, with EWA_RAIL=ach, cuts the ACH files due',
    'and reads the return files. The scheduler does this every minute; this runs it once, for a given instant.',
    '',
    'An --at later than now is refused (exit code 2, nothing done) unless --allow-future is given too: then every',
    'advance and paycheck due by --at is resolved now, for good, before the rail has delivered it. The command',
    'says so on standard error first.',
    '',
    'Example: ewa settle --at 2026-03-20T14:00:00Z',
  ].join('\n'),
  options: { at: { type: 'string' }, 'allow-future': { type: 'boolean' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const allowFuture = flags['allow-future'] === true;
    if (allowFuture && flags.at === undefined)
      throw new UsageError('--allow-future goes with --at; without --at settlement is as of now.');
    const clock = context.now?.() ?? new Date();
    const asOf: AsOf =
      flags.at === undefined
        ? { instant: clock, future: false, clamped: false }
        : settlementAsOf(instantOf(flags.at), clock, allowFuture);
    if (asOf.future)
      writeLine(
        context.stderr,
        futureWarning(
          asOf,
          clock,
          'resolving now, for good, every advance and paycheck due by then, before the rail has delivered it.',
        ),
      );
    const now = asOf.instant;
    return withMigratedDatabase(context, async ({ config, database }) => {
      // The rails and the outbox work on the instant asked for, as the scheduler would have then.
      const core = createMoneyCore(database.db, config, { now: () => now });
      const report = await settleWithFiles(core, now);
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({ as_of: now.toISOString(), ...settlementJson(report) })
          : [
              `Settlement as of ${now.toISOString()}${asOfNote(asOf, undefined)}`,
              ...settlementLines(report),
            ].join('\n'),
      );
      return attentionCode(report, context.stderr, 'settle');
    });
  },
};

/** After "as of …" in a summary: why the instant is not the one asked for, or that it is still to come. */
function asOfNote(asOf: AsOf, day: unknown): string {
  if (asOf.future) return ' (in the future: --allow-future)';
  if (asOf.clamped) return ` (now: the end of ${String(day)} in UTC is still to come)`;
  return '';
}

export const payrollCommands: Command[] = [payrollRunCommand, settleCommand];

/**
 * What the scheduler's every-minute jobs do, once: send the outbox, exchange the ACH files (cut the windows due,
 * read the return files; nothing without EWA_RAIL=ach), then settle what the rails have finished. The settlement
 * figures are what the rail resolved (the instructions sent before it are not counted), with the return files' own.
 */
async function settleWithFiles(core: MoneyCore, now: Date): Promise<CliSettlement> {
  await core.outbox.dispatchDue(now);
  const files = await core.exchangeAchFiles(now);
  const report = await core.settle(now);
  return {
    settled: report.settled,
    failed: report.failed,
    deposited: report.deposited,
    returned: report.returned,
    achReturns: files.returns ?? 0,
    attention: achAttention(files),
  };
}

/** A settlement as the CLI tells it: the rails' outcomes, the ACH returns applied, and what needs a person. */
interface CliSettlement extends SettlementReport {
  /** Return entries of the ACH return files read (advances and paychecks), applied. */
  achReturns: number;
  /** What in the return files needs a person (refused files, unmatched returns, notifications of change). */
  attention: string | undefined;
}
