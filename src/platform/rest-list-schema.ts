import { type TSchema, Type } from 'typebox';
import type { FilterQueryFields } from './filter-query.ts';
import type { FilterSpec } from './filters.ts';
import { type ListQuery, listQuerySchema, readListQuery } from './list-query.ts';
import { PAGINATED, pageLinksSchema, pageQueryProperties } from './pagination.ts';
import { errorResponses } from './schemas.ts';

/** What a /rest list can be filtered by: one description drives its route schema and the reading of its query. */
export interface RestList {
  /** The resources' name as the free-form filter's description and errors give it ('Jobs'). */
  name: string;
  filters: FilterSpec;
  filterFields: FilterQueryFields;
}

/**
 * What the schema of a /rest list holds beside its name and words: the pagination mark, a query of its filters
 * (`filter[...]` and the deprecated free-form `filter`), `more.query` and the page parameters, and an answer of
 * `resource` items, `more.answer`, and links.next.
 */
export function restListSchema(
  list: RestList,
  resource: TSchema,
  more: { query?: Record<string, TSchema>; answer?: Record<string, TSchema> } = {},
) {
  return {
    ...PAGINATED,
    querystring: Type.Intersect([
      listQuerySchema(list.name, list.filters, list.filterFields),
      Type.Object({ ...more.query, ...pageQueryProperties() }),
    ]),
    response: {
      200: Type.Object({ data: Type.Array(resource), ...more.answer, links: pageLinksSchema() }),
      ...errorResponses(400, 401, 403, 406, 500),
    },
  };
}

/** The filters of a /rest list request (readListQuery). */
export function readRestListQuery(query: unknown, list: RestList): ListQuery {
  return readListQuery(query as Record<string, unknown>, list.name, list.filters, list.filterFields);
}
