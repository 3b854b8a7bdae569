import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { createMoneyCore } from '../earnings/money-core.ts';
import { type PayrollReport, runPayroll } from '../earnings/payroll.ts';
import { type SettlementReport, settleDue } from '../earnings/settlement.ts';
import { type Command, UsageError, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

/** `--date 2026-03-20`: the end of that day in UTC, so a run "on" a day sees everything due that day. */
function endOfDay(text: unknown): Date {
  const day = String(text);
  const instant = new Date(`${day}T23:59:59.999Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(day) ||
    Number.isNaN(instant.getTime()) ||
    !instant.toISOString().startsWith(day)
  )
    throw new UsageError(`--date must be a calendar day, YYYY-MM-DD (got "${day}").`);
  return instant;
}

/** `--at`: an ISO 8601 instant with its offset; a bare date or time would leave the zone to guess. */
function instantOf(text: unknown): Date {
  const value = String(text);
  const instant = new Date(value);
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) ||
    Number.isNaN(instant.getTime())
  )
    throw new UsageError(`--at must be an ISO 8601 instant such as 2026-03-20T14:00:00Z (got "${value}").`);
  return instant;
}

/** Why the paychecks still PROCESSING wait (NO_DEFAULT_ACCOUNT, PENDING_ADVANCES), with how many of each. */
async function heldReasons(db: Db): Promise<Record<string, number>> {
  const { rows } = await sql<{ reason: string; n: number }>`select payout_held_reason as reason,
      count(*)::integer as n
    from paychecks where status = 'PROCESSING' and payout_held_reason is not null
    group by payout_held_reason order by payout_held_reason`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.reason, Number(row.n)]));
}

function add(a: SettlementReport, b: SettlementReport): SettlementReport {
  return {
    settled: a.settled + b.settled,
    failed: a.failed + b.failed,
    deposited: a.deposited + b.deposited,
  };
}

function settlementLines(report: SettlementReport): string[] {
  return [
    `  settled    ${report.settled}  advances delivered`,
    `  failed     ${report.failed}  advances the rail refused (amount and fee back in the earnings balance)`,
    `  deposited  ${report.deposited}  paychecks arrived`,
  ];
}

function heldText(reasons: Record<string, number>): string {
  const parts = Object.entries(reasons).map(([reason, count]) => `${reason} ${count}`);
  return parts.length > 0 ? `  (${parts.join(', ')})` : '';
}

const payrollRunCommand: Command = {
  name: 'payroll run',
  summary: 'Payday: close ended pay periods, pay out paychecks, then settle what the rail has finished',
  help: [
    'Usage: ewa payroll run [--date YYYY-MM-DD] [--json]',
    '',
    'Runs what the scheduler runs, as of the end of --date (23:59:59.999 UTC; now without it): advances the rail',
    'has finished are settled (or failed) first, so that they hold no paycheck back; every pay period that has',
    'ended moves from ESTIMATED to PROCESSING; each PROCESSING paycheck is paid (what is left in the earnings',
    "balance for it leaves the balance, net pay less advances goes to the job's default bank account or card,",
    'IN_TRANSIT) or held, with the reason (NO_DEFAULT_ACCOUNT, PENDING_ADVANCES); then settlement runs again, so a',
    'paycheck whose deposit day has come is DEPOSITED. Safe to run again: nothing is ever paid twice.',
    'Progress goes to standard error, the summary to standard output. Exit code 0, held paychecks or not.',
  ].join('\n'),
  options: { date: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const now = flags.date === undefined ? new Date() : endOfDay(flags.date);
    return withMigratedDatabase(context, async ({ config, database }) => {
      const core = createMoneyCore(database.db, config);
      const before = await settleDue(core.db, core.ledger, core.rail, now);
      let progress: ReturnType<typeof startProgress> | undefined;
      let payroll: PayrollReport;
      try {
        payroll = await runPayroll(core.db, core.ledger, core.rail, now, {
          onProgress(done, total) {
            progress ??= startProgress(context, 'Paying paychecks', total);
            progress.update(done);
          },
        });
      } finally {
        progress?.stop();
      }
      const held = await heldReasons(core.db);
      const settlement = add(before, await settleDue(core.db, core.ledger, core.rail, now));
      if (flags.json) {
        writeLine(
          context.stdout,
          JSON.stringify({ as_of: now.toISOString(), ...payroll, held_reasons: held, ...settlement }),
        );
        return 0;
      }
      writeLine(
        context.stdout,
        [
          `Payroll as of ${now.toISOString()}`,
          `  closed     ${payroll.closed}  pay periods ended (ESTIMATED → PROCESSING)`,
          `  paid       ${payroll.paid}  paychecks sent (IN_TRANSIT, or DEPOSITED when advances took it all)`,
          `  held       ${payroll.held}  paychecks waiting${heldText(held)}`,
          ...settlementLines(settlement),
        ].join('\n'),
      );
      return 0;
    });
  },
};

const settleCommand: Command = {
  name: 'settle',
  summary: 'Settle what the payment rail has finished: advances SETTLED or FAILED, paychecks DEPOSITED',
  help: [
    'Usage: ewa settle [--at ISO_INSTANT] [--json]',
    '',
    'Resolves, as of --at (now without it), every advance whose settlement time has passed (SETTLED, or FAILED',
    'with the amount and fee back in the earnings balance) and every paycheck IN_TRANSIT whose deposit has',
    'arrived (DEPOSITED). The scheduler does this every minute; this runs it once, for a given instant.',
    '',
    'Example: ewa settle --at 2026-03-20T14:00:00Z',
  ].join('\n'),
  options: { at: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const now = flags.at === undefined ? new Date() : instantOf(flags.at);
    return withMigratedDatabase(context, async ({ config, database }) => {
      const core = createMoneyCore(database.db, config);
      const report = await settleDue(core.db, core.ledger, core.rail, now);
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({ as_of: now.toISOString(), ...report })
          : [`Settlement as of ${now.toISOString()}`, ...settlementLines(report)].join('\n'),
      );
      return 0;
    });
  },
};

export const payrollCommands: Command[] = [payrollRunCommand, settleCommand];
