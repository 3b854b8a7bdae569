import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { addDays, localDateOf, weekdaysBetween } from '../../domain/calendar.ts';
import type { EarningsInput, EarningsRecorder } from './earnings-recorder.ts';
import { loadJobTerms, payCalendarOf } from './job-terms.ts';
import { payPeriodContaining, previousPayPeriod } from './pay-periods.ts';
import { salaryPerWorkingDayMinor } from './paycheck-math.ts';

export interface AccrualReport {
  jobs: number;
  days: number;
  creditedMinor: number;
}

/**
 * Salaried jobs earn one working day's pay for each weekday that has ended (local time of the employer), recorded
 * as earnings with id `salary:<day>`: running it again, or on many processes, records each day once. The last day
 * of a period is recorded on the first run of the next one, before payroll closes the period when both run in
 * the same tick; a day whose period is closed already is refused (PERIOD_CLOSED), not moved. Jobs are visited in id order, in batches, each recorded in a transaction of its own.
 */
export async function accrueSalaries(
  db: Db,
  recorder: EarningsRecorder,
  now: Date,
  batchSize = 500,
): Promise<AccrualReport> {
  const report: AccrualReport = { jobs: 0, days: 0, creditedMinor: 0 };
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await sql<{ id: string; last_day: string | null }>`select j.id,
        (select max(e.worked_on)::text from earnings e where e.job_id = j.id and e.source = 'SALARY') as last_day
      from jobs j where j.activation_status = 'ACTIVATED' and j.wage_frequency <> 'HOURLY'
        and j.id > ${after}::uuid
      order by j.id limit ${batchSize}`.execute(db);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    const terms = await loadJobTerms(
      db,
      rows.map((row) => row.id),
    );
    const inputs: EarningsInput[] = [];
    for (const row of rows) {
      const job = terms.get(row.id);
      if (!job) continue;
      const calendar = payCalendarOf(job.policy);
      const today = localDateOf(now, job.policy.timeZone);
      const period = payPeriodContaining(calendar, today);
      const yesterday = addDays(today, -1);
      // A job accrues from the day after its last accrued one, reaching back into the previous period at most (its
      // last day has ended only once the new period has begun); a job never accrued starts with the open period.
      const reach = previousPayPeriod(calendar, period).firstDay;
      let first = period.firstDay;
      if (row.last_day) first = row.last_day < reach ? reach : addDays(row.last_day, 1);
      if (first > yesterday) continue;
      const amountMinor = salaryPerWorkingDayMinor(job.wageRateMinor, job.wageFrequency);
      if (amountMinor <= 0) continue;
      for (const day of weekdaysBetween(first, yesterday))
        inputs.push({
          jobId: job.jobId,
          externalId: `salary:${day}`,
          workedOn: day,
          hoursHundredths: null,
          amountMinor,
          source: 'SALARY',
        });
    }
    if (inputs.length === 0) continue;
    // The previous period's last days are caught up even when its deposit day has passed (payday offset 0, or the
    // scheduler stopped a while): while payroll has not closed it, that pay is still owed on it.
    const recorded = await recorder.record(inputs, now, { backdated: 'RECORD' });
    report.jobs += new Set(inputs.map((input) => input.jobId)).size;
    report.days += recorded.outcomes.filter((outcome) => outcome === 'RECORDED').length;
    report.creditedMinor += recorded.creditedMinor;
  }
  return report;
}
