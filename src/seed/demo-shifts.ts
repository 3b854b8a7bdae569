import { sql } from 'kysely';
import { addDays, localDateOf, weekdaysBetween } from '../domain/calendar.ts';
import { everyMinutesRunKey, type ScheduledJob } from '../jobs/scheduler.ts';
import type { EarningsInput } from '../money/earnings/earnings-recorder.ts';
import { loadJobTerms, payCalendarOf } from '../money/earnings/job-terms.ts';
import { payPeriodContaining, previousPayPeriod } from '../money/earnings/pay-periods.ts';
import type { MoneyCore } from '../money/money-core.ts';
import { DEMO_SHIFT_HOURS } from './demo-history.ts';

export interface DemoShiftsReport {
  jobs: number;
  shifts: number;
  creditedMinor: number;
}

/**
 * The demo's hourly workers keep working: each weekday that has ended (their employer's time zone) becomes a shift
 * of DEMO_SHIFT_HOURS, recorded as the demo history records them (`demo-<day>`), so that a sandbox whose time moves
 * on (by its clock, or by living through the days) keeps earning, advancing and paying out as the salaried worker's
 * accrual does. Only jobs of `organizationIds` that the demo history gave shifts: an operator's own workers never get
 * any. Like salary accrual, a job catches up from the day after its last demo shift, reaching back into the
 * previous pay period at most, and each day is recorded once (by its id) however often or on how many processes
 * this runs.
 */
export async function recordDemoShifts(
  core: MoneyCore,
  organizationIds: readonly string[],
  now: Date,
): Promise<DemoShiftsReport> {
  const { rows } = await sql<{ id: string; last_day: string | null }>`select j.id,
      (select max(e.worked_on)::text from earnings e
        where e.job_id = j.id and e.source = 'SHIFT' and e.external_id like 'demo-%') as last_day
    from jobs j
    where j.organization_id = any(${[...organizationIds]}::uuid[]) and j.activation_status = 'ACTIVATED'
      and j.wage_frequency = 'HOURLY'
    order by j.id`.execute(core.db);
  const worked = rows.flatMap((row) =>
    row.last_day === null ? [] : [{ id: row.id, lastDay: row.last_day }],
  );
  const terms = await loadJobTerms(
    core.db,
    worked.map((row) => row.id),
  );
  const inputs: EarningsInput[] = [];
  for (const row of worked) {
    const job = terms.get(row.id);
    if (!job) continue;
    const calendar = payCalendarOf(job.policy);
    const today = localDateOf(now, job.policy.timeZone);
    const reach = previousPayPeriod(calendar, payPeriodContaining(calendar, today)).firstDay;
    const first = row.lastDay < reach ? reach : addDays(row.lastDay, 1);
    for (const day of weekdaysBetween(first, addDays(today, -1)))
      inputs.push({
        jobId: job.jobId,
        externalId: `demo-${day}`,
        workedOn: day,
        hoursHundredths: DEMO_SHIFT_HOURS * 100,
        amountMinor: job.wageRateMinor * DEMO_SHIFT_HOURS,
        source: 'SHIFT',
      });
  }
  if (inputs.length === 0) return { jobs: 0, shifts: 0, creditedMinor: 0 };
  // A shift of a period whose deposit day has passed is still owed while payroll has not closed that period.
  const recorded = await core.earnings.record(inputs, now, { backdated: 'RECORD' });
  return {
    jobs: new Set(inputs.map((input) => input.jobId)).size,
    shifts: recorded.outcomes.filter((outcome) => outcome === 'RECORDED').length,
    creditedMinor: recorded.creditedMinor,
  };
}

/** The scheduled job: hourly, as salary accrual, so that a day's shift is there before payroll closes its period. */
export function demoShiftsJob(core: MoneyCore, organizationIds: readonly string[]): ScheduledJob {
  return {
    name: 'demo-shifts',
    runKeyAt: (now) => everyMinutesRunKey(now, 60),
    intervalSeconds: 3600,
    run: async ({ now }) => ({ ...(await recordDemoShifts(core, organizationIds, now)) }),
  };
}
