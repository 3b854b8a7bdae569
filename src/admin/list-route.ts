import { type TSchema, Type } from 'typebox';
import { PAGINATED, pageLinksSchema, pageQueryProperties } from '../platform/pagination.ts';
import { errorResponses } from '../platform/schemas.ts';

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
