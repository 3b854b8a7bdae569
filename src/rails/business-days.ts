/**
 * Bank business days for US payment rails. A day is a 'YYYY-MM-DD' string, as in `earnings/calendar.ts`.
 * Holidays follow the Federal Reserve's rule: one on a Sunday is observed the Monday after, one on a Saturday is
 * not observed at all (the Friday before stays a business day), unlike the federal-employee rule.
 */
import { addDays, weekdayOf } from '../domain/calendar.ts';

const SUNDAY = 0;
const MONDAY = 1;
const THURSDAY = 4;
const SATURDAY = 6;
// Three holidays and a weekend can sit side by side at most; a longer run means a broken calendar.
const NON_BUSINESS_DAYS_IN_A_ROW_MAX = 7;

function dayOf(year: number, month: number, date: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(date).padStart(2, '0')}`;
}

/** The `nth` (1-based) given weekday of a month. */
function nthWeekday(year: number, month: number, weekday: number, nth: number): string {
  const first = dayOf(year, month, 1);
  const shift = (weekday - weekdayOf(first) + 7) % 7;
  return addDays(first, shift + (nth - 1) * 7);
}

function lastWeekday(year: number, month: number, weekday: number): string {
  const lastOfMonth = addDays(dayOf(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1), -1);
  return addDays(lastOfMonth, -((weekdayOf(lastOfMonth) - weekday + 7) % 7));
}

/** The day banks close for a fixed-date holiday, or none when it falls on a Saturday. */
function observedFixed(year: number, month: number, date: number): string[] {
  const day = dayOf(year, month, date);
  const weekday = weekdayOf(day);
  if (weekday === SATURDAY) return [];
  return [weekday === SUNDAY ? addDays(day, 1) : day];
}

const holidaysByYear = new Map<number, ReadonlySet<string>>();

function holidaySet(year: number): ReadonlySet<string> {
  let holidays = holidaysByYear.get(year);
  if (!holidays) {
    holidays = new Set(
      [
        ...observedFixed(year, 1, 1),
        nthWeekday(year, 1, MONDAY, 3),
        nthWeekday(year, 2, MONDAY, 3),
        lastWeekday(year, 5, MONDAY),
        // Juneteenth became a holiday in June 2021; the Federal Reserve first closed for it in 2022.
        ...(year >= 2022 ? observedFixed(year, 6, 19) : []),
        ...observedFixed(year, 7, 4),
        nthWeekday(year, 9, MONDAY, 1),
        nthWeekday(year, 10, MONDAY, 2),
        ...observedFixed(year, 11, 11),
        nthWeekday(year, 11, THURSDAY, 4),
        ...observedFixed(year, 12, 25),
      ].sort(),
    );
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
