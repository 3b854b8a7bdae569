import { type TSchema, Type } from 'typebox';
import { type ListOrder, PAGE_KEY, type Page } from '../db/keyset-page.ts';
import {
  PAGINATED,
  pageLinks,
  pageLinksSchema,
  pageOf,
  pageQueryProperties,
  readPage,
} from '../platform/pagination.ts';
import { errorResponses } from '../platform/schemas.ts';

/** A row of an operator list as its store reads it: its id, and its sort key as text for the cursor. */
type KeyedRow = { id: string; [PAGE_KEY]: string };

/**
 * What an operator list's route schema holds beside its name and words: the pagination mark, a query of its
 * `filters` and the page parameters (nothing else), and an answer of `resource` items with links.next.
 */
export function listRouteSchema(resource: TSchema, filters: Record<string, TSchema>) {
  return {
    ...PAGINATED,
    querystring: Type.Object({ ...filters, ...pageQueryProperties() }, { additionalProperties: false }),
    response: {
      200: Type.Object({ data: Type.Array(resource), links: pageLinksSchema() }),
      ...errorResponses(400, 401, 403, 406, 500),
    },
  };
}

/**
 * The answer to an operator list request: the page its query asks for (a bad page parameter is refused before
 * anything is read), read by `read` with one row more, each item given as `wire` makes it, and links.next while
 * more follow.
 */
export async function answerListPage<Row extends KeyedRow, Item>(
  request: { query: unknown; url: string },
  list: { baseUrl: string; path: string; order: ListOrder },
  read: (page: Page) => Promise<readonly Row[]>,
  wire: (row: Row) => Item,
): Promise<{ data: Item[]; links?: { next: string } }> {
  const page = readPage(request.query as Record<string, unknown>, list.order);
  const { items, next } = pageOf(
    await read(page),
    page,
    list.order,
    { baseUrl: list.baseUrl, path: list.path, requestUrl: request.url },
    (row) => [row[PAGE_KEY], row.id],
  );
  return { data: items.map(wire), ...pageLinks(next) };
}
