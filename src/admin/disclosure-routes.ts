import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import {
  checkPublication,
  type DisclosureDocument,
  documentAttributes,
} from '../disclosures/disclosure-document.ts';
import { DOCUMENT_LIST_ORDER, listDocuments, publishDocument } from '../disclosures/document-store.ts';
import { readTransferDisclosure } from '../disclosures/transfer-disclosure-store.ts';
import { isUsState } from '../domain/us-states.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError } from '../errors/input-error.ts';
import { answerListPage } from '../platform/pagination.ts';
import { errorResponses } from '../platform/schemas.ts';
import { DisclosureAttributes } from '../resources/disclosures/routes.ts';
import { pointingAt } from './input-errors.ts';
import { listRouteSchema } from './list-route.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];

const DocumentResource = Type.Object({
  type: Type.Literal('disclosures'),
  id: Type.String({ format: 'uuid' }),
  attributes: DisclosureAttributes,
});

/** The attributes are checked by checkPublication, which names the field at fault. */
const PublishBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('disclosures'),
    attributes: Type.Record(Type.String(), Type.Unknown()),
  }),
});

const TransferDisclosureResource = Type.Object({
  type: Type.Literal('transfer_disclosures'),
  id: Type.String({ format: 'uuid' }),
  attributes: Type.Object({
    amount: Type.Integer(),
    fee: Type.Integer(),
    amount_received: Type.Integer(),
    currency: Type.String(),
    destination_account_id: Type.String({ format: 'uuid' }),
    schedule: Type.String(),
    expected_on: Type.String({
      format: 'date',
      description: 'When the money is expected (the rail’s settlement day).',
    }),
    debit_on: Type.String({
      format: 'date',
      description: 'The payday of the paycheck that funds and repays it.',
    }),
    disclosure_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    disclosure_version: Type.Union([Type.Integer(), Type.Null()]),
    acknowledged_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  }),
});

const PUBLISHED = ['state', 'title', 'body', 'effective_from'];

function resource(document: DisclosureDocument) {
  return { type: 'disclosures' as const, id: document.id, attributes: documentAttributes(document) };
}

/** The operator's disclosure documents (what `ewa disclosures` does) and what each advance disclosed. */
export const adminDisclosureRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string; now: () => Date }> = async (
  app,
  { db, baseUrl, now },
) => {
  app.get(
    '/admin/disclosures',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminListDisclosures',
        tags,
        summary: 'The disclosure documents, every version',
        description:
          'The default document (state null) first, then by state and version. filter[state] keeps one state.',
        security: OPERATOR.openApi,
        ...listRouteSchema(DocumentResource, {
          'filter[state]': Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
    },
    async (request) => {
      const state = (request.query as Record<string, string | undefined>)['filter[state]'];
      if (state !== undefined && !isUsState(state))
        throw new AppError('INVALID_PARAMETERS', {
          detail: `filter[state] must be the two-letter code of a US state or DC (got "${state}").`,
          source: { parameter: 'filter[state]' },
        });
      return answerListPage(
        request,
        { baseUrl, path: '/admin/disclosures', order: DOCUMENT_LIST_ORDER },
        (page) => listDocuments(db, state, page),
        (document) => resource(document),
      );
    },
  );

  app.post(
    '/admin/disclosures',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminPublishDisclosure',
        tags,
        summary: 'Publish a new version of a disclosure document',
        description:
          'attributes: state (null or absent: the default document), title, body, effective_from (default now). ' +
          'The version is the next of that state. A material change: acceptances of older versions no longer count.',
        security: OPERATOR.openApi,
        body: PublishBody,
        response: {
          201: Type.Object({ data: DocumentResource }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async (request, reply) => {
      const { attributes } = (request.body as { data: { attributes: Record<string, unknown> } }).data;
      const publication = await pointingAt(
        (field) => ({ pointer: `/data/attributes${field ? `/${field}` : ''}` }),
        async () => {
          for (const key of Object.keys(attributes))
            if (!PUBLISHED.includes(key))
              throw new InputError(`${key} is not an attribute of a publication (${PUBLISHED.join(', ')}).`, {
                field: key,
              });
          return checkPublication(attributes);
        },
      );
      const document = await publishDocument(db, publication, now());
      reply.code(201);
      return { data: resource(document) };
    },
  );

  app.get(
    '/admin/transfers/:transfer_id/disclosure',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminReadTransferDisclosure',
        tags,
        summary: 'What was disclosed for an advance',
        description:
          'Written in the advance’s transaction and kept at least two years: its amount, fee, amount received, ' +
          'destination, schedule, expected day, debit day, the disclosure version accepted and the acknowledgement.',
        security: OPERATOR.openApi,
        params: Type.Object({ transfer_id: Type.String({ maxLength: 100 }) }),
        response: {
          200: Type.Object({ data: TransferDisclosureResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { transfer_id: id } = request.params as { transfer_id: string };
      if (!isUuid(id))
        throw new AppError('INVALID_PARAMETERS', {
          detail: `transfer_id must be a UUID (got "${id.slice(0, 40)}").`,
          source: { parameter: 'transfer_id' },
        });
      const view = await readTransferDisclosure(db, id.toLowerCase());
      if (!view)
        throw new AppError('RECORD_NOT_FOUND', { detail: `No disclosure is recorded for transfer ${id}.` });
      const { transfer_id, ...attributes } = view;
      return { data: { type: 'transfer_disclosures' as const, id: transfer_id, attributes } };
    },
  );
};
