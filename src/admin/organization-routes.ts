import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Database, Db } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import { POLICY_FIELDS, POLICY_KEYS, policyAttributes } from '../operator/organization-policy.ts';
import { findOrganizationsPage, ORGANIZATION_PAGE_ORDER } from '../operator/organization-store.ts';
import {
  createOrganization,
  findOrganization,
  listOrganizations,
  ORGANIZATIONS_PAGE_MAX,
  type Organization,
  organizationAttributes,
  setOrganizationPolicy,
} from '../operator/organizations.ts';
import {
  importRoster,
  ROSTER_PROBLEMS_LISTED_MAX,
  ROSTER_RECORD_CHARS_MAX,
  ROSTER_ROWS_MAX,
  rosterImportAttributes,
} from '../operator/roster-import.ts';
import { PAGINATED, pageOf, pageQueryProperties, readPage } from '../platform/pagination.ts';
import { bodyIdMustMatch, ResourceIdParam } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import { pointingAt } from './input-errors.ts';
import {
  OPERATOR,
  OrganizationCreateBody,
  OrganizationResource,
  PolicyResource,
  PolicyUpdateBody,
  policyChangeOf,
  RosterImportResource,
  RosterImportRunning,
} from './schemas.ts';

const POLICY_NAMES = new Set(POLICY_KEYS.map((key) => POLICY_FIELDS[key].name));
const tags = ['Operator'];

