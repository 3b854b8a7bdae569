import { isCalendarDay } from '../../domain/date-text.ts';
import { textProblem } from '../../domain/input-text.ts';
import { InputError } from '../../errors/input-error.ts';
import { parseDecimalAmount } from '../../operator/decimal-amount.ts';

/** The first day a row may be dated: older pay is history, not earnings to make accessible. */
export const EARNINGS_FIRST_DAY = '2000-01-01';
/** Hours of one row, in hundredths: one day at most. */
export const EARNINGS_HOURS_HUNDREDTHS_MAX = 2_400;
/** The largest amount of one row, in major units of the organization's currency. */
export const EARNINGS_AMOUNT_MAJOR_MAX = 100_000;
/** Row ids salary accrual gives its own earnings (salary-accrual.ts): an employer's row must not take one. */
const RESERVED_ROW_ID = /^salary:/i;

/**
 * One line of an employer's earnings file: a shift (or other pay) of one job on one day, in columns named by a
 * header line, in any order. `hours` and `amount` are both optional columns; each line gives exactly one of them.
 * The identifiers have a length limit; the other columns are bounded by their formats.
 */
export const EARNINGS_COLUMNS = {
  row_id: {
    required: true,
    lengthMax: 100,
    description:
      "the employer's id of the line, 1 to 100 characters, unique per job: a line sent again is a duplicate, " +
      'not more pay; not starting with salary: (the ids of salary accrual)',
  },
  primary_identifier: {
    required: true,
    lengthMax: 100,
    description:
      "the job, by the employer's primary_identifier of it (as in the roster); ACTIVATED jobs only",
  },
  date: {
    required: true,
    description:
      `the day worked, YYYY-MM-DD, from ${EARNINGS_FIRST_DAY} to today in the organization's time zone; a day whose ` +
      "pay period's deposit day is before today is refused unless backdating is allowed",
  },
  hours: {
    required: false,
    description:
      'hours worked, above 0 and at most 24, up to 2 decimals: 7.5; HOURLY jobs only; the pay is hours × the ' +
      "job's wage rate, rounded to the minor unit. A job has at most 24 hours a day across its rows (those " +
      'recorded before, less rows reversed, and the earlier lines of the file)',
  },
  amount: {
    required: false,
    description:
      `the pay in the organization's currency, a decimal amount such as 123.45, at most ${EARNINGS_AMOUNT_MAJOR_MAX}.00; ` +
      'a correction that lowers pay is negative, such as -40.00 (not zero)',
  },
  reverses: {
    required: false,
    lengthMax: 100,
    description:
      'the row_id of an earlier row of the same job that this row cancels, once: its pay is taken back whole. A ' +
      'reversal row gives neither hours nor amount, and its date may be empty (the reversed row has one)',
  },
} as const;

export type EarningsColumn = keyof typeof EARNINGS_COLUMNS;

/** Where the header put each column. */
export type EarningsHeader = ReadonlyMap<EarningsColumn, number> & { readonly width: number };

/**
 * A line as read and checked; exactly one of `hoursHundredths` and `amountMinor` is set, or neither on a reversal
 * (`reverses`, whose pay and day are the reversed row's).
 */
export interface EarningsRow {
  line: number;
  rowId: string;
  primaryIdentifier: string;
  workedOn: string | null;
  hoursHundredths: number | null;
  amountMinor: number | null;
  reverses: string | null;
}

/** A line that was not recorded, and why. `field` is null when the line as a whole is wrong. */
export interface EarningsProblem {
  line: number;
  field: string | null;
  message: string;
}

