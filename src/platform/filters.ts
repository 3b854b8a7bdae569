import { parseInstant } from '../domain/date-text.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';

/** Comparison operators of `filter[field__op]` query parameters; no suffix means equality. */
export type FilterOperator = 'eq' | 'gt' | 'gte' | 'lt';

export type FilterValueType = 'uuid' | 'string' | 'date-time' | { enum: readonly string[] };

export interface FilterFieldSpec {
  type: FilterValueType;
  operators?: readonly FilterOperator[];
}

export type FilterSpec = Readonly<Record<string, FilterFieldSpec>>;

export interface Filter {
  field: string;
  operator: FilterOperator;
  /** Parsed value: a Date for date-time fields, a lower-case string for uuid fields, else the string given. */
  value: string | Date;
}

const FILTER_KEY = /^filter\[([^\]]*)\]$/;
const OPERATOR_SUFFIX = /^(.+?)__(gt|gte|lt)$/;

const VALUE_LENGTH_MAX = 256;

/** The field's spec; only the spec's own fields count (`constructor`, `__proto__` and the like are none). */
function fieldSpecOf(spec: FilterSpec, field: string): FilterFieldSpec | undefined {
  return Object.hasOwn(spec, field) ? spec[field] : undefined;
}

/**
 * Reads every `filter[...]` parameter of a query against the fields a resource allows. Unknown fields are
 * INVALID_FILTER_FIELD, a known field with an operator it does not take is INVALID_FIELD_OPERATION, a value of the
 * wrong form is INVALID_FILTER_VALUE, and a malformed key or a repeated parameter is INVALID_FILTER_QUERY.
 */
export function parseFilters(query: Readonly<Record<string, unknown>>, spec: FilterSpec): Filter[] {
  const filters: Filter[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('filter[')) continue;
    const match = FILTER_KEY.exec(key);
    if (!match || match[1] === '') {
      throw new AppError('INVALID_FILTER_QUERY', {
        detail: `${key} is not of the form filter[field].`,
        source: { parameter: key },
      });
    }
    if (typeof raw !== 'string') {
      throw new AppError('INVALID_FILTER_QUERY', {
        detail: `${key} may be given only once.`,
        source: { parameter: key },
      });
    }
    const name = match[1]!;
    const suffixed = OPERATOR_SUFFIX.exec(name);
    const [field, operator] =
      suffixed && fieldSpecOf(spec, suffixed[1]!)
        ? [suffixed[1]!, suffixed[2] as FilterOperator]
        : [name, 'eq' as const];
    const fieldSpec = fieldSpecOf(spec, field);
    if (!fieldSpec) {
      const known = Object.keys(spec).join(', ') || 'none';
      throw new AppError('INVALID_FILTER_FIELD', {
        detail: `${field} cannot be filtered on; the fields are: ${known}.`,
        source: { parameter: key },
      });
    }
    const allowed = fieldSpec.operators ?? ['eq'];
    if (!allowed.includes(operator)) {
      throw new AppError('INVALID_FIELD_OPERATION', {
        detail: `${field} takes ${allowed.map((op) => (op === 'eq' ? 'equality' : `__${op}`)).join(', ')} only.`,
        source: { parameter: key },
      });
    }
    filters.push({ field, operator, value: parseValue(key, raw, fieldSpec.type) });
  }
  return filters;
}

function parseValue(key: string, raw: string, type: FilterValueType): string | Date {
  const fail = (what: string) =>
    new AppError('INVALID_FILTER_VALUE', { detail: `${key} must be ${what}.`, source: { parameter: key } });
  if (raw.length === 0 || raw.length > VALUE_LENGTH_MAX) throw fail(`1 to ${VALUE_LENGTH_MAX} characters`);
  if (type === 'uuid') {
    if (!isUuid(raw)) throw fail('a UUID');
    return raw.toLowerCase();
  }
  if (type === 'date-time') {
    // No bare date: which day's midnight it meant, in what zone, is the client's to say.
    const date = parseInstant(raw);
    if (!date)
      throw fail(
        'an ISO 8601 date-time with an offset, such as 2026-03-20T14:00:00Z, on the calendar and from ' +
          '0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
      );
    return date;
  }
  if (typeof type === 'object') {
    if (!type.enum.includes(raw)) throw fail(`one of ${type.enum.join(', ')}`);
    return raw;
  }
  return raw;
}
