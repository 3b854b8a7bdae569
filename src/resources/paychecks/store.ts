import { type Kysely, type SqlBool, sql } from 'kysely';
import { afterSql, type ListOrder, PAGE_KEY, type Page, pageKeySql } from '../../db/keyset-page.ts';
import type { DB } from '../../db/schema.ts';
import type { PaycheckFigures } from '../../money/earnings/paychecks.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import type { Filter } from '../../platform/filters.ts';
import { runListPage } from '../../platform/list-page.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';
import { PAYCHECK_DATE_FIELDS } from './paycheck-values.ts';

export type PaycheckRow = PaycheckFigures;

const COLUMNS = [
  'paychecks.id',
  'paychecks.job_id',
  'paychecks.person_id',
  'paychecks.status',
  'paychecks.pay_period_starts_at',
  'paychecks.pay_period_ends_at',
  'paychecks.deposit_expected_at',
  'paychecks.currency',
  'paychecks.gross_earnings_minor',
  'paychecks.employer_withholdings_minor',
  'paychecks.net_earnings_minor',
  'paychecks.total_debited_minor',
] as const;

// The text of a timestamp as the API writes it (2026-03-02T05:00:00.000Z), whatever the session's time zone.
const ISO_8601_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
function isoText(column: (typeof PAYCHECK_DATE_FIELDS)[number]) {
  return sql<string>`to_char(${sql.ref(`paychecks.${column}`)} at time zone 'UTC', ${ISO_8601_UTC})`;
}

/**
 * The paychecks table with the text of each timestamp beside it, under the same name: the free-form filter's `~`
 * looks in text, and `deposit_expected_at~"2026-03"` must find it in the value a client read from this API.
 * PostgreSQL flattens this subquery, so the indexes on paychecks still serve the list.
 */
function paychecksWithText(db: Kysely<DB>) {
  return db
    .selectFrom('paychecks')
    .select([
      ...COLUMNS,
      isoText('deposit_expected_at').as('deposit_expected_at_text'),
      isoText('pay_period_ends_at').as('pay_period_ends_at_text'),
      isoText('pay_period_starts_at').as('pay_period_starts_at_text'),
    ])
    .as('paychecks');
}

/** The fields of `filter[...]` equality and of the deprecated free-form `filter`, with their columns. */
export const PAYCHECK_FILTER_FIELDS: FilterQueryFields = {
  'job.id': { column: 'paychecks.job_id', contains: false },
  status: { column: 'paychecks.status', contains: false },
  deposit_expected_at: {
    column: 'paychecks.deposit_expected_at_text',
    contains: true,
    instantColumn: 'paychecks.deposit_expected_at',
  },
  pay_period_ends_at: {
    column: 'paychecks.pay_period_ends_at_text',
    contains: true,
    instantColumn: 'paychecks.pay_period_ends_at',
  },
  pay_period_starts_at: {
    column: 'paychecks.pay_period_starts_at_text',
    contains: true,
    instantColumn: 'paychecks.pay_period_starts_at',
  },
};

function isDateField(field: string): field is (typeof PAYCHECK_DATE_FIELDS)[number] {
  return (PAYCHECK_DATE_FIELDS as readonly string[]).includes(field);
}

/**
 * The query as one condition. Equality and the free-form filter go through listQuerySql (`~` over the text
 * columns above, an exact date-time as an instant); the `__gte` / `__lt` bounds compare the timestamp columns themselves, as instants, where the indexes serve.
 */
function paycheckListSql(query: ListQuery) {
  const bounds: Filter[] = [];
  const equalities: Filter[] = [];
  for (const filter of query.filters) (filter.operator === 'eq' ? equalities : bounds).push(filter);
  const conditions = [listQuerySql({ filters: equalities, filter: query.filter }, PAYCHECK_FILTER_FIELDS)];
  for (const { field, operator, value } of bounds) {
    if (!isDateField(field) || !(value instanceof Date) || (operator !== 'gte' && operator !== 'lt')) {
      throw new Error(`paychecks cannot be bounded by ${field}__${operator}`);
    }
    const column = sql.ref(`paychecks.${field}`);
    conditions.push(
      operator === 'gte' ? sql<SqlBool>`${column} >= ${value}` : sql<SqlBool>`${column} < ${value}`,
    );
  }
  return sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
}

/**
 * A person sees their own paychecks, whichever job they come from. No client sees any: the description gives the
 * paycheck operations to user tokens only.
 */
function paychecksVisibleTo(db: Kysely<DB>, caller: Caller) {
  const query = db.selectFrom(paychecksWithText(db)).select(COLUMNS);
  return caller.kind === 'user'
    ? query.where('paychecks.person_id', '=', caller.personId)
    : query.where(sql<SqlBool>`false`);
}

/** The paychecks list's order: oldest pay period first; ids break ties between jobs whose periods start together. */
export const PAYCHECK_LIST_ORDER: ListOrder = {
  list: 'paychecks',
  key: { column: 'paychecks.pay_period_starts_at', type: 'timestamptz' },
  id: 'paychecks.id',
};

/** One page of the caller's paychecks, with one row more when another page follows. */
export async function findVisiblePaychecks(
  db: Kysely<DB>,
  caller: Caller,
  options: { query: ListQuery; page: Page },
): Promise<(PaycheckRow & { [PAGE_KEY]: string })[]> {
  const build = (who: Caller, limit: number) =>
    paychecksVisibleTo(db, who)
      .select(pageKeySql(PAYCHECK_LIST_ORDER).as(PAGE_KEY))
      .where(paycheckListSql(options.query))
      .where(afterSql(PAYCHECK_LIST_ORDER, options.page))
      .orderBy('paychecks.pay_period_starts_at')
      .orderBy('paychecks.id')
      .limit(limit);
  return runListPage(db, "paychecks: a user's first page", caller, options, build);
}

export async function findVisiblePaycheck(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
): Promise<PaycheckRow | undefined> {
  return paychecksVisibleTo(db, caller).where('paychecks.id', '=', id).executeTakeFirst();
}
