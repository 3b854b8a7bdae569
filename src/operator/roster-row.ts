import { textProblem } from '../domain/input-text.ts';
import { ACTIVATION_STATUSES, WAGE_FREQUENCIES } from '../domain/job-values.ts';
import { isUsState } from '../domain/us-states.ts';
import { isUuid } from '../domain/uuid.ts';
import { InputError } from '../errors/input-error.ts';
import { parseDecimalAmount } from './decimal-amount.ts';

/**
 * One line of an employer's roster: a worker (person) and their job at the organization, in columns named by a
 * header line, in any order. An optional column left out of the header leaves that value of existing jobs as it
 * is; an empty cell in a column that is there clears it, except state_of_residence and activation_status, where
 * empty keeps what is there (the worker and the operator change those too).
 */
export const ROSTER_COLUMNS = {
  organization_id: {
    required: false,
    lengthMax: 36,
    description: 'the organization (UUID); when the import names one, each line must name the same or none',
  },
  primary_identifier: {
    required: true,
    lengthMax: 100,
    description: "the employer's id of the job; with the organization, what makes a re-import update",
  },
  employee_id: { required: false, lengthMax: 100, description: "the worker's employee ID (used at sign-up)" },
  group: { required: false, lengthMax: 100, description: "the employer's group of the job" },
  first_name: { required: true, lengthMax: 100, description: "the worker's first name" },
  last_name: { required: true, lengthMax: 100, description: "the worker's last name" },
  email: {
    required: true,
    lengthMax: 254,
    description: 'sign-in email, stored lower-case; one person per email, whatever the employer',
  },
  state_of_residence: {
    required: false,
    lengthMax: 2,
    description: 'two-letter US state or DC; empty keeps it',
  },
  location: { required: false, lengthMax: 200, description: 'where the job is' },
  title: { required: false, lengthMax: 200, description: 'job title' },
  department: { required: false, lengthMax: 200, description: 'department' },
  wage_amount: {
    required: true,
    lengthMax: 16,
    description: "wage in the organization's currency, as a decimal amount: 24.00",
  },
  wage_frequency: {
    required: true,
    lengthMax: 16,
    description: 'HOURLY, WEEKLY, BIWEEKLY, TWICE_MONTHLY, MONTHLY or ANNUALLY',
  },
  activation_status: {
    required: false,
    lengthMax: 32,
    description:
      "ACTIVATED (a new job's default), DEACTIVATED, DEACTIVATION_PENDING, ACTIVATION_REQUIRED or " +
      "ACTIVATION_UNDER_REVIEW; empty keeps an existing job's status",
  },
} as const;

export type RosterColumn = keyof typeof ROSTER_COLUMNS;

// Deliberately plain: one @, no spaces, a dot in the domain. Whether the mailbox exists is the sign-up's concern.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Where the header put each column. */
export type RosterHeader = ReadonlyMap<RosterColumn, number> & { readonly width: number };

/** A roster line as read and checked; `undefined` means the column is not in the file, `null` an empty cell. */
export interface RosterRow {
  line: number;
  organizationId: string | undefined;
  primaryIdentifier: string;
  employeeId: string | null | undefined;
  group: string | null | undefined;
  firstName: string;
  lastName: string;
  email: string;
  stateOfResidence: string | undefined;
  location: string | null | undefined;
  title: string | null | undefined;
  department: string | null | undefined;
  wageAmountMinor: number;
  wageFrequency: string;
  activationStatus: string | undefined;
}

/** A line that was not imported, and why. `field` is null when the line as a whole is wrong. */
export interface RosterProblem {
  line: number;
  field: string | null;
  detail: string;
}