/** Reads the header line: known column names (any case), each once, the required ones and hours or amount. */
export function parseEarningsHeader(fields: readonly string[], line = 1): EarningsHeader {
  const header = new Map<EarningsColumn, number>() as Map<EarningsColumn, number> & { width: number };
  header.width = fields.length;
  fields.forEach((raw, index) => {
    const name = raw.trim().toLowerCase();
    if (!Object.hasOwn(EARNINGS_COLUMNS, name)) {
      throw new InputError(
        `line ${line}: "${raw.slice(0, 40)}" is not an earnings column; the columns are ${Object.keys(EARNINGS_COLUMNS).join(', ')}, and no other.`,
        { field: raw.slice(0, 40) },
      );
    }
    if (header.has(name as EarningsColumn)) {
      throw new InputError(`line ${line}: the column ${name} appears twice.`, { field: name });
    }
    header.set(name as EarningsColumn, index);
  });
  const missing = Object.entries(EARNINGS_COLUMNS)
    .filter(([name, column]) => column.required && !header.has(name as EarningsColumn))
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new InputError(
      `line ${line}: the header lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
      { field: missing[0]! },
    );
  }
  if (!header.has('hours') && !header.has('amount')) {
    throw new InputError(`line ${line}: the header needs an hours column, an amount column, or both.`, {
      field: 'amount',
    });
  }
  return header;
}

class RowProblem extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}

/** Hours such as 7.5 into hundredths (750), by string arithmetic; undefined when not of that form. */
function parseHours(text: string): number | undefined {
  const match = /^(\d{1,2})(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/**
 * Checks one data line against the header; returns the row, or the first problem found, naming the field. Pure:
 * whether the job exists and takes hours is the batch's question, asked of the database.
 */
export function parseEarningsRow(
  fields: readonly string[],
  header: EarningsHeader,
  context: { line: number; fractionDigits: number; today: string },
): { row: EarningsRow } | { problem: EarningsProblem } {
  const { line, fractionDigits, today } = context;
  if (fields.length !== header.width) {
    return {
      problem: {
        line,
        field: null,
        message: `the line has ${fields.length} field${fields.length === 1 ? '' : 's'}; the header has ${header.width}.`,
      },
    };
  }
  const cell = (column: EarningsColumn): string | null => {
    const index = header.get(column);
    if (index === undefined) return null;
    const value = fields[index]!.trim();
    // The one rule for text from outside (input-text.ts): a CSV file never passes the edge check of a JSON body.
    const problem = textProblem(value);
    if (problem) throw new RowProblem(column, problem);
    return value === '' ? null : value;
  };
  const identifier = (column: 'row_id' | 'primary_identifier' | 'reverses'): string => {
    const value = cell(column);
    if (value === null) throw new RowProblem(column, 'is required.');
    if (value.length > EARNINGS_COLUMNS[column].lengthMax) {
      throw new RowProblem(column, `is longer than ${EARNINGS_COLUMNS[column].lengthMax} characters.`);
    }
    return value;
  };
  try {
    const rowId = identifier('row_id');
    if (RESERVED_ROW_ID.test(rowId)) {
      throw new RowProblem(
        'row_id',
        `must not start with "salary:", kept for salary accrual (got ${shown(rowId)}).`,
      );
    }
    const primaryIdentifier = identifier('primary_identifier');
    const reverses = cell('reverses') === null ? null : identifier('reverses');
    if (reverses !== null && reverses === rowId)
      throw new RowProblem(
        'reverses',
        `names the row itself (${shown(rowId)}); name an earlier row of the job.`,
      );
    const workedOn = cell('date');
    if (reverses !== null) {
      if (cell('hours') !== null || cell('amount') !== null)
        throw new RowProblem(
          cell('hours') !== null ? 'hours' : 'amount',
          `must be empty on a reversal row: the pay of row ${shown(reverses)} is taken back whole.`,
        );
      if (workedOn !== null && !isCalendarDay(workedOn))
        throw new RowProblem(
          'date',
          `must be empty or a calendar day as YYYY-MM-DD (got ${shown(workedOn)}).`,
        );
      return {
        row: { line, rowId, primaryIdentifier, workedOn, hoursHundredths: null, amountMinor: null, reverses },
      };
    }
    if (workedOn === null) throw new RowProblem('date', 'is required.');
    if (!isCalendarDay(workedOn)) {
      throw new RowProblem(
        'date',
        `must be a calendar day as YYYY-MM-DD, such as 2026-03-09 (got ${shown(workedOn)}).`,
      );
    }
    if (workedOn < EARNINGS_FIRST_DAY) {
      throw new RowProblem('date', `must not be before ${EARNINGS_FIRST_DAY} (got ${workedOn}).`);
    }
    if (workedOn > today) {
      throw new RowProblem(
        'date',
        `must not be after today, ${today} in the organization's time zone (got ${workedOn}).`,
      );
    }
    const hoursText = cell('hours');
    const amountText = cell('amount');
    if ((hoursText === null) === (amountText === null)) {
      const both = hoursText !== null;
      throw new RowProblem(
        both ? 'hours' : header.has('amount') ? 'amount' : 'hours',
        both ? 'and amount are both given; give one of them.' : 'is required: give hours or an amount.',
      );
    }
    if (hoursText !== null) {
      const hoursHundredths = parseHours(hoursText);
      if (
        hoursHundredths === undefined ||
        hoursHundredths === 0 ||
        hoursHundredths > EARNINGS_HOURS_HUNDREDTHS_MAX
      ) {
        throw new RowProblem(
          'hours',
          `must be a number of hours above 0 and at most 24, with at most 2 decimals, such as 7.5 (got ${shown(hoursText)}).`,
        );
      }
      return {
        row: { line, rowId, primaryIdentifier, workedOn, hoursHundredths, amountMinor: null, reverses: null },
      };
    }
    // A leading minus is a correction that lowers pay; the rest is the amount's usual form.
    const negative = amountText!.startsWith('-');
    const sizeMinor = parseDecimalAmount(negative ? amountText!.slice(1) : amountText!, fractionDigits);
    const maxMinor = EARNINGS_AMOUNT_MAJOR_MAX * 10 ** fractionDigits;
    if (sizeMinor === undefined || sizeMinor === 0 || sizeMinor > maxMinor) {
      const example =
        fractionDigits > 0 ? `123.${'45'.padEnd(fractionDigits, '0').slice(0, fractionDigits)}` : '123';
      throw new RowProblem(
        'amount',
        `must be an amount other than 0, at most ${EARNINGS_AMOUNT_MAJOR_MAX} either way, such as ${example} (or ` +
          `-${example} for a correction): digits, at most ${fractionDigits} after the point, a minus sign only, no ` +
          `symbol or separator (got ${shown(amountText!)}).`,
      );
    }
    const amountMinor = negative ? -sizeMinor : sizeMinor;
    return {
      row: { line, rowId, primaryIdentifier, workedOn, hoursHundredths: null, amountMinor, reverses: null },
    };
  } catch (error) {
    if (!(error instanceof RowProblem)) throw error;
    return { problem: { line, field: error.field, message: `${error.field} ${error.message}` } };
  }
}
