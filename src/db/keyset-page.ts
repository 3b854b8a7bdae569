import { type RawBuilder, type SqlBool, sql } from 'kysely';

/**
 * A page of a list in SQL (keyset): the rows after a cursor's sort key and id, in the list's total order. The
 * cursors and links of the HTTP lists are in platform/pagination.ts.
 */

/** How a list is ordered: one sort key, then the id, which makes the order total. */
export interface ListOrder {
  /** The list's name, written in its cursors: a cursor of another list is refused. */
  list: string;
  /** The sort key's column (`table.column`) and its SQL type. */
  key: { column: string; type: 'timestamptz' | 'text' };
  /** The unique id column, the tie-breaker (ascending). */
  id: string;
  /** The sort key's direction; the id is always ascending. */
  direction?: 'asc' | 'desc';
}

/** Where a page starts (after `after`, when given: the last item's sort key as text and its id) and its size. */
export interface Page {
  size: number;
  after?: { key: string; id: string } | undefined;
}

/** The name of the column each row carries with its sort key as text (see pageKeySql), for its cursor. */
export const PAGE_KEY = 'page_key';

/** The sort key of a row as text, exact (a timestamp to the microsecond), selected as PAGE_KEY. */
export function pageKeySql(order: ListOrder): RawBuilder<string> {
  const column = sql.ref(order.key.column);
  return order.key.type === 'timestamptz'
    ? sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
    : sql<string>`${column}::text`;
}

/** The rows after the page's cursor, in the list's order; `true` on the first page. */
export function afterSql(order: ListOrder, page: Pick<Page, 'after'> | undefined): RawBuilder<SqlBool> {
  if (!page?.after) return sql<SqlBool>`true`;
  const key = sql.ref(order.key.column);
  const id = sql.ref(order.id);
  const value =
    order.key.type === 'timestamptz' ? sql`${page.after.key}::timestamptz` : sql`${page.after.key}::text`;
  if (order.direction === 'desc')
    return sql<SqlBool>`(${key} < ${value} or (${key} = ${value} and ${id} > ${page.after.id}::uuid))`;
  return sql<SqlBool>`((${key}, ${id}) > (${value}, ${page.after.id}::uuid))`;
}

/** The list's order, for `order by`: the sort key, then the id. */
export function orderSql(order: ListOrder): RawBuilder<unknown> {
  const direction = order.direction === 'desc' ? sql` desc` : sql``;
  return sql`${sql.ref(order.key.column)}${direction}, ${sql.ref(order.id)}`;
}

/** How many rows to fetch for a page: one more than it holds, to know whether another follows. */
export function fetchSize(page: Page): number {
  return page.size + 1;
}
