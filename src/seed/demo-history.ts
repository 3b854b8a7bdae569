import { addDays, localDateOf, startOfLocalDay, weekdaysBetween } from '../domain/calendar.ts';
import type { TransferRequest } from '../money/advances/advance-service.ts';
import type { EarningsInput } from '../money/earnings/earnings-recorder.ts';
import {
  type PayCalendar,
  type PayPeriod,
  payPeriodContaining,
  previousPayPeriod,
} from '../money/earnings/pay-periods.ts';
import type { MoneyCore } from '../money/money-core.ts';
import { createSandboxRail } from '../rails/sandbox-rail.ts';

/** The demo history is the sandbox's, whatever rail pays bank accounts in this process: it plans with it. */
const SANDBOX = createSandboxRail();

/** A demo worker as the history needs it: who, which job and accounts, and what a day of work pays. */
export interface DemoWorker {
  personId: string;
  jobId: string;
  balanceAccountId: string;
  depositoryId: string;
  /** One shift (hourly) or one working day of salary, in minor units. */
  dayPayMinor: number;
  salaried: boolean;
  /** Stable ids for this worker's advances, so the README and scripts can name them. */
  advanceIds: { settled: string; failed: string; pending: string };
}

/** A demo worker's next-day advance from their earnings balance to their checking account. */
export function demoAdvanceRequest(
  worker: Pick<DemoWorker, 'personId' | 'balanceAccountId' | 'depositoryId'>,
  id: string,
  amountMinor: number,
): TransferRequest {
  return {
    id,
    amountMinor,
    currency: 'USD',
    schedule: 'NEXT_BUSINESS_DAY',
    preview: false,
    originId: worker.balanceAccountId,
    destinationId: worker.depositoryId,
    personId: worker.personId,
  };
}

const HOUR_MS = 3_600_000;
/** A demo shift: its hours, and the pay of a shift is the hourly rate times these. */
export const DEMO_SHIFT_HOURS = 8;
/**
 * Gross pay recorded in the open period, at least: with the default policy (withholding 25 %, access 50 %) $300
 * gross makes $112.50 accessible, so $100 stays available after the pending advance below.
 */
const CURRENT_GROSS_MIN_MINOR = 30_000;
const ADVANCE_SETTLED_MINOR = 5_000;
/** The sandbox rail fails this amount (ACCOUNT_CLOSED): a FAILED advance in every worker's history. */
const ADVANCE_FAILED_MINOR = 1_313;
const ADVANCE_PENDING_MINOR = 1_000;

/** One step of the demo history: its own transactions, safe to run again after it or a later step ran. */
export interface DemoHistoryStep {
  name: string;
  run(): Promise<void>;
}

/**
 * The steps that give every demo worker a history made by the real money services, relative to `now`: a past pay
 * period that was worked, advanced from (one advance SETTLED, one FAILED) and paid (its paycheck DEPOSITED), and the
 * open period with shifts through today and one advance still PENDING. Each step runs at the instant it would have
 * happened, so postings, transfers and paychecks carry believable dates, and the 24-hour limits see what they would
 * have. Every step can be run again (shifts by their ids, advances by theirs, payroll and settlement do only what
 * is left), so a history cut off at any point is finished by running all the steps again with the same `now`.
 */
export function demoHistorySteps(
  core: MoneyCore,
  calendar: PayCalendar,
  workers: readonly DemoWorker[],
  now: Date,
): DemoHistoryStep[] {
  const today = localDateOf(now, calendar.timeZone);
  const current = payPeriodContaining(calendar, today);
  const past = lastPeriodPaidBy(calendar, current, now);
  const at = (day: string, hours: number) =>
    new Date(startOfLocalDay(day, calendar.timeZone).getTime() + hours * HOUR_MS);
  // The past period: two days worked, two advances on the second evening (the rail resolves them the next
  // business day, when settlement runs), then the rest of the period.
  const secondDay = addDays(past.firstDay, 1);
  const advancedAt = at(secondDay, 18);
  const days = weekdaysBetween(current.firstDay, today);
  return [
    {
      name: 'past period: first two days worked',
      run: () => recordDays(core, workers, weekdaysBetween(past.firstDay, secondDay), 0, at(secondDay, 17)),
    },
    {
      name: 'past period: two advances, resolved by the rail',
      run: async () => {
        // Workers are independent (each advance locks its own person), so theirs are made side by side.
        const settleAfter = await Promise.all(
          workers.map(async (worker) => [
            await advance(core, worker, worker.advanceIds.settled, ADVANCE_SETTLED_MINOR, advancedAt),
            await advance(
              core,
              worker,
              worker.advanceIds.failed,
              ADVANCE_FAILED_MINOR,
              new Date(advancedAt.getTime() + 10 * 60_000),
            ),
          ]),
        );
        const resolvedAt = new Date(Math.max(...settleAfter.flat().map((instant) => instant.getTime())));
        await core.settle(resolvedAt);
      },
    },
    {
      name: 'past period: the other days worked',
      run: () =>
        recordDays(
          core,
          workers,
          weekdaysBetween(addDays(secondDay, 1), past.lastDay),
          0,
          at(past.lastDay, 20),
        ),
    },
    {
      // Payday as the scheduler runs it (01:00 local after the period).
      name: 'past period: payday',
      run: async () => {
        await core.payroll(payrollInstant(past));
      },
    },
    {
      name: 'past period: the pay arrives',
      run: async () => {
        await core.settle(depositInstant(past));
      },
    },
    {
      name: 'open period: shifts through today',
      run: () => recordDays(core, workers, days.length > 0 ? days : [today], CURRENT_GROSS_MIN_MINOR, now),
    },
    {
      name: 'open period: an advance made now, settled next business day',
      run: async () => {
        await Promise.all(
          workers.map((worker) =>
            advance(core, worker, worker.advanceIds.pending, ADVANCE_PENDING_MINOR, now),
          ),
        );
      },
    },
  ];
}

