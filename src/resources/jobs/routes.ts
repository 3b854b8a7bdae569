import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { ACTIVATION_STATUSES, DIRECT_DEPOSIT_STATUSES, WAGE_FREQUENCIES } from '../../domain/job-values.ts';
import { isUuid } from '../../domain/uuid.ts';
import type { FilterSpec } from '../../platform/filters.ts';
import { answerListPage, PAGE_SIZE_MAX } from '../../platform/pagination.ts';
import {
  bodyIdMustMatch,
  LOOKUP_OR_USER_READ,
  OneOf,
  RelationshipBody,
  RelationshipSchema,
  ResourceIdParam,
  USER_WRITE,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { type RestList, readRestListQuery, restListSchema } from '../../platform/rest-list-schema.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { jobResource } from './serialize.ts';
import { changeJob, jobNotFound, readJob } from './service.ts';
import { findVisibleJobs, JOB_FILTER_FIELDS, JOB_LIST_ORDER } from './store.ts';

/** A page of jobs holds at most this many (page[size], by default), oldest first. */
export const JOBS_LIST_MAX = PAGE_SIZE_MAX;

const JobResource = Type.Object({
  type: Type.Literal('jobs'),
  id: UuidString,
  attributes: Type.Object({
    external_identifiers: Type.Object(
      {
        primary_identifier: Type.String(),
        employee_id: Type.Optional(Type.String()),
        group: Type.Optional(Type.String()),
      },
      { description: "The employer's identifiers of this job." },
    ),
    first_name: Type.String(),
    last_name: Type.String(),
    location: Type.Optional(Type.String()),
    title: Type.Union([Type.String(), Type.Null()]),
    department: Type.Union([Type.String(), Type.Null()]),
    activation_status: OneOf(ACTIVATION_STATUSES),
    wage_rate: Type.Object({
      amount: Type.Integer({ minimum: 0, description: 'Minor units (cents).' }),
      currency: Type.String({ minLength: 3, maxLength: 3 }),
      frequency: OneOf(WAGE_FREQUENCIES),
    }),
    direct_deposit_status: OneOf(DIRECT_DEPOSIT_STATUSES),
  }),
  relationships: Type.Object({
    person: RelationshipSchema('people'),
    organization: RelationshipSchema('organizations'),
    direct_deposit_default_depository: Type.Optional(RelationshipSchema('accounts')),
    direct_deposit_default_card: Type.Optional(RelationshipSchema('accounts')),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const JobUpdateBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('jobs'),
    id: Type.String({ maxLength: 64 }),
    attributes: Type.Optional(
      Type.Object(
        {
          activation_status: Type.Optional(
            Type.String({
              maxLength: 32,
              description: 'Only DEACTIVATED: turns on-demand pay off for this job.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    relationships: Type.Optional(
      Type.Object(
        {
          direct_deposit_default_depository: Type.Optional(RelationshipBody('accounts')),
          direct_deposit_default_card: Type.Optional(RelationshipBody('accounts')),
        },
        { additionalProperties: false },
      ),
    ),
  }),
});

interface JobUpdateDocument {
  data: {
    id: string;
    attributes?: { activation_status?: string };
    relationships?: {
      direct_deposit_default_depository?: { data: { id: string } };
      direct_deposit_default_card?: { data: { id: string } };
    };
  };
}

const FILTERS: FilterSpec = {
  'external_identifiers.primary_identifier': { type: 'string' },
  'external_identifiers.employee_id': { type: 'string' },
  'external_identifiers.group': { type: 'string' },
  'person.id': { type: 'uuid' },
  'organization.id': { type: 'uuid' },
};

const LIST: RestList = { name: 'Jobs', filters: FILTERS, filterFields: JOB_FILTER_FIELDS };

const Params = ResourceIdParam('job_id');

export const jobRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string; now: () => Date }> = async (
  app,
  { db, baseUrl, now },
) => {
  app.get(
    '/rest/jobs',
    {
      config: { security: LOOKUP_OR_USER_READ.config },
      schema: {
        operationId: 'listJobs',
        tags: ['Jobs'],
        summary: "The signed-in person's jobs, or the jobs at organizations linked to the client",
        description: `At most ${JOBS_LIST_MAX} jobs, oldest first. Filters combine with AND. An extension: page[size] and page[after] page through the list; links.next is the next page while more follow.`,
        security: LOOKUP_OR_USER_READ.openApi,
        ...restListSchema(LIST, JobResource),
      },
    },
    async (request) => {
      const query = readRestListQuery(request.query, LIST);
      return answerListPage(
        request,
        { baseUrl, path: '/rest/jobs', order: JOB_LIST_ORDER },
        (page) => findVisibleJobs(db, request.caller!, { query, page }),
        (row) => jobResource(baseUrl, row),
      );
    },
  );

  app.get(
    '/rest/jobs/:job_id',
    {
      config: { security: LOOKUP_OR_USER_READ.config },
      schema: {
        operationId: 'readJob',
        tags: ['Jobs'],
        summary: 'One job of the signed-in person, or at an organization linked to the client',
        security: LOOKUP_OR_USER_READ.openApi,
        params: Params,
        response: {
          200: Type.Object({ data: JobResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { job_id: id } = request.params as { job_id: string };
      if (!isUuid(id)) throw jobNotFound(id);
      return { data: jobResource(baseUrl, await readJob(db, request.caller!, id.toLowerCase())) };
    },
  );

  app.patch(
    '/rest/jobs/:job_id',
    {
      config: { security: USER_WRITE.config },
      schema: {
        operationId: 'updateJob',
        tags: ['Jobs'],
        summary: 'Set where paychecks of this job are deposited, or deactivate on-demand pay for it',
        description:
          'Setting direct_deposit_default_depository (a DEPOSITORY account of the same person) or direct_deposit_default_card (a CARD account) needs an ACTIVATED job (else ACTIVE_JOB_REQUIRED) and makes direct_deposit_status SETUP_COMPLETE. activation_status takes DEACTIVATED only.',
        security: USER_WRITE.openApi,
        params: Params,
        body: JobUpdateBody,
        response: {
          200: Type.Object({ data: JobResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { job_id: id } = request.params as { job_id: string };
      const { data } = request.body as JobUpdateDocument;
      if (!isUuid(id)) throw jobNotFound(id);
      bodyIdMustMatch(data.id, id);
      const job = await changeJob(
        db,
        request.caller!,
        id.toLowerCase(),
        {
          activationStatus: data.attributes?.activation_status,
          defaultDepositoryId: data.relationships?.direct_deposit_default_depository?.data.id,
          defaultCardId: data.relationships?.direct_deposit_default_card?.data.id,
        },
        now(),
      );
      return { data: jobResource(baseUrl, job) };
    },
  );
};
