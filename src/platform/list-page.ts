import type { Compilable } from 'kysely';
import { runCompiledOnce } from '../db/compiled-once.ts';
import type { Db } from '../db/database.ts';
import { fetchSize, type Page } from '../db/keyset-page.ts';
import type { Caller } from './access-tokens.ts';
import type { ListQuery } from './list-query.ts';

/** A list read with no filter and no cursor: its statement is the same for every person (see runCompiledOnce). */
export function isPlainList(query: ListQuery, page: Page): boolean {
  return query.filters.length === 0 && query.filter === undefined && page.after === undefined;
}

/**
 * One page of a list, with one row more when another page follows. A user's first page with no filter, the read
 * partner apps make most, runs a statement built and compiled once (`key` names it); other pages, filters and
 * client tokens build theirs for the request. `build` gets the caller and the row limit to put in the statement.
 */
export async function runListPage<Row>(
  db: Db,
  key: string,
  caller: Caller,
  options: { query: ListQuery; page: Page },
  build: (who: Caller, limit: number) => Compilable<Row>,
): Promise<Row[]> {
  const limit = fetchSize(options.page);
  if (caller.kind === 'user' && isPlainList(options.query, options.page)) {
    return runCompiledOnce(db, key, [caller.personId, limit], (personId: string, rows: number) =>
      build({ ...caller, personId }, rows),
    );
  }
  const { rows } = await db.executeQuery(build(caller, limit).compile());
  return rows;
}