/**
 * The latest period before `current` whose pay has arrived by `now`: the previous one, or — early in the current
 * period, before the previous period's deposit date — the one before it.
 */
function lastPeriodPaidBy(calendar: PayCalendar, current: PayPeriod, now: Date): PayPeriod {
  let period = previousPayPeriod(calendar, current);
  while (depositInstant(period) > now) period = previousPayPeriod(calendar, period);
  return period;
}

function payrollInstant(period: PayPeriod): Date {
  return new Date(period.endsAt.getTime() + HOUR_MS);
}

/** When the sandbox rail delivers a paycheck of this period paid at payrollInstant. */
function depositInstant(period: PayPeriod): Date {
  return SANDBOX.settleAt({
    purpose: 'PAYCHECK',
    schedule: 'NEXT_BUSINESS_DAY',
    submittedAt: payrollInstant(period),
    notBefore: period.depositExpectedAt,
  });
}

/**
 * Records a day's pay for each worker on each of `days`, through the earnings recorder, in one transaction. An
 * hourly worker short of `grossMinMinor` works extra shifts (a double shift on a period's first day); salaried
 * days use the id the salary accrual uses (`salary:<day>`), so the scheduler never records them again.
 */
async function recordDays(
  core: MoneyCore,
  workers: readonly DemoWorker[],
  days: readonly string[],
  grossMinMinor: number,
  recordedAt: Date,
): Promise<void> {
  if (days.length === 0) return;
  const inputs: EarningsInput[] = [];
  for (const worker of workers) {
    const units = worker.salaried
      ? days.length
      : Math.max(days.length, Math.ceil(grossMinMinor / worker.dayPayMinor));
    for (let unit = 0; unit < units; unit++) {
      const day = days[unit % days.length]!;
      const round = Math.floor(unit / days.length);
      inputs.push({
        jobId: worker.jobId,
        externalId: worker.salaried ? `salary:${day}` : `demo-${day}${round > 0 ? `-${round + 1}` : ''}`,
        workedOn: day,
        hoursHundredths: worker.salaried ? null : DEMO_SHIFT_HOURS * 100,
        amountMinor: worker.dayPayMinor,
        source: worker.salaried ? 'SALARY' : 'SHIFT',
      });
    }
  }
  // History replayed at its own instants: each day is recorded before its deposit day, as the file of an employer
  // would be; RECORD states it rather than depending on it.
  await core.earnings.record(inputs, recordedAt, { backdated: 'RECORD' });
}

/**
 * An advance to the worker's bank account, next business day (free for bank accounts by default), unless one with
 * this id was made already; returns when the rail resolves it.
 */
async function advance(
  core: MoneyCore,
  worker: DemoWorker,
  id: string,
  amountMinor: number,
  submittedAt: Date,
): Promise<Date> {
  const settleAt = (at: Date) =>
    SANDBOX.settleAt({ purpose: 'ADVANCE', schedule: 'NEXT_BUSINESS_DAY', submittedAt: at });
  const made = await core.db
    .selectFrom('transfers')
    .select('submitted_at')
    .where('id', '=', id)
    .executeTakeFirst();
  if (made) return settleAt(new Date(made.submitted_at));
  const { transfer } = await core.transfers.create(
    worker.personId,
    demoAdvanceRequest(worker, id, amountMinor),
    submittedAt,
  );
  return settleAt(transfer.submittedAt);
}
