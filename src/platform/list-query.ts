import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { Type } from 'typebox';
import { AppError } from '../errors/app-error.ts';
import {
  FILTER_QUERY_LENGTH_MAX,
  type FilterExpression,
  type FilterQueryFields,
  filterQuerySql,
  parseFilterQuery,
} from './filter-query.ts';
import { type Filter, type FilterSpec, parseFilters } from './filters.ts';

/**
 * The query of a list operation: `filter[field]` parameters, and the deprecated free-form `filter` over the same
 * fields. One description drives the OpenAPI parameters, the parsing and the SQL.
 */
export interface ListQuery {
  filters: Filter[];
  filter?: FilterExpression | undefined;
}

const BOUND_WORDS = { gt: 'after', gte: 'at or after', lt: 'before' } as const;

/**
 * The query's parameters, one per field and operator of the spec: `filter[field]` for equality, `filter[field__gt]`
 * and the like for bounds. Values are described, not validated, here: a bad one is INVALID_FILTER_VALUE naming its
 * parameter (parseFilters), not a schema failure.
 */
export function listQuerySchema(resource: string, spec: FilterSpec, fields: FilterQueryFields) {
  const parameters = Object.fromEntries(
    Object.entries(spec).flatMap(([field, fieldSpec]) =>
      (fieldSpec.operators ?? ['eq']).map((operator) => {
        const description =
          operator !== 'eq'
            ? `${field} ${BOUND_WORDS[operator]} this ISO 8601 date-time (with an offset).`
            : typeof fieldSpec.type === 'object'
              ? `One of ${fieldSpec.type.enum.join(', ')}.`
              : fieldSpec.type === 'uuid'
                ? 'A UUID.'
                : 'Exact match.';
        const name = operator === 'eq' ? `filter[${field}]` : `filter[${field}__${operator}]`;
        return [name, Type.Optional(Type.String({ description }))];
      }),
    ),
  );
  const contains = Object.keys(fields).filter((field) => fields[field]!.contains);
  return Type.Object({
    ...parameters,
    filter: Type.Optional(
      Type.String({
        maxLength: FILTER_QUERY_LENGTH_MAX,
        deprecated: true,
        description: `Deprecated free-form filter of ${resource} over ${Object.keys(fields).join(', ')}: field:"value" matches exactly, field~"value" contains (${contains.join(', ') || 'no field'}); AND binds tighter than OR; parentheses group.`,
      }),
    ),
  });
}

export function readListQuery(
  query: Readonly<Record<string, unknown>>,
  resource: string,
  spec: FilterSpec,
  fields: FilterQueryFields,
): ListQuery {
  const filters = parseFilters(query, spec);
  // The description's example of the free-form filter is empty: `filter=` filters nothing.
  const filter =
    typeof query.filter === 'string' && query.filter !== ''
      ? checkedValues(parseFilterQuery(query.filter, fields, resource), spec)
      : undefined;
  return { filters, filter };
}

/**
 * The free-form filter with each exact value (`field:"value"`) checked as its `filter[field]` parameter's is, by
 * parseFilters itself, once the whole filter has parsed (a syntax error is told first): a bad one is
 * INVALID_FILTER_VALUE naming `filter`. A UUID is then compared in lower case, as `filter[field]` compares it, a
 * date-time as the instant it names (in any offset); any other value as sent. A `~` value is part of a value, and a field with no `filter[field]` (an account's name) is
 * any text: both are left as they are.
 */
function checkedValues(filter: FilterExpression, spec: FilterSpec): FilterExpression {
  if (filter.kind !== 'match')
    return { ...filter, left: checkedValues(filter.left, spec), right: checkedValues(filter.right, spec) };
  const fieldSpec = Object.hasOwn(spec, filter.field) ? spec[filter.field] : undefined;
  if (filter.operator !== 'equals' || !fieldSpec) return filter;
  const parameter = `filter[${filter.field}]`;
  try {
    const [parsed] = parseFilters(
      { [parameter]: filter.value },
      { [filter.field]: { type: fieldSpec.type } },
    );
    if (parsed!.value instanceof Date) return { ...filter, instant: parsed!.value };
    return fieldSpec.type === 'uuid' ? { ...filter, value: String(parsed!.value) } : filter;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new AppError(error.code, {
      detail: `In filter, ${error.detail.replace(parameter, filter.field)}`,
      source: { parameter: 'filter' },
    });
  }
}

const COMPARISONS = { gt: '>', gte: '>=', lt: '<' } as const;

/** Every filter of the query as one SQL condition (AND of all of them); `true` when there are none. */
export function listQuerySql(query: ListQuery, fields: FilterQueryFields): RawBuilder<SqlBool> {
  const conditions = query.filters.map((filter) => {
    const column = fields[filter.field]?.column;
    const value = filter.value instanceof Date ? filter.value.toISOString() : filter.value;
    if (filter.operator === 'eq' || !column) {
      const instant = filter.value instanceof Date ? { instant: filter.value } : {};
      return filterQuerySql(
        { kind: 'match', field: filter.field, operator: 'equals', value, ...instant },
        fields,
      );
    }
    const operator = COMPARISONS[filter.operator];
    return sql<SqlBool>`${sql.ref(column)} ${sql.raw(operator)} ${value}`;
  });
  if (query.filter) conditions.push(filterQuerySql(query.filter, fields));
  return conditions.length === 0 ? sql<SqlBool>`true` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
}
