import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import { IdempotencyKeys, requestFingerprint, routeTarget } from '../../idempotency/idempotency.ts';
import type { IdempotencyOptions, StoredResponse } from '../../idempotency/keyed-work.ts';
import { describeAdvanceChecks } from '../../money/advances/advance-checks.ts';
import { answeredBy, type TransferService, type TransferView } from '../../money/advances/advance-service.ts';
import type { FundingSource } from '../../money/advances/transfer.ts';
import type { FilterSpec } from '../../platform/filters.ts';
import { errorDocumentFor } from '../../platform/json-api.ts';
import { JSON_API_MEDIA } from '../../platform/media-types.ts';
import { PAGE_SIZE_MAX, pageLinks, pageOf, readPage } from '../../platform/pagination.ts';
import {
  OneOf,
  RelationshipBody,
  RelationshipSchema,
  ResourceIdParam,
  USER_READ,
  USER_WRITE,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { type RestList, readRestListQuery, restListSchema } from '../../platform/rest-list-schema.ts';
import { HANDLER_REQUIRED_HEADERS } from '../../platform/route-config.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { includedFundingSources, transferResource } from './serialize.ts';
import { TRANSFER_FILTER_FIELDS, TRANSFER_LIST_ORDER } from './store.ts';
import { listTransfers, readTransfer, transferNotFound } from './transfer-reads.ts';

/** A list of transfers answers at most this many, oldest first. */
export const TRANSFERS_LIST_MAX = PAGE_SIZE_MAX;

const SCHEDULES = ['WITHIN_THIRTY_MINUTES', 'NEXT_BUSINESS_DAY'] as const;
const INCLUDABLE = ['estimated_funding_sources', 'final_funding_sources'] as const;

const FundingSources = Type.Object({
  data: Type.Array(Type.Object({ type: Type.Literal('funding_sources'), id: Type.String() })),
});

const TransferResource = Type.Object({
  type: Type.Literal('transfers'),
  id: UuidString,
  attributes: Type.Object({
    amount: Type.Integer({ minimum: 0, description: 'Minor units asked for; the fee comes out of it.' }),
    currency: Type.String(),
    schedule: OneOf(SCHEDULES),
    preview: Type.Boolean({ description: 'True when nothing was created.' }),
    status: OneOf(['PENDING', 'SETTLED', 'FAILED']),
    submitted_at: Type.String({ format: 'date-time' }),
    resolved_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    fee: Type.Integer({ minimum: 0 }),
  }),
  relationships: Type.Object({
    origin: Type.Object({
      data: Type.Object({ type: OneOf(['accounts', 'paychecks']), id: UuidString }),
    }),
    destination: RelationshipSchema('accounts'),
    person: RelationshipSchema('people'),
    estimated_funding_sources: FundingSources,
    final_funding_sources: FundingSources,
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
  meta: Type.Optional(
    Type.Object({
      preview: Type.Optional(
        Type.String({
          description:
            'Only on the answer to a preview (preview: true): that nothing was created, so links.self leads nowhere yet. An extension: clients of the published description may ignore it.',
        }),
      ),
      failure_reason: Type.Optional(
        Type.String({
          description:
            'Only on a FAILED transfer: why. A sandbox or rail reason (DESTINATION_REJECTED, ACCOUNT_CLOSED, DESTINATION_NOT_FOUND, RAIL_REJECTED) or an ACH return code (R01 insufficient funds, R02 account closed, R03 no account, R04 invalid account number, …); a transfer returned after it settled is FAILED with its return code. An extension: clients of the published description may ignore it.',
        }),
      ),
    }),
  ),
});

const FundingSourceResource = Type.Object({
  type: Type.Literal('funding_sources'),
  id: Type.String(),
  attributes: Type.Object({ amount: Type.Integer({ minimum: 0 }), currency: Type.String() }),
  relationships: Type.Object({
    source: RelationshipSchema('paychecks'),
    transfer: RelationshipSchema('transfers'),
  }),
});

const TransferCreateBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('transfers'),
    id: Type.Optional(Type.String({ format: 'uuid', description: 'Your id for the transfer (any UUID).' })),
    attributes: Type.Object({
      amount: Type.Integer({ minimum: 1, maximum: 100_000_000_000, description: 'Minor units.' }),
      currency: Type.String({ pattern: '^[A-Z]{3}$' }),
      schedule: OneOf(SCHEDULES),
      preview: Type.Optional(Type.Boolean({ default: false })),
    }),
    meta: Type.Optional(
      Type.Object(
        {
          disclosure_acknowledged: Type.Optional(
            Type.Boolean({
              description:
                "An extension: the person saw this request's terms (its preview) and acknowledged them. Required on a transfer (not a preview) where the person's state asks for a disclosure at each request (Utah); see docs/integrators/disclosures.md.",
            }),
          ),
        },
        // JSON:API's meta: its other members are accepted and ignored, as on every resource.
        { additionalProperties: true },
      ),
    ),
    relationships: Type.Object({
      origin: RelationshipBody('accounts'),
      destination: Type.Optional(RelationshipBody('accounts')),
      person: Type.Optional(RelationshipBody('people')),
    }),
  }),
});