/** The operator's view of employers: create, list, read, change the policy, import the roster. */
export const adminOrganizationRoutes: FastifyPluginAsync<{
  db: Db;
  databaseKind: Database['kind'];
  baseUrl: string;
}> = async (app, { db, databaseKind, baseUrl }) => {
  const selfOf = (id: string) => `${baseUrl}/admin/organizations/${id}`;
  const resource = (organization: Organization) => ({
    type: 'organizations' as const,
    id: organization.id,
    attributes: organizationAttributes(organization),
    links: { self: selfOf(organization.id) },
  });

  app.post(
    '/admin/organizations',
    {
      config: { security: OPERATOR.config, schemaErrorCodes: { missing: 'MISSING_REQUIRED_FIELD' } },
      schema: {
        operationId: 'adminCreateOrganization',
        tags,
        summary: 'Add an employer with its policy',
        description:
          'Policy fields not given take the defaults (access rate 50 %, biweekly, $5.00 minimum, …).',
        security: OPERATOR.openApi,
        body: OrganizationCreateBody,
        response: {
          200: Type.Object({ data: OrganizationResource }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { attributes } = (request.body as { data: { attributes: Record<string, unknown> } }).data;
      const policy = (attributes.policy ?? {}) as Record<string, unknown>;
      const organization = await pointingAt(
        (field) => ({
          pointer: `/data/attributes/${field && POLICY_NAMES.has(field) ? `policy/${field}` : (field ?? '')}`,
        }),
        () =>
          createOrganization(db, {
            name: attributes.name,
            products: attributes.products,
            policy: policyChangeOf(policy),
          }),
      );
      return { data: resource(organization) };
    },
  );

  app.get(
    '/admin/organizations',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminListOrganizations',
        ...PAGINATED,
        tags,
        summary: 'Every employer, by name',
        description: `A page of at most page[size] organizations (1 to ${ORGANIZATIONS_PAGE_MAX}, the default) after the cursor page[after]; links.next is the next page while more follow. Or, as before, a page of at most page[limit] after skipping page[offset] (links.next names the next page while there may be one); the two kinds do not mix.`,
        security: OPERATOR.openApi,
        querystring: Type.Object(
          {
            ...pageQueryProperties(),
            'page[offset]': Type.Optional(
              Type.String({ pattern: '^[0-9]{1,9}$', description: 'Default 0.' }),
            ),
            'page[limit]': Type.Optional(
              Type.String({ pattern: '^[0-9]{1,4}$', description: `1 to ${ORGANIZATIONS_PAGE_MAX}.` }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(OrganizationResource),
            links: Type.Object({
              self: Type.String({ format: 'uri' }),
              next: Type.Optional(Type.String({ format: 'uri' })),
            }),
          }),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      if (query['page[offset]'] === undefined && query['page[limit]'] === undefined) {
        const page = readPage(query, ORGANIZATION_PAGE_ORDER);
        const search = new URLSearchParams(request.url.split('?', 2)[1]?.split('#')[0] ?? '').toString();
        const { items, next } = pageOf(
          await findOrganizationsPage(db, page),
          page,
          ORGANIZATION_PAGE_ORDER,
          { baseUrl, path: '/admin/organizations', requestUrl: request.url },
          (organization) => [organization.name, organization.id],
        );
        return {
          data: items.map(resource),
          links: {
            self: `${baseUrl}/admin/organizations${search ? `?${search}` : ''}`,
            ...(next === undefined ? {} : { next }),
          },
        };
      }
      for (const name of ['page[size]', 'page[after]'])
        if (query[name] !== undefined)
          throw new AppError('INVALID_PARAMETERS', {
            detail: `${name} pages by cursor, page[offset] and page[limit] by offset: give one kind only.`,
            source: { parameter: name },
          });
      const offset = Number(query['page[offset]'] ?? 0);
      const limit = Number(query['page[limit]'] ?? ORGANIZATIONS_PAGE_MAX);
      const organizations = await pointingAt(
        (field) => ({ parameter: `page[${field}]` }),
        () => listOrganizations(db, { offset, limit }),
      );
      const page = (at: number) =>
        `${baseUrl}/admin/organizations?${new URLSearchParams({ 'page[offset]': String(at), 'page[limit]': String(limit) })}`;
      return {
        data: organizations.map(resource),
        links: {
          self: page(offset),
          ...(organizations.length === limit ? { next: page(offset + limit) } : {}),
        },
      };
    },
  );

  app.get(
    '/admin/organizations/:organization_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminReadOrganization',
        tags,
        summary: 'One employer and its policy',
        security: OPERATOR.openApi,
        params: ResourceIdParam('organization_id'),
        response: {
          200: Type.Object({ data: OrganizationResource }),
          ...errorResponses(401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { organization_id: id } = request.params as { organization_id: string };
      return { data: resource(await findOrganization(db, id)) };
    },
  );

  app.patch(
    '/admin/organizations/:organization_id/policy',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminUpdateOrganizationPolicy',
        tags,
        summary: "Change some of an employer's policy fields",
        description:
          'Fields not given keep their values. The currency is fixed once the organization has jobs.',
        security: OPERATOR.openApi,
        params: ResourceIdParam('organization_id'),
        body: PolicyUpdateBody,
        response: {
          200: Type.Object({ data: PolicyResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { organization_id: id } = request.params as { organization_id: string };
      const { data } = request.body as { data: { id?: string; attributes: Record<string, unknown> } };
      if (data.id !== undefined) bodyIdMustMatch(data.id, id);
      const organization = await pointingAt(
        (field) => ({ pointer: `/data/attributes/${field ?? ''}` }),
        () => setOrganizationPolicy(db, id, policyChangeOf(data.attributes)),
      );
      return {
        data: {
          type: 'organization_policies' as const,
          id: organization.id,
          attributes: policyAttributes(organization.policy!),
          links: { self: `${selfOf(organization.id)}/policy` },
        },
      };
    },
  );

  app.post(
    '/admin/organizations/:organization_id/roster',
    {
      config: { security: OPERATOR.config, requestMediaType: 'text/csv' },
      schema: {
        operationId: 'adminImportRoster',
        tags,
        summary: "Import an employer's roster of workers and jobs (CSV)",
        description:
          "The body is the roster as text/csv, within the server's body limit (EWA_BODY_LIMIT_BYTES); the columns " +
          'are those of `ewa people import --help`. Each line creates or updates a person and a job, keyed by the ' +
          'organization and primary_identifier, so sending the same file again changes nothing. A wrong line is ' +
          'listed with its number and field and nothing of it is written; the other lines are written, and the ' +
          `answer is 200 with the counts. At most ${ROSTER_ROWS_MAX} lines of ${ROSTER_RECORD_CHARS_MAX} ` +
          `characters; at most ${ROSTER_PROBLEMS_LISTED_MAX} rejected lines are listed. A header that is wrong is ` +
          '400 and writes nothing. Imports of one organization run one at a time: while one runs (sent here or by ' +
          '`ewa people import`, in any process), another is 409 ROSTER_IMPORT_RUNNING at once and writes nothing.',
        security: OPERATOR.openApi,
        consumes: ['text/csv'],
        params: ResourceIdParam('organization_id'),
        body: Type.String({ description: 'The roster, UTF-8 CSV with a header line.' }),
        response: {
          200: Type.Object({ data: RosterImportResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
          409: RosterImportRunning,
        },
      },
    },
    async (request) => {
      const { organization_id: id } = request.params as { organization_id: string };
      const result = await pointingAt(
        () => ({ pointer: '' }),
        // An empty body reaches here as no body at all; the import then says the roster is empty.
        () =>
          importRoster(
            { db, kind: databaseKind },
            {
              organizationId: id,
              source: [typeof request.body === 'string' ? request.body : ''],
            },
          ),
      );
      return {
        data: {
          type: 'roster_imports' as const,
          id: randomUUID(),
          attributes: rosterImportAttributes(result),
        },
      };
    },
  );
};
