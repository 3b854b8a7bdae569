import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { idAsShown, isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import { FILTER_QUERY_LENGTH_MAX, parseFilterQuery } from '../../platform/filter-query.ts';
import {
  answerListPage,
  PAGE_SIZE_MAX,
  PAGINATED,
  pageLinksSchema,
  pageQueryProperties,
} from '../../platform/pagination.ts';
import { ResourceIdParam } from '../../platform/resource-schemas.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { organizationResource } from './serialize.ts';
import {
  findOrganizationForClient,
  findOrganizationsForClient,
  ORGANIZATION_FILTER_FIELDS,
  ORGANIZATION_LIST_ORDER,
} from './store.ts';

/** A list of organizations answers at most this many; they are ordered by name. */
export const ORGANIZATIONS_LIST_MAX = PAGE_SIZE_MAX;

const OrganizationResource = Type.Object({
  type: Type.Literal('organizations'),
  id: Type.String({ format: 'uuid' }),
  attributes: Type.Object({ name: Type.String(), products: Type.Array(Type.String({ examples: ['ODP'] })) }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const security = [{ kind: 'client' as const, scopes: ['client:admin'] }];
const openApiSecurity = [{ oauth_client_credentials_token: ['client:admin'] }];

export const organizationRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string }> = async (
  app,
  { db, baseUrl },
) => {
  app.get(
    '/rest/organizations',
    {
      config: { security },
      schema: {
        operationId: 'listOrganizations',
        ...PAGINATED,
        tags: ['Organizations'],
        summary: 'Organizations linked to the calling client',
        description: `At most ${ORGANIZATIONS_LIST_MAX} organizations, ordered by name. An extension: page[size] and page[after] page through the list; links.next is the next page while more follow.`,
        security: openApiSecurity,
        querystring: Type.Object({
          filter: Type.Optional(
            Type.String({
              maxLength: FILTER_QUERY_LENGTH_MAX,
              description:
                'Deprecated. name:"Acme" (exact) or name~"Ac" (contains), joined by AND / OR, with parentheses.',
            }),
          ),
          ...pageQueryProperties(),
        }),
        response: {
          200: Type.Object({ data: Type.Array(OrganizationResource), links: pageLinksSchema() }),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const { filter } = request.query as { filter?: string };
      return answerListPage(
        request,
        { baseUrl, path: '/rest/organizations', order: ORGANIZATION_LIST_ORDER },
        (page) =>
          findOrganizationsForClient(db, request.caller!.clientId, {
            // An empty `filter=` filters nothing, as in every other list.
            filter:
              filter === undefined || filter === ''
                ? undefined
                : parseFilterQuery(filter, ORGANIZATION_FILTER_FIELDS, 'Organizations'),
            page,
          }),
        (row) => organizationResource(baseUrl, row),
      );
    },
  );

  app.get(
    '/rest/organizations/:organization_id',
    {
      config: { security },
      schema: {
        operationId: 'readOrganization',
        tags: ['Organizations'],
        summary: 'One organization linked to the calling client',
        security: openApiSecurity,
        params: ResourceIdParam('organization_id'),
        response: {
          200: Type.Object({ data: OrganizationResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { organization_id: id } = request.params as { organization_id: string };
      const row = isUuid(id)
        ? await findOrganizationForClient(db, request.caller!.clientId, id.toLowerCase())
        : undefined;
      if (!row)
        throw new AppError('RECORD_NOT_FOUND', {
          detail: `No organization ${idAsShown(id)} is linked to this client.`,
        });
      return { data: organizationResource(baseUrl, row) };
    },
  );
};