interface TransferCreateDocument {
  data: {
    id?: string;
    attributes: { amount: number; currency: string; schedule: (typeof SCHEDULES)[number]; preview?: boolean };
    meta?: { disclosure_acknowledged?: boolean };
    relationships: {
      origin: { data: { id: string } };
      destination?: { data: { id: string } };
      person?: { data: { id: string } };
    };
  };
}

const IncludeQuery = Type.String({
  maxLength: 100,
  description: `Comma-separated: ${INCLUDABLE.join(', ')}; the funding sources are added to included.`,
});

const FILTERS: FilterSpec = { submitted_at: { type: 'date-time', operators: ['gt'] } };

const LIST: RestList = { name: 'Transfers', filters: FILTERS, filterFields: TRANSFER_FILTER_FIELDS };

export interface TransferRoutesOptions {
  db: Db;
  baseUrl: string;
  now: () => Date;
  transfers: TransferService;
  idempotency: IdempotencyOptions;
  /** Told after an advance may have committed, so that its instruction leaves for the rail without waiting. */
  afterWrite?: () => void;
}

function readInclude(value: unknown): Set<FundingSource['stage']> {
  const stages = new Set<FundingSource['stage']>();
  if (value === undefined) return stages;
  for (const name of String(value).split(',')) {
    if (name === 'estimated_funding_sources') stages.add('ESTIMATED');
    else if (name === 'final_funding_sources') stages.add('FINAL');
    else
      throw new AppError('INVALID_PARAMETERS', {
        detail: `include takes ${INCLUDABLE.join(', ')}; ${JSON.stringify(name)} is not one of them.`,
        source: { parameter: 'include' },
      });
  }
  return stages;
}

function idempotencyKeyOf(request: FastifyRequest): string {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string' || !isUuid(key))
    throw new AppError('INVALID_IDEMPOTENCY_KEY', {
      detail:
        key === undefined
          ? 'The Idempotency-Key header is required: a UUID you choose for this request.'
          : 'The Idempotency-Key header must be a UUID.',
      source: { header: 'Idempotency-Key' },
    });
  return key.toLowerCase();
}

function sendStored(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).type(JSON_API_MEDIA).send(response.body);
}

