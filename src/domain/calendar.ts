/**
 * Calendar days in an organization's time zone. A calendar day is a 'YYYY-MM-DD' string; an instant is a Date.
 * API.md: a day on the wire is that day's local midnight expressed in UTC.
 */
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's offset from UTC at that instant, in ms, read from Intl (a whole number of seconds). */
function intlOffsetMs(instantMs: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const asUtc = Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day!,
    parts.hour!,
    parts.minute!,
    parts.second!,
  );
  return asUtc - Math.floor(instantMs / 1000) * 1000;
}

const QUARTER_HOUR_MS = 900_000;
/** Per zone, the offset of each quarter hour it was asked about and had one offset throughout; bounded. */
const quarterOffsets = new Map<string, Map<number, number>>();
const CACHED_QUARTERS_MAX = 20_000;

/**
 * The offset at that instant. Intl's formatToParts is slow enough to show in a read's profile, and offsets change
 * only at a zone's transitions, which are far more than a quarter hour apart: a quarter hour whose first and last
 * seconds have the same offset has it throughout, and is remembered. One with a transition in it asks Intl each
 * time.
 */
function offsetMsAt(instantMs: number, timeZone: string): number {
  const quarter = Math.floor(instantMs / QUARTER_HOUR_MS);
  let zone = quarterOffsets.get(timeZone);
  const cached = zone?.get(quarter);
  if (cached !== undefined) return cached;
  const first = intlOffsetMs(quarter * QUARTER_HOUR_MS, timeZone);
  const last = intlOffsetMs((quarter + 1) * QUARTER_HOUR_MS - 1000, timeZone);
  if (first !== last) return intlOffsetMs(instantMs, timeZone);
  if (!zone) {
    zone = new Map();
    quarterOffsets.set(timeZone, zone);
  }
  if (zone.size >= CACHED_QUARTERS_MAX) zone.clear();
  zone.set(quarter, first);
  return first;
}

/** The wall clock of `timeZone` at that instant, to the second, read off a Date shifted by the zone's offset. */
function zonedParts(instant: Date, timeZone: string) {
  const ms = instant.getTime();
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offsetMsAt(ms, timeZone));
  return {
    year: wall.getUTCFullYear(),
    month: wall.getUTCMonth() + 1,
    day: wall.getUTCDate(),
    hour: wall.getUTCHours(),
    minute: wall.getUTCMinutes(),
  };
}

/** Minutes the zone is ahead of UTC at that instant. */
function offsetMinutes(instant: Date, timeZone: string): number {
  return Math.round(offsetMsAt(instant.getTime(), timeZone) / 60_000);
}

export function localDateOf(instant: Date, timeZone: string): string {
  const p = zonedParts(instant, timeZone);
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** 'HH:MM' on the wall clocks of `timeZone` at that instant. */
export function localTimeOf(instant: Date, timeZone: string): string {
  const p = zonedParts(instant, timeZone);
  return `${String(p.hour).padStart(2, '0')}:${String(p.minute).padStart(2, '0')}`;
}

/**
 * The instant at which the wall clocks of `timeZone` read `time` ('HH:MM') on `day` (DST-safe for any time outside
 * the hour a change skips).
 */
export function localInstant(day: string, time: string, timeZone: string): Date {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  const guess = Date.UTC(year, month - 1, date, hour, minute);
  let instant = guess - offsetMinutes(new Date(guess), timeZone) * 60_000;
  // Near a DST change the offset at the wall-clock time may differ from the offset at the first guess.
  instant = guess - offsetMinutes(new Date(instant), timeZone) * 60_000;
  return new Date(instant);
}

/** The instant of local midnight at the start of `day` in `timeZone` (DST-safe). */
export function startOfLocalDay(day: string, timeZone: string): Date {
  return localInstant(day, '00:00', timeZone);
}

export function addDays(day: string, days: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date) + days * DAY_MS).toISOString().slice(0, 10);
}

export function daysBetween(from: string, to: string): number {
  const parse = (day: string) => {
    const [y, m, d] = day.split('-').map(Number) as [number, number, number];
    return Date.UTC(y, m - 1, d);
  };
  return Math.round((parse(to) - parse(from)) / DAY_MS);
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(day: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDay();
}

/** Monday to Friday from `first` to `last`, both included. */
export function weekdaysBetween(first: string, last: string): string[] {
  const days: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) {
    const weekday = weekdayOf(day);
    if (weekday !== 0 && weekday !== 6) days.push(day);
  }
  return days;
}
