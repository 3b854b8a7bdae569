import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  COMPLAINT_CHANNELS,
  COMPLAINT_STATUSES,
  type Complaint,
  checkComplaintText,
  checkOpening,
  isComplaintStatus,
} from '../complaints/complaint.ts';
import {
  COMPLAINT_LIST_ORDER,
  findComplaint,
  listComplaints,
  moveComplaint,
  openComplaint,
} from '../complaints/complaint-store.ts';
import type { Db } from '../db/database.ts';
import { PAGE_KEY } from '../db/keyset-page.ts';
import { isUsState } from '../domain/us-states.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError } from '../errors/input-error.ts';
import { answerListPage } from '../platform/pagination.ts';
import { errorResponses } from '../platform/schemas.ts';
import { pointingAt } from './input-errors.ts';
import { listRouteSchema } from './list-route.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];
const nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);

const ComplaintAttributes = Type.Object({
  organization_id: Type.String({ format: 'uuid' }),
  person_id: nullable(Type.String({ format: 'uuid' })),
  state: Type.String({ description: "The complainant's state of residence when the complaint was opened." }),
  channel: Type.String({ description: `One of ${COMPLAINT_CHANNELS.join(', ')}.` }),
  summary: Type.String(),
  status: Type.String({ description: `One of ${COMPLAINT_STATUSES.join(', ')}.` }),
  answer: nullable(Type.String()),
  resolution: nullable(Type.String()),
  opened_at: Type.String({ format: 'date-time' }),
  answered_at: nullable(Type.String({ format: 'date-time' })),
  closed_at: nullable(Type.String({ format: 'date-time' })),
});

const ComplaintResource = Type.Object({
  type: Type.Literal('complaints'),
  id: Type.String({ format: 'uuid' }),
  attributes: ComplaintAttributes,
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

/** The attributes are checked by checkOpening and the transitions, which name the field at fault. */
const ComplaintBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('complaints'),
    id: Type.Optional(Type.String({ maxLength: 100 })),
    attributes: Type.Record(Type.String(), Type.Unknown()),
  }),
});

const ComplaintIdParam = Type.Object({ complaint_id: Type.String({ minLength: 1, maxLength: 100 }) });

const OPENED = ['organization_id', 'person_id', 'state', 'channel', 'summary'];
const atAttribute = (field: string | undefined) => ({
  pointer: `/data/attributes${field ? `/${field}` : ''}`,
});

function complaintId(value: string): string {
  if (!isUuid(value))
    throw new AppError('INVALID_PARAMETERS', {
      detail: `complaint_id must be a UUID (got "${value.slice(0, 40)}").`,
      source: { parameter: 'complaint_id' },
    });
  return value.toLowerCase();
}

