import { addDays } from '../domain/calendar.ts';
import { isCalendarDay } from '../domain/date-text.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * The period of a regulator's report: a year, a quarter or a half of it, or any run of calendar days. Its days are
 * UTC days: one instant range for every state and every process, whatever the server's own zone, so that a report
 * run twice, or on another host, counts the same advances. An advance at 20:00 in Chicago on December 31 (02:00 UTC
 * on January 1) counts in the next year; docs/operators/compliance.md says so.
 */
export interface ReportPeriod {
  /** First and last calendar day, YYYY-MM-DD, both included. */
  from: string;
  to: string;
  timeZone: 'UTC';
  /** [startsAt, endsBefore): the instants counted. */
  startsAt: Date;
  endsBefore: Date;
}

/** What an operator may give, as text (CLI flags, query parameters). */
export interface PeriodInput {
  year?: string | undefined;
  quarter?: string | undefined;
  half?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export const REPORT_YEARS = { min: 2000, max: 2100 } as const;

function wholeIn(field: string, text: string, min: number, max: number): number {
  if (!/^\d{1,4}$/.test(text) || Number(text) < min || Number(text) > max)
    throw new InputError(
      `${field} must be a whole number from ${min} to ${max} (got "${text.slice(0, 20)}").`,
      {
        field,
      },
    );
  return Number(text);
}

function periodOf(from: string, to: string): ReportPeriod {
  return {
    from,
    to,
    timeZone: 'UTC',
    startsAt: new Date(`${from}T00:00:00Z`),
    endsBefore: new Date(`${addDays(to, 1)}T00:00:00Z`),
  };
}

/** The period named by the input: `year` alone, with `quarter` (1-4) or `half` (1-2), or `from` and `to`. */
export function readPeriod(input: PeriodInput): ReportPeriod {
  const { year, quarter, half, from, to } = input;
  if (from !== undefined || to !== undefined) {
    const other = [year && 'year', quarter && 'quarter', half && 'half'].find(Boolean);
    if (other)
      throw new InputError(`give either from and to, or year (with quarter or half): not both (${other}).`, {
        field: other,
      });
    for (const [field, value] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (value === undefined)
        throw new InputError(`${field} is required with ${field === 'from' ? 'to' : 'from'}.`, { field });
      if (!isCalendarDay(value))
        throw new InputError(`${field} must be a calendar day YYYY-MM-DD (got "${value.slice(0, 20)}").`, {
          field,
        });
      const year = Number(value.slice(0, 4));
      if (year < REPORT_YEARS.min || year > REPORT_YEARS.max)
        throw new InputError(
          `${field} must be a day from ${REPORT_YEARS.min}-01-01 to ${REPORT_YEARS.max}-12-31 (got "${value}").`,
          { field },
        );
    }
    if ((from as string) > (to as string))
      throw new InputError(`from (${from}) must not be after to (${to}).`, { field: 'from' });
    return periodOf(from as string, to as string);
  }
  if (year === undefined)
    throw new InputError('year is required (or from and to): the period the report covers.', {
      field: 'year',
    });
  const y = wholeIn('year', year, REPORT_YEARS.min, REPORT_YEARS.max);
  const pad = (month: number) => String(month).padStart(2, '0');
  const monthsOf = (first: number, count: number) =>
    periodOf(
      `${y}-${pad(first)}-01`,
      addDays(first + count > 12 ? `${y + 1}-01-01` : `${y}-${pad(first + count)}-01`, -1),
    );
  if (quarter !== undefined && half !== undefined)
    throw new InputError('give quarter or half, not both.', { field: 'half' });
  if (quarter !== undefined) return monthsOf((wholeIn('quarter', quarter, 1, 4) - 1) * 3 + 1, 3);
  if (half !== undefined) return monthsOf((wholeIn('half', half, 1, 2) - 1) * 6 + 1, 6);
  return monthsOf(1, 12);
}
