/**
 * ACH settlement windows: we cut one origination file per window, at the three same-day ACH cut-offs of the Federal
 * Reserve, on the wall clocks of New York, on each bank business day. The business-day calendar is a parameter, so
 * that this module stays pure and tests can declare any day a holiday.
 *
 * The times used here (08:30 to 16:45) never fall in the hour a daylight-saving change skips or repeats (it happens
 * at 02:00), so each has exactly one instant.
 */
import { addDays, localDateOf, localInstant } from '../../domain/calendar.ts';
import { isCalendarDay } from '../../domain/date-text.ts';

export const ACH_WINDOW_CUTOFFS = ['10:30', '14:45', '16:45'] as const;

export const ACH_TIME_ZONE = 'America/New_York';
const FILE_ID_MODIFIERS = ['A', 'B', 'C'] as const;
const SETTLEMENT_TIME = '08:30';
const DAY_MS = 86_400_000;
// A wider span means the job was down for a month: catching up should be a person's decision, not a loop's.
const DUE_SPAN_DAYS_MAX = 31;
// Holidays and weekends never close banks for more than a few days in a row; longer means a broken calendar.
const NON_BUSINESS_DAYS_IN_A_ROW_MAX = 14;

export interface AchWindow {
  id: string; // 'YYYY-MM-DD/1030'
  day: string;
  cutoffAt: Date;
  fileIdModifier: 'A' | 'B' | 'C';
}

function checkedDay(day: string, name: string): void {
  if (!isCalendarDay(day)) throw new RangeError(`${name} must be a calendar day YYYY-MM-DD`);
}

/** The instant at which New York's wall clocks read `time` ('HH:MM') on `day`. */
function newYorkInstant(day: string, time: string): Date {
  checkedDay(day, 'day');
  return localInstant(day, time, ACH_TIME_ZONE);
}

function windowOf(day: string, index: number): AchWindow {
  const cutoff = ACH_WINDOW_CUTOFFS[index]!;
  return {
    id: `${day}/${cutoff.replace(':', '')}`,
    day,
    cutoffAt: newYorkInstant(day, cutoff),
    fileIdModifier: FILE_ID_MODIFIERS[index]!,
  };
}

/** The window an id names ('YYYY-MM-DD/HHMM'), as windowFor made it. */
export function windowById(id: string): AchWindow {
  const [day = '', cutoff] = id.split('/');
  const index = ACH_WINDOW_CUTOFFS.findIndex((time) => time.replace(':', '') === cutoff);
  if (index < 0) throw new RangeError(`${id} names no ACH window`);
  checkedDay(day, 'day');
  return windowOf(day, index);
}

function firstBusinessDayFrom(day: string, isBusinessDay: (day: string) => boolean): string {
  let candidate = day;
  for (let skipped = 0; !isBusinessDay(candidate); skipped++) {
    if (skipped >= NON_BUSINESS_DAYS_IN_A_ROW_MAX)
      throw new Error(`no business day within ${NON_BUSINESS_DAYS_IN_A_ROW_MAX} days from ${day}`);
    candidate = addDays(candidate, 1);
  }
  return candidate;
}

/**
 * The first window whose cut-off is strictly after `instant`: an entry made at a cut-off goes in the next file.
 * After the last cut-off, or on a day banks are closed, that is the first window of the next business day.
 */
export function windowFor(instant: Date, isBusinessDay: (day: string) => boolean): AchWindow {
  if (Number.isNaN(instant.getTime())) throw new RangeError('instant must be a valid Date');
  const today = localDateOf(instant, ACH_TIME_ZONE);
  if (isBusinessDay(today)) {
    for (let index = 0; index < ACH_WINDOW_CUTOFFS.length; index++) {
      const window = windowOf(today, index);
      if (window.cutoffAt.getTime() > instant.getTime()) return window;
    }
  }
  return windowOf(firstBusinessDayFrom(addDays(today, 1), isBusinessDay), 0);
}

/** Every window whose cut-off is in (since, now], oldest first: the files a catching-up job still has to cut. */
export function windowsDueBy(now: Date, since: Date, isBusinessDay: (day: string) => boolean): AchWindow[] {
  if (Number.isNaN(now.getTime()) || Number.isNaN(since.getTime()))
    throw new RangeError('now and since must be valid Dates');
  if (now.getTime() - since.getTime() > DUE_SPAN_DAYS_MAX * DAY_MS)
    throw new RangeError(`windowsDueBy covers at most ${DUE_SPAN_DAYS_MAX} days`);
  const due: AchWindow[] = [];
  for (let window = windowFor(since, isBusinessDay); window.cutoffAt <= now; ) {
    due.push(window);
    window = windowFor(window.cutoffAt, isBusinessDay);
  }
  return due;
}

/**
 * The effective entry date of the entries cut in `window`: next-day ACH, so the business day after the window's day,
 * unless `notBeforeDay` is later (a payday, say): then that day, or the business day after it if banks are closed.
 * `nextBusinessDay(day)` is the first business day strictly after `day`.
 */
export function effectiveEntryDateFor(
  window: AchWindow,
  notBeforeDay: string | undefined,
  nextBusinessDay: (day: string) => string,
  isBusinessDay: (day: string) => boolean,
): string {
  const nextDay = nextBusinessDay(window.day);
  if (notBeforeDay === undefined) return nextDay;
  checkedDay(notBeforeDay, 'notBeforeDay');
  if (notBeforeDay <= nextDay) return nextDay;
  return isBusinessDay(notBeforeDay) ? notBeforeDay : nextBusinessDay(notBeforeDay);
}

/** When entries with this effective date settle: 08:30 in New York, the Federal Reserve's first settlement. */
export function settlementInstant(effectiveDay: string): Date {
  return newYorkInstant(effectiveDay, SETTLEMENT_TIME);
}

/**
 * The first day (New York's calendar) whose settlement instant is not before `instant`: a credit effective that day
 * or later is not delivered before it. A payday that begins on an employer's clocks east of New York begins on
 * New York's day before, after that day's settlement: its New York date alone would deliver the pay a day early.
 */
export function firstSettlementDayFrom(instant: Date): string {
  if (Number.isNaN(instant.getTime())) throw new RangeError('instant must be a valid Date');
  const day = localDateOf(instant, ACH_TIME_ZONE);
  return settlementInstant(day) < instant ? addDays(day, 1) : day;
}
