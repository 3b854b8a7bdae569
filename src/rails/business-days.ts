/**
 * Bank business days for US payment rails. A day is a 'YYYY-MM-DD' string, as in `domain/calendar.ts`.
 * The federal holidays come from `@18f/us-federal-holidays` (`allForYear`), bent to the Federal Reserve's rule:
 * one on a Sunday is observed the Monday after, one on a Saturday is not observed at all (the Friday before stays a
 * business day), unlike the federal-employee rule the library defaults to. Hence:
 * - `shiftSundayHolidays: true` moves a Sunday holiday to Monday;
 * - `shiftSaturdayHolidays: false` leaves a Saturday holiday on the Saturday, and since the library still lists it
 *   there, it is dropped here (banks are closed that day anyway);
 * - only the library's `dateString` is read: it is built and formatted in the process's local time zone, so it is the
 *   right calendar day whatever TZ is, while its `date` is local midnight and would shift a day when read in UTC;
 * - Juneteenth is dropped before 2022: the library lists it from 2021, the Federal Reserve first closed for it in 2022;
 * - an Inauguration Day entry (a holiday for federal employees around Washington, D.C.; version 4.0.0 lists none) would
 *   be dropped: banks stay open.
 */
import { allForYear } from '@18f/us-federal-holidays';
import { addDays, weekdayOf } from '../domain/calendar.ts';

const SUNDAY = 0;
const SATURDAY = 6;
// Three holidays and a weekend can sit side by side at most; a longer run means a broken calendar.
const NON_BUSINESS_DAYS_IN_A_ROW_MAX = 7;
const FEDERAL_RESERVE_SHIFT = { shiftSaturdayHolidays: false, shiftSundayHolidays: true } as const;
const FIRST_FED_JUNETEENTH_YEAR = 2022;

/** Whether banks close for this library holiday in `year`, weekends aside. */
function isBankHoliday(name: string, year: number): boolean {
  if (/inauguration/i.test(name)) return false;
  if (/juneteenth/i.test(name)) return year >= FIRST_FED_JUNETEENTH_YEAR;
  return true;
}

const holidaysByYear = new Map<number, ReadonlySet<string>>();

function holidaySet(year: number): ReadonlySet<string> {
  let holidays = holidaysByYear.get(year);
  if (!holidays) {
    const days: string[] = [];
    for (const holiday of allForYear(year, FEDERAL_RESERVE_SHIFT)) {
      const day = holiday.dateString;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number(day.slice(0, 4)) !== year)
        throw new Error(`unexpected date ${day} for ${holiday.name} in ${year}`);
      const weekday = weekdayOf(day);
      if (weekday !== SATURDAY && weekday !== SUNDAY && isBankHoliday(holiday.name, year)) days.push(day);
    }
    holidays = new Set(days.sort());
    holidaysByYear.set(year, holidays);
  }
  return holidays;
}

/** The days of `year` on which banks close for a federal holiday, in calendar order. */
export function federalHolidays(year: number): string[] {
  return [...holidaySet(year)];
}

export function isBusinessDay(day: string): boolean {
  const weekday = weekdayOf(day);
  if (weekday === SATURDAY || weekday === SUNDAY) return false;
  return !holidaySet(Number(day.slice(0, 4))).has(day);
}

/** The first business day strictly after `day`. */
export function nextBusinessDay(day: string): string {
  let candidate = addDays(day, 1);
  for (let skipped = 0; !isBusinessDay(candidate); skipped++) {
    if (skipped >= NON_BUSINESS_DAYS_IN_A_ROW_MAX)
      throw new Error(`no business day within a week after ${day}`);
    candidate = addDays(candidate, 1);
  }
  return candidate;
}
