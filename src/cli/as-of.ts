import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { localDateOf, localInstant } from '../domain/calendar.ts';
import { isCalendarDay, parseInstant } from '../domain/date-text.ts';
import { ACH_TIME_ZONE } from '../rails/ach/ach-windows.ts';
import { UsageError } from './command.ts';

/**
 * The instant `ewa payroll run` and `ewa settle` act as of. Both close or resolve for good whatever is due by it:
 * a run as of a time still to come would close pay periods that have not ended (balances emptied, their earnings
 * refused), settle advances and deposit paychecks before the rail has delivered them. So an instant later than now
 * is refused unless the operator passes --allow-future, and then it is said on standard error.
 */
export interface AsOf {
  instant: Date;
  /** Later than now: allowed by --allow-future. */
  future: boolean;
  /** --date named today somewhere, and the run is as of now rather than the end of that day, still to come. */
  clamped: boolean;
}

/** `--date 2026-03-20`: the end of that day in UTC, so a run "on" a day sees everything due that day. */
export function endOfDay(text: unknown): Date {
  const day = String(text);
  if (!isCalendarDay(day)) throw new UsageError(`--date must be a calendar day, YYYY-MM-DD (got "${day}").`);
  return new Date(`${day}T23:59:59.999Z`);
}

/**
 * The morning of `day` a run still to come acts as of: 10:00 in New York. By then the day has begun in every time zone
 * (UTC−12 last, at 08:00 New York at the latest), so every pay period that ended the day before is closed, and the
 * rails have delivered the morning's credits (ACH at 08:30, the sandbox at 09:00); it is before the day's first ACH
 * cut-off (10:30), so the payouts go in that day's first window and take their effective date from it, as they do
 * when the scheduler pays on that morning. The end of the day would put them after its last window.
 */
export function businessMorningOf(day: string): Date {
  return localInstant(day, PAYDAY_MORNING, ACH_TIME_ZONE);
}

const PAYDAY_MORNING = '10:00';

/** `--at`: an ISO 8601 instant with its offset; a bare date or time would leave the zone to guess. */
export function instantOf(text: unknown): Date {
  const value = String(text);
  const instant = parseInstant(value);
  if (!instant)
    throw new UsageError(
      `--at must be an ISO 8601 instant with its offset, on the calendar, such as 2026-03-20T14:00:00Z (got "${value}").`,
    );
  return instant;
}

/**
 * The latest calendar day it is, at `now`, anywhere a run applies: in UTC (the zone of --date) and in each
 * organization's time zone. An employer far east of UTC may be in tomorrow already: its operator's "today" is a day whose
 * end in UTC is still to come.
 */
export async function latestToday(db: Db, now: Date): Promise<string> {
  const { rows } = await sql<{ time_zone: string }>`select distinct time_zone
    from organization_policies`.execute(db);
  // Calendar days as YYYY-MM-DD sort as text.
  return [localDateOf(now, 'UTC'), ...rows.map((row) => localDateOf(now, row.time_zone))].sort().at(-1)!;
}

/**
 * `--date` of `ewa payroll run`: the end of that day in UTC when it has passed (a catch-up sees all that was due
 * that day); now when the day is today somewhere (UTC or an organization's zone) and its end is still to come;
 * refused when the day is later than that, unless `allowFuture`, which takes the day's morning
 * (`businessMorningOf`), or now once that morning has passed.
 */
export function payrollAsOf(day: string, end: Date, now: Date, today: string, allowFuture: boolean): AsOf {
  if (end.getTime() <= now.getTime()) return { instant: end, future: false, clamped: false };
  if (allowFuture) {
    const morning = businessMorningOf(day);
    if (morning.getTime() > now.getTime()) return { instant: morning, future: true, clamped: false };
    return { instant: now, future: false, clamped: true };
  }
  if (day <= today) return { instant: now, future: false, clamped: true };
  throw new UsageError(
    `--date ${day} is in the future: today is ${today} at the latest (in UTC and in every organization's time zone). ` +
      'A run as of a later day closes now, for good, every pay period that ends by 10:00 New York time that day: ' +
      'its paychecks are paid out, its earnings balances go to zero and later earnings of it are refused. Give ' +
      '--allow-future as well to do that; nothing was done.',
  );
}

/** `--at` of `ewa settle`: refused when later than now, unless `allowFuture`. */
export function settlementAsOf(at: Date, now: Date, allowFuture: boolean): AsOf {
  if (at.getTime() <= now.getTime()) return { instant: at, future: false, clamped: false };
  if (allowFuture) return { instant: at, future: true, clamped: false };
  throw new UsageError(
    `--at ${at.toISOString()} is in the future (it is now ${now.toISOString()}). Settling as of a later instant ` +
      'resolves now, for good, every advance due by then (SETTLED or FAILED) and deposits every paycheck due by ' +
      'then, before the rail has delivered them. Give --allow-future as well to do that; nothing was done.',
  );
}

/** The line a future run writes to standard error before it acts. */
export function futureWarning(asOf: AsOf, now: Date, effect: string): string {
  const hours = (asOf.instant.getTime() - now.getTime()) / 3_600_000;
  const whole = Math.ceil(hours);
  const ahead = hours >= 48 ? `${Math.floor(hours / 24)} days` : `${whole} hour${whole === 1 ? '' : 's'}`;
  return `--allow-future: as of ${asOf.instant.toISOString()}, ${ahead} ahead of now: ${effect}`;
}