/** The complaints record (what `ewa complaints` does): open, answer, close, list and read. */
export const adminComplaintRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string; now: () => Date }> = async (
  app,
  { db, baseUrl, now },
) => {
  const resource = ({ id, ...attributes }: Complaint) => ({
    type: 'complaints' as const,
    id,
    attributes,
    links: { self: `${baseUrl}/admin/complaints/${id}` },
  });
  const one = Type.Object({ data: ComplaintResource });

  app.get(
    '/admin/complaints',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminListComplaints',
        tags,
        summary: 'The complaints record, newest first',
        description:
          'filter[state] keeps the complaints of one state (the complainant’s when opened), filter[status] one ' +
          'status (OPEN, ANSWERED, CLOSED), filter[organization] one employer.',
        security: OPERATOR.openApi,
        ...listRouteSchema(ComplaintResource, {
          'filter[state]': Type.Optional(Type.String({ maxLength: 100 })),
          'filter[status]': Type.Optional(Type.String({ maxLength: 100 })),
          'filter[organization]': Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
    },
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      const state = query['filter[state]'];
      const status = query['filter[status]'];
      const organization = query['filter[organization]'];
      const filter = await pointingAt(
        (field) => ({ parameter: `filter[${field}]` }),
        async () => {
          if (state !== undefined && !isUsState(state))
            throw new InputError(
              `filter[state] must be the two-letter code of a US state or DC (got "${state}").`,
              { field: 'state' },
            );
          if (status !== undefined && !isComplaintStatus(status))
            throw new InputError(
              `filter[status] must be one of ${COMPLAINT_STATUSES.join(', ')} (got "${status}").`,
              { field: 'status' },
            );
          if (organization !== undefined && !isUuid(organization))
            throw new InputError(`filter[organization] must be a UUID (got "${organization}").`, {
              field: 'organization',
            });
          return { state, status: status as Complaint['status'] | undefined, organizationId: organization };
        },
      );
      return answerListPage(
        request,
        { baseUrl, path: '/admin/complaints', order: COMPLAINT_LIST_ORDER },
        (page) => listComplaints(db, filter, page),
        ({ [PAGE_KEY]: _key, ...complaint }) => resource(complaint),
      );
    },
  );

  app.post(
    '/admin/complaints',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminOpenComplaint',
        tags,
        summary: 'Record a complaint received',
        description:
          `attributes: organization_id, person_id (optional), channel (${COMPLAINT_CHANNELS.join(', ')}), summary, ` +
          'and state when no person is named or the person has no state on record (otherwise it must agree with ' +
          'the record). The complaint is OPEN, counted in that state from now on.',
        security: OPERATOR.openApi,
        body: ComplaintBody,
        response: { 201: one, ...errorResponses(400, 401, 403, 406, 415, 500) },
      },
    },
    async (request, reply) => {
      const { attributes } = (request.body as { data: { attributes: Record<string, unknown> } }).data;
      const complaint = await pointingAt(atAttribute, async () => {
        for (const key of Object.keys(attributes))
          if (!OPENED.includes(key))
            throw new InputError(`${key} is not an attribute of a complaint opened (${OPENED.join(', ')}).`, {
              field: key,
            });
        return openComplaint(
          db,
          checkOpening({
            organization_id: attributes.organization_id,
            person_id: attributes.person_id,
            state: attributes.state,
            channel: attributes.channel,
            summary: attributes.summary,
          }),
          now(),
        );
      });
      return reply.code(201).send({ data: resource(complaint) });
    },
  );

  app.get(
    '/admin/complaints/:complaint_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminReadComplaint',
        tags,
        summary: 'One complaint, with its answer and resolution',
        security: OPERATOR.openApi,
        params: ComplaintIdParam,
        response: { 200: one, ...errorResponses(400, 401, 403, 404, 406, 500) },
      },
    },
    async (request) => {
      const { complaint_id: id } = request.params as { complaint_id: string };
      return { data: resource(await findComplaint(db, complaintId(id))) };
    },
  );

  app.patch(
    '/admin/complaints/:complaint_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminUpdateComplaint',
        tags,
        summary: 'Answer or close a complaint',
        description:
          'attributes {status: ANSWERED, answer} answers an OPEN complaint; {status: CLOSED, resolution} closes an ' +
          'OPEN or ANSWERED one (closed from OPEN, it has no answer). Any other change is 400 ' +
          'INVALID_RESOURCE_STATE naming the status it has; of two changes sent at once, the second meets the ' +
          "first's status.",
        security: OPERATOR.openApi,
        params: ComplaintIdParam,
        body: ComplaintBody,
        response: { 200: one, ...errorResponses(400, 401, 403, 404, 406, 415, 500) },
      },
    },
    async (request) => {
      const { complaint_id: rawId } = request.params as { complaint_id: string };
      const id = complaintId(rawId);
      const { data } = request.body as { data: { id?: string; attributes: Record<string, unknown> } };
      const complaint = await pointingAt(
        (field) => (field === 'id' ? { pointer: '/data/id' } : atAttribute(field)),
        async () => {
          if (data.id !== undefined && data.id.toLowerCase() !== id)
            throw new InputError(`data.id ${data.id} is not the complaint of the path, ${id}.`, {
              field: 'id',
            });
          const { status, ...rest } = data.attributes;
          const textField = status === 'ANSWERED' ? 'answer' : status === 'CLOSED' ? 'resolution' : undefined;
          if (textField === undefined)
            throw new InputError(
              `status must be ANSWERED (with answer) or CLOSED (with resolution) (got ${JSON.stringify(status)}).`,
              { field: 'status' },
            );
          for (const key of Object.keys(rest))
            if (key !== textField)
              throw new InputError(`${key} cannot be given with status ${status}: only ${textField}.`, {
                field: key,
              });
          const text = checkComplaintText(textField, rest[textField]);
          return moveComplaint(db, id, status === 'ANSWERED' ? 'answer' : 'close', text, now());
        },
      );
      return { data: resource(complaint) };
    },
  );
};
