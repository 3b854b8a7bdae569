import { Type } from 'typebox';
import { type ListOrder, PAGE_KEY, type Page } from '../db/keyset-page.ts';
import { textProblem } from '../domain/input-text.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';

/**
 * Cursor pagination of every list, an extension of the published description: `page[size]` (1 to PAGE_SIZE_MAX,
 * PAGE_SIZE_MAX by default, the bound every list had before) and `page[after]` (the opaque cursor of the answer's
 * `links.next`). A cursor holds the list's name, its sort key and the id of the last item given, so the next page
 * starts exactly after that item (keyset, in SQL): an item added between two pages is neither skipped nor repeated
 * after the cursor.
 */
export const PAGE_SIZE_MAX = 1_000;
const CURSOR_LENGTH_MAX = 1_000;
/**
 * The mark of a paginated operation in the OpenAPI document, beside its route schema's other members (as
 * OPTIONAL_BODY of openapi.ts): an `x-` member, which OpenAPI lets a document add, is published on the operation
 * and says that its page parameters and links.next are an extension of the published description.
 */
export const PAGINATED = {
  'x-pagination': {
    extension: true,
    parameters: ['page[size]', 'page[after]'],
    next: 'links.next',
    description:
      'An extension of the published API: cursor pagination. Clients of the published description send neither parameter and get every item (up to the bound) as before.',
  },
} as const;

const PAGE_MEMBERS = ['page[size]', 'page[after]'] as const;

/** The two parameters, for a list's querystring schema (merged into its object). */
export function pageQueryProperties(defaultSize = PAGE_SIZE_MAX) {
  return {
    'page[size]': Type.Optional(
      Type.String({
        description: `An extension of the published API: the page size, a whole number from 1 to ${PAGE_SIZE_MAX} (default ${defaultSize}).`,
      }),
    ),
    'page[after]': Type.Optional(
      Type.String({
        maxLength: CURSOR_LENGTH_MAX,
        description:
          'An extension of the published API: the opaque cursor of the next page, as given in links.next of the previous answer.',
      }),
    ),
  };
}

/** The `links` member of a list answer: `next` only when more items follow. */
export function pageLinksSchema() {
  return Type.Optional(
    Type.Object(
      {
        next: Type.Optional(
          Type.String({
            format: 'uri',
            description: 'The next page (same filters and page size); absent on the last page.',
          }),
        ),
      },
      { description: 'An extension of the published API: cursor pagination.' },
    ),
  );
}

function invalid(parameter: string, detail: string): AppError {
  return new AppError('INVALID_PARAMETERS', { detail, source: { parameter } });
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function validKey(order: ListOrder, key: unknown): key is string {
  if (typeof key !== 'string' || key.length > 500) return false;
  // A name key is text a name could be: anything else (a NUL PostgreSQL refuses, a lone surrogate) was not ours.
  if (order.key.type === 'text') return textProblem(key) === undefined;
  // PostgreSQL has no year 0, which Date takes: a key of that year was never ours, and would be its error (a 500).
  if (!TIMESTAMP.test(key) || key.startsWith('0000')) return false;
  const date = new Date(`${key.slice(0, 23)}Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === key.slice(0, 19);
}

/**
 * Reads `page[size]` (`defaultSize` when absent: PAGE_SIZE_MAX, the bound of every list before it had pages) and
 * `page[after]` of a query; any other `page[...]` member is refused.
 */
export function readPage(
  query: Readonly<Record<string, unknown>>,
  order: ListOrder,
  options: { defaultSize?: number } = {},
): Page {
  for (const name of Object.keys(query)) {
    if (name.startsWith('page[') && !(PAGE_MEMBERS as readonly string[]).includes(name))
      throw invalid(name, `${name} is not a parameter of this list; page[size] and page[after] are.`);
  }
  const sizeText = query['page[size]'];
  let size = options.defaultSize ?? PAGE_SIZE_MAX;
  if (sizeText !== undefined) {
    if (
      typeof sizeText !== 'string' ||
      !/^[1-9][0-9]{0,3}$/.test(sizeText) ||
      Number(sizeText) > PAGE_SIZE_MAX
    )
      throw invalid(
        'page[size]',
        `page[size] must be given once, a whole number from 1 to ${PAGE_SIZE_MAX}.`,
      );
    size = Number(sizeText);
  }
  const afterText = query['page[after]'];
  if (afterText === undefined) return { size };
  const refused = invalid(
    'page[after]',
    'page[after] is not a cursor of this list: take it, unchanged, from links.next of the previous answer.',
  );
  if (
    typeof afterText !== 'string' ||
    afterText.length > CURSOR_LENGTH_MAX ||
    !/^[A-Za-z0-9_-]+$/.test(afterText)
  )
    throw refused;
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(afterText, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  const { l: list, k: key, i: id } = (cursor ?? {}) as Record<string, unknown>;
  if (list !== order.list || !validKey(order, key) || typeof id !== 'string' || !isUuid(id)) throw refused;
  return { size, after: { key, id: id.toLowerCase() } };
}

export function encodeCursor(order: ListOrder, key: string, id: string): string {
  return Buffer.from(JSON.stringify({ l: order.list, k: key, i: id }), 'utf8').toString('base64url');
}

/**
 * The page of rows fetched with fetchSize, and the URL of the next page when more follow: the list's path with the
 * request's own parameters (its filters, the page size) and `page[after]` the last item's cursor. `keyOf` gives an
 * item's sort key as text (its PAGE_KEY column) and its id.
 */
export function pageOf<R>(
  rows: readonly R[],
  page: Page,
  order: ListOrder,
  link: PageLinkBase,
  keyOf: (row: R) => readonly [key: string, id: string],
): { items: R[]; next?: string } {
  if (rows.length <= page.size) return { items: [...rows] };
  const items = rows.slice(0, page.size);
  const [key, id] = keyOf(items[items.length - 1]!);
  return { items, next: nextLink(link, page.size, encodeCursor(order, key, id)) };
}

/** What the next page's URL is made of: the public base URL, the list's path, and the request's own URL. */
export interface PageLinkBase {
  baseUrl: string;
  path: string;
  /** The request target as sent (request.url): its query keeps the filters. */
  requestUrl: string;
  /** Parameters of the request the next page leaves out (a former name of page[size]). */
  drop?: readonly string[];
}

/** The list's path with the request's query, page[size] and page[after] set, absolute from the public base URL. */
export function nextLink(link: PageLinkBase, size: number, cursor: string): string {
  const query = link.requestUrl.indexOf('?');
  const parameters = new URLSearchParams(query < 0 ? '' : link.requestUrl.slice(query + 1).split('#')[0]);
  for (const name of ['page[size]', 'page[after]', ...(link.drop ?? [])]) parameters.delete(name);
  parameters.set('page[size]', String(size));
  parameters.set('page[after]', cursor);
  return `${link.baseUrl}${link.path}?${parameters}`;
}

/** The `links` member of a list answer: `{next}` when more items follow, none on the last page. */
export function pageLinks(next: string | undefined): { links?: { next: string } } {
  return next === undefined ? {} : { links: { next } };
}

/** A row of a list as its store reads it: its id, and its sort key as text for the cursor. */
type KeyedRow = { id: string; [PAGE_KEY]: string };

/**
 * The answer to a list request: the page its query asks for (a bad page parameter is refused before anything is
 * read), read by `read` with one row more, each item given as `wire` makes it, and links.next while more follow.
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