export const transferRoutes: FastifyPluginAsync<TransferRoutesOptions> = async (
  app,
  { db, baseUrl, now, transfers, idempotency, afterWrite },
) => {
  const keys = new IdempotencyKeys(db, {
    ...idempotency,
    onBatch: (batch) => app.log.debug({ advanceBatch: batch }, 'advances shared a transaction'),
  });
  const wireDocument = (data: TransferView | TransferView[], stages: Set<FundingSource['stage']>) => {
    const views = Array.isArray(data) ? data : [data];
    const rendered = Array.isArray(data)
      ? data.map((view) => transferResource(baseUrl, view))
      : transferResource(baseUrl, data);
    return stages.size === 0
      ? { data: rendered }
      : { data: rendered, included: includedFundingSources(views, stages) };
  };

  app.get(
    '/rest/transfers',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'listTransfers',
        tags: ['Transfers'],
        summary: "The signed-in person's transfers: advances and earnings credited to earnings balances",
        description: `At most ${TRANSFERS_LIST_MAX} transfers, oldest first. An extension: page[size] and page[after] page through the list; links.next is the next page while more follow.`,
        security: USER_READ.openApi,
        ...restListSchema(LIST, TransferResource, {
          query: { include: Type.Optional(IncludeQuery) },
          answer: { included: Type.Optional(Type.Array(FundingSourceResource)) },
        }),
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown>;
      const stages = readInclude(query.include);
      const list = readRestListQuery(query, LIST);
      const page = readPage(query, TRANSFER_LIST_ORDER);
      const caller = request.caller!;
      if (caller.kind !== 'user') throw new AppError('FORBIDDEN');
      const { items, next } = pageOf(
        await listTransfers(db, caller.personId, list, page),
        page,
        TRANSFER_LIST_ORDER,
        { baseUrl, path: '/rest/transfers', requestUrl: request.url },
        (view) => [view.pageKey, view.transfer.id],
      );
      return { ...wireDocument(items, stages), ...pageLinks(next) };
    },
  );

  app.get(
    '/rest/transfers/:transfer_id',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'readTransfer',
        tags: ['Transfers'],
        summary: 'One transfer of the signed-in person',
        security: USER_READ.openApi,
        params: ResourceIdParam('transfer_id'),
        querystring: Type.Object({ include: Type.Optional(IncludeQuery) }),
        response: {
          200: Type.Object({
            data: TransferResource,
            included: Type.Optional(Type.Array(FundingSourceResource)),
          }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { transfer_id: id } = request.params as { transfer_id: string };
      const stages = readInclude((request.query as Record<string, unknown>).include);
      const caller = request.caller!;
      if (caller.kind !== 'user') throw new AppError('FORBIDDEN');
      if (!isUuid(id)) throw transferNotFound(id);
      return wireDocument(await readTransfer(db, caller.personId, id.toLowerCase()), stages);
    },
  );

  app.post(
    '/rest/transfers',
    {
      config: { security: USER_WRITE.config },
      schema: {
        operationId: 'createTransfer',
        tags: ['Transfers'],
        summary: 'Move available earnings to a bank account or card (an advance)',
        description: `Needs an Idempotency-Key header (a UUID): the same key with the same body answers the same response again, byte for byte, for 24 hours (EWA_IDEMPOTENCY_KEY_TTL_SECONDS); with another body it is INVALID_IDEMPOTENCY_KEY; while the first request waits or runs, 409 IDEMPOTENCY_KEY_LOCKED. preview: true checks and prices the transfer and creates nothing. Checks, in order (the first that fails answers): ${describeAdvanceChecks('plain')}. The fee is deducted from the amount.`,
        security: USER_WRITE.openApi,
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({ description: 'A UUID you choose for this request.' }),
          ),
        }),
        // Checked by idempotencyKeyOf, which answers INVALID_IDEMPOTENCY_KEY: required in the document.
        [HANDLER_REQUIRED_HEADERS]: ['idempotency-key'],
        querystring: Type.Object({ include: Type.Optional(IncludeQuery) }),
        body: TransferCreateBody,
        response: {
          200: Type.Object({
            data: TransferResource,
            included: Type.Optional(Type.Array(FundingSourceResource)),
          }),
          ...errorResponses(400, 401, 403, 406, 409, 415, 500),
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      if (caller.kind !== 'user') throw new AppError('FORBIDDEN');
      const key = idempotencyKeyOf(request);
      const stages = readInclude((request.query as Record<string, unknown>).include);
      const { data } = request.body as TransferCreateDocument;
      const transfer = {
        id: data.id,
        amountMinor: data.attributes.amount,
        currency: data.attributes.currency,
        schedule: data.attributes.schedule,
        preview: data.attributes.preview === true,
        originId: data.relationships.origin.data.id,
        destinationId: data.relationships.destination?.data.id,
        personId: data.relationships.person?.data.id,
        disclosureAcknowledged: data.meta?.disclosure_acknowledged === true,
      };
      const answer = await keys.run(
        {
          scope: `person:${caller.personId}`,
          key,
          fingerprint: requestFingerprint(
            'POST',
            routeTarget(request.routeOptions.url ?? request.url, request.query),
            request.body,
          ),
          now: now(),
        },
        answeredBy(transfers.advance(caller.personId, transfer, now), (view) => ({
          status: 200,
          body: JSON.stringify(wireDocument(view, stages)),
        })),
        // A refusal is an answer too: the same request gets it again, and nothing was written.
        (error) => ({
          status: error.status,
          body: JSON.stringify(errorDocumentFor(request, error, baseUrl)),
        }),
      );
      if (answer.status === 200 && !transfer.preview) afterWrite?.();
      return sendStored(reply, answer);
    },
  );
};
