import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { localDateOf, weekdaysBetween } from '../domain/calendar.ts';
import { type PayCalendar, payPeriodContaining, previousPayPeriod } from '../money/earnings/pay-periods.ts';

export const GENERATED_PEOPLE_MAX = 1_000_000;
const CHUNK_PEOPLE = 5_000;
const SHIFT_HOURS = 8;
const CALENDAR: PayCalendar = {
  frequency: 'BIWEEKLY',
  anchor: '2026-01-05',
  timeZone: 'America/New_York',
  paydayOffsetDays: 5,
};

export interface GeneratedSeed {
  organizationId: string;
  people: number;
  paychecks: number;
  earnings: number;
}

/**
 * Generates an employer with `people` workers for load and scale tests: each with a person, an ACTIVATED
 * hourly job, an earnings balance, a deposited paycheck for the last period and an open one with a shift for every
 * working day so far. Rows are made by the database from generate_series, a chunk per transaction, so a run that
 * is stopped keeps whole chunks only.
 */
export async function seedGeneratedPeople(
  db: Db,
  options: { people: number; now: Date; onProgress?: (done: number) => void },
): Promise<GeneratedSeed> {
  const run = randomUUID();
  const organizationId = randomUUID();
  const today = localDateOf(options.now, CALENDAR.timeZone);
  const current = payPeriodContaining(CALENDAR, today);
  const previous = previousPayPeriod(CALENDAR, current);
  const currentDays = weekdaysBetween(current.firstDay, today);
  const previousDays = weekdaysBetween(previous.firstDay, previous.lastDay).length;

  await withTransaction(db, async (tx) => {
    await tx
      .insertInto('organizations')
      .values({ id: organizationId, name: `Generated Employer ${run.slice(0, 8)}`, products: ['ODP'] })
      .execute();
    await tx
      .insertInto('organization_policies')
      .values({
        organization_id: organizationId,
        time_zone: CALENDAR.timeZone,
        pay_frequency: CALENDAR.frequency,
        pay_calendar_anchor: CALENDAR.anchor,
        payday_offset_days: CALENDAR.paydayOffsetDays,
      })
      .execute();
  });

  let earnings = 0;
  for (let low = 1; low <= options.people; low += CHUNK_PEOPLE) {
    const high = Math.min(options.people, low + CHUNK_PEOPLE - 1);
    await withTransaction(db, async (tx) => {
      const series = sql`generate_series(${low}::int, ${high}::int) as g(i)`;
      const person = sql`md5(${run} || ':person:' || i)::uuid`;
      const job = sql`md5(${run} || ':job:' || i)::uuid`;
      const balance = sql`md5(${run} || ':balance:' || i)::uuid`;
      // Hourly rates from $15.00 to $29.99, spread over the workers.
      const rate = sql`(1500 + (i * 7919) % 1500)`;
      await sql`insert into people (id, email, first_name, last_name, state_of_residence)
        select ${person}, 'worker' || i || '.' || ${run.slice(0, 8)} || '@generated.example', 'Worker', 'No. ' || i, 'NY'
        from ${series}`.execute(tx);
      await sql`insert into accounts (id, person_id, account_type, subtype, name)
        select ${balance}, ${person}, 'EARNINGS_BALANCE', 'ODP', 'Earnings balance' from ${series}`.execute(
        tx,
      );
      await sql`insert into jobs (id, person_id, organization_id, external_primary_identifier, external_employee_id,
          first_name, last_name, wage_rate_minor, wage_frequency, direct_deposit_status, earnings_balance_account_id)
        select ${job}, ${person}, ${organizationId}, ${run.slice(0, 8)} || '-' || i, 'E' || i, 'Worker', 'No. ' || i,
          ${rate}, 'HOURLY', 'SETUP_COMPLETE', ${balance}
        from ${series}`.execute(tx);
      for (const [label, period, status, days] of [
        ['previous', previous, 'DEPOSITED', previousDays],
        ['current', current, 'ESTIMATED', currentDays.length],
      ] as const) {
        const gross = sql`(${rate} * ${SHIFT_HOURS} * ${days})`;
        await sql`insert into paychecks (id, job_id, person_id, status, pay_period_starts_at, pay_period_ends_at,
            deposit_expected_at, gross_earnings_minor, employer_withholdings_minor, net_earnings_minor)
          select md5(${run} || ':paycheck:' || ${label} || ':' || i)::uuid, ${job}, ${person}, ${status},
            ${period.startsAt}, ${period.lastDayStartsAt}, ${period.depositExpectedAt},
            ${gross}, ${gross} / 4, ${gross} - ${gross} / 4
          from ${series}`.execute(tx);
      }
      if (currentDays.length > 0) {
        await sql`insert into earnings (id, job_id, paycheck_id, external_id, worked_on, hours_hundredths, amount_minor, source)
          select md5(${run} || ':earning:' || i || ':' || d)::uuid, ${job},
            md5(${run} || ':paycheck:current:' || i)::uuid, 'shift-' || d, d::date, ${SHIFT_HOURS * 100},
            ${rate} * ${SHIFT_HOURS}, 'SHIFT'
          from ${series} cross join unnest(${currentDays}::text[]) as w(d)`.execute(tx);
      }
    });
    earnings += (high - low + 1) * currentDays.length;
    options.onProgress?.(high);
  }
  return { organizationId, people: options.people, paychecks: options.people * 2, earnings };
}
