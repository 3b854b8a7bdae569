/**
 * The one reader of calendar days and instants written by someone outside (query strings, bodies, CLI flags, CSV
 * cells, files). JavaScript's Date rolls an impossible day over (2026-02-30 is 2 March, 2026-04-31 is 1 May), reads
 * a time without an offset in the server's own zone and takes year 0, which PostgreSQL does not have: every field
 * read through here is refused instead, and the caller says why, naming its field.
 */

/**
 * Years 0001 to 9999 in UTC. PostgreSQL stores 4713 BC to 294276 AD and JavaScript ±275760 years, but neither
 * writes the other's extremes (year 0, six-digit years), and no record here is dated outside these years.
 */
export const INSTANT_MIN = new Date('0001-01-01T00:00:00.000Z');
export const INSTANT_MAX = new Date('9999-12-31T23:59:59.999Z');

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
// RFC 3339 lets the T and the Z be lower case.
const INSTANT =
  /^(\d{4}-\d{2}-\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;

/** A day YYYY-MM-DD that is on the calendar, years 0001 to 9999: 2026-02-30 and 2026-13-01 are not. */
export function isCalendarDay(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = DAY.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** What a field takes besides a date-time with its offset (RFC 3339, such as 2026-03-20T14:00:00Z). */
export interface InstantForm {
  /** A bare day, YYYY-MM-DD, is its midnight in UTC. */
  bareDay?: boolean;
  /** A time without an offset is in UTC. */
  utcWithoutOffset?: boolean;
}

/**
 * The instant the text names, or undefined when it is not one: a day that does not exist, an hour past 23, a
 * minute past 59, a second past 59 but for a leap second, an offset past ±23:59, a form the field does not take, or
 * an instant outside INSTANT_MIN..INSTANT_MAX once in UTC. Fractions of a second past milliseconds are dropped. A
 * leap second (second 60, RFC 3339) is taken only at 23:59 UTC, where leap seconds are inserted, and read as the
 * instant after it, midnight: Date has no leap second, and nothing here happens between the two.
 */
export function parseInstant(text: unknown, form: InstantForm = {}): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const match = INSTANT.exec(text);
  if (!match) return undefined;
  const [, day, hour, minute, second, fraction, z, sign, offsetHour, offsetMinute] = match;
  if (!isCalendarDay(day)) return undefined;
  if (hour === undefined && !form.bareDay) return undefined;
  const zoned = z !== undefined || sign !== undefined;
  if (hour !== undefined && !zoned && !form.utcWithoutOffset) return undefined;
  const leap = second === '60';
  if (Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59 || (Number(second ?? 0) > 59 && !leap))
    return undefined;
  if (Number(offsetHour ?? 0) > 23 || Number(offsetMinute ?? 0) > 59) return undefined;
  const shownSecond = leap ? '59' : (second ?? '00');
  const time = `${hour ?? '00'}:${minute ?? '00'}:${shownSecond}.${(fraction ?? '').padEnd(3, '0').slice(0, 3)}`;
  const offset = sign === undefined ? 'Z' : `${sign}${offsetHour}:${offsetMinute}`;
  let instant = new Date(`${day}T${time}${offset}`);
  if (leap) {
    if (instant.getUTCHours() !== 23 || instant.getUTCMinutes() !== 59) return undefined;
    instant = new Date(instant.getTime() - instant.getUTCMilliseconds() + 1000);
  }
  if (Number.isNaN(instant.getTime()) || instant < INSTANT_MIN || instant > INSTANT_MAX) return undefined;
  return instant;
}