/** Reads the header line: known column names (any case), each once, every required one present. */
export function parseRosterHeader(fields: readonly string[], line = 1): RosterHeader {
  const header = new Map<RosterColumn, number>() as Map<RosterColumn, number> & { width: number };
  header.width = fields.length;
  fields.forEach((raw, index) => {
    const name = raw.trim().toLowerCase();
    if (!Object.hasOwn(ROSTER_COLUMNS, name)) {
      throw new InputError(
        `line ${line}: "${raw.slice(0, 40)}" is not a roster column; the columns are ${Object.keys(ROSTER_COLUMNS).join(', ')}.`,
        { field: raw.slice(0, 40) },
      );
    }
    if (header.has(name as RosterColumn)) {
      throw new InputError(`line ${line}: the column ${name} appears twice.`, { field: name });
    }
    header.set(name as RosterColumn, index);
  });
  const missing = Object.entries(ROSTER_COLUMNS)
    .filter(([name, column]) => column.required && !header.has(name as RosterColumn))
    .map(([name]) => name);
  if (missing.length > 0) {
    throw new InputError(
      `line ${line}: the header lacks the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
      {
        field: missing[0]!,
      },
    );
  }
  return header;
}

class RowProblem extends Error {
  readonly field: string;
  constructor(field: string, detail: string) {
    super(detail);
    this.field = field;
  }
}

function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}

/**
 * Checks one data line against the header; returns the row, or the first problem found, naming the field. Pure:
 * whether the email or identifier is taken is the batch's question, asked of the database.
 */
export function parseRosterRow(
  fields: readonly string[],
  header: RosterHeader,
  context: { line: number; fractionDigits: number },
): { row: RosterRow } | { problem: RosterProblem } {
  const { line } = context;
  if (fields.length !== header.width) {
    return {
      problem: {
        line,
        field: null,
        detail: `the line has ${fields.length} field${fields.length === 1 ? '' : 's'}; the header has ${header.width}.`,
      },
    };
  }
  // undefined: column absent; null: empty cell.
  const cell = (column: RosterColumn): string | null | undefined => {
    const index = header.get(column);
    if (index === undefined) return undefined;
    const value = fields[index]!.trim();
    if (value.length > ROSTER_COLUMNS[column].lengthMax) {
      throw new RowProblem(column, `is longer than ${ROSTER_COLUMNS[column].lengthMax} characters.`);
    }
    // The one rule for text from outside (input-text.ts): a roster never passes the edge check of a JSON body.
    const problem = textProblem(value);
    if (problem) throw new RowProblem(column, problem);
    return value === '' ? null : value;
  };
  const required = (column: RosterColumn): string => {
    const value = cell(column);
    if (value == null) throw new RowProblem(column, 'is required.');
    return value;
  };
  const oneOf = (column: RosterColumn, value: string, allowed: readonly string[]): string => {
    const upper = value.toUpperCase();
    if (!allowed.includes(upper)) {
      throw new RowProblem(column, `must be one of ${allowed.join(', ')} (got ${shown(value)}).`);
    }
    return upper;
  };
  try {
    const organizationId = cell('organization_id') ?? undefined;
    if (organizationId !== undefined && !isUuid(organizationId)) {
      throw new RowProblem(
        'organization_id',
        `must be an organization id (UUID) (got ${shown(organizationId)}).`,
      );
    }
    const primaryIdentifier = required('primary_identifier');
    const firstName = required('first_name');
    const lastName = required('last_name');
    const email = required('email').toLowerCase();
    if (!EMAIL.test(email)) throw new RowProblem('email', `must be an email address (got ${shown(email)}).`);
    const state = cell('state_of_residence');
    if (state != null && !isUsState(state.toUpperCase())) {
      throw new RowProblem(
        'state_of_residence',
        `must be a two-letter US state or DC, such as NY (got ${shown(state)}).`,
      );
    }
    const amountText = required('wage_amount');
    const wageAmountMinor = parseDecimalAmount(amountText, context.fractionDigits);
    if (wageAmountMinor === undefined) {
      throw new RowProblem(
        'wage_amount',
        `must be an amount such as ${context.fractionDigits > 0 ? `24.${'0'.repeat(context.fractionDigits)}` : '24'}: ` +
          `digits, at most ${context.fractionDigits} after the point, no sign, symbol or separator (got ${shown(amountText)}).`,
      );
    }
    const wageFrequency = oneOf('wage_frequency', required('wage_frequency'), WAGE_FREQUENCIES);
    const status = cell('activation_status');
    return {
      row: {
        line,
        organizationId: organizationId?.toLowerCase(),
        primaryIdentifier,
        employeeId: cell('employee_id'),
        group: cell('group'),
        firstName,
        lastName,
        email,
        stateOfResidence: state?.toUpperCase() ?? undefined,
        location: cell('location'),
        title: cell('title'),
        department: cell('department'),
        wageAmountMinor,
        wageFrequency,
        activationStatus:
          status == null ? undefined : oneOf('activation_status', status, ACTIVATION_STATUSES),
      },
    };
  } catch (error) {
    if (!(error instanceof RowProblem)) throw error;
    return { problem: { line, field: error.field, detail: `${error.field} ${error.message}` } };
  }
}
