import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { pointingAt } from '../../admin/input-errors.ts';
import { parseInstant } from '../../domain/date-text.ts';
import { AppError, type ErrorSource } from '../../errors/app-error.ts';
import {
  PAGINATED,
  pageLinks,
  pageLinksSchema,
  pageOf,
  pageQueryProperties,
  readPage,
} from '../../platform/pagination.ts';
import { bodyIdMustMatch, ResourceIdParam } from '../../platform/resource-schemas.ts';
import type { SecurityRequirement } from '../../platform/route-config.ts';
import { OPTIONAL_BODY } from '../../platform/route-config.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { selfLink } from '../../platform/serializer.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/event-types.ts';
import {
  ENDPOINT_LIST_ORDER,
  EndpointNotFound,
  type EndpointOwner,
  type WebhookEndpoint,
} from '../../webhooks/webhook-endpoints.ts';
import {
  DELIVERIES_LIST_MAX,
  DELIVERY_LIST_ORDER,
  type DeliveryAttempt,
} from '../../webhooks/webhook-events.ts';
import type { Webhooks } from '../../webhooks/webhooks.ts';
import {
  DeliveryResource,
  EndpointUpdateBody,
  endpointCreateBody,
  QueuedAnswer,
  RedeliveryBody,
  RotationBody,
  WebhookEndpointResource,
} from './schemas.ts';
import { deliveryAttributes, endpointAttributes } from './serialize.ts';

export interface WebhookRoutesOptions {
  webhooks: Webhooks;
  baseUrl: string;
  now: () => Date;
  /** '/rest' for partners (their own endpoints), '/admin' for the operator (every client's). (Not `prefix`: Fastify
   * takes that option as its own.) */
  surface: '/rest' | '/admin';
  security: { config: SecurityRequirement[]; openApi: Record<string, string[]>[] };
}

type EndpointDocument = {
  data: {
    attributes: {
      url: string;
      description?: string | null;
      event_types?: string[] | null;
      client_id?: string;
    };
  };
};
type UpdateDocument = {
  data: {
    id: string;
    attributes: { url?: string; description?: string | null; event_types?: string[] | null; status?: string };
  };
};

/** A page of the delivery log holds this many attempts unless page[size] (or its former name, limit) says. */
const DELIVERIES_PAGE_DEFAULT = 100;

const EVENT_LIST = Object.entries(WEBHOOK_EVENT_TYPES)
  .map(([type, what]) => `${type} (${what})`)
  .join('; ');

/** Where a field the services name is in these requests. */
function sourceOfField(field: string | undefined): ErrorSource {
  if (field === 'endpoint') return { parameter: 'endpoint_id' };
  const attribute = { event: 'event_id', client: 'client_id' }[field ?? ''] ?? field ?? 'url';
  return { pointer: `/data/attributes/${attribute}` };
}

/**
 * Webhook endpoints as JSON:API: an extension of the published API. Partners manage their own with a client token
 * (client:admin); the operator every client's under /admin. The rules are in src/webhooks/.
 */
export const webhookEndpointRoutes: FastifyPluginAsync<WebhookRoutesOptions> = async (app, options) => {
  const { webhooks, baseUrl, now, surface, security } = options;
  const operator = surface === '/admin';
  const tags = [operator ? 'Operator' : 'Webhooks'];
  const op = (name: string) => (operator ? `admin${name[0]!.toUpperCase()}${name.slice(1)}` : name);
  const ownerOf = (request: FastifyRequest): EndpointOwner =>
    operator ? 'operator' : { clientId: request.caller!.clientId };
  const base = `${surface}/webhook_endpoints`;
  const Params = ResourceIdParam('endpoint_id');
  const idOf = (request: FastifyRequest) => (request.params as { endpoint_id: string }).endpoint_id;

  const wire = (endpoint: WebhookEndpoint, extra: { secret?: string; previousExpireAt?: Date } = {}) => ({
    type: 'webhook_endpoints' as const,
    id: endpoint.id,
    attributes: {
      ...endpointAttributes(endpoint, { withClient: operator }),
      ...(extra.secret ? { secret: extra.secret } : {}),
    },
    ...(extra.previousExpireAt
      ? { meta: { previous_secrets_expire_at: extra.previousExpireAt.toISOString() } }
      : {}),
    links: { self: `${selfLink(baseUrl, 'webhook_endpoints', endpoint.id)}` },
  });
  const deliveryWire = (attempt: DeliveryAttempt) => ({
    type: 'webhook_deliveries' as const,
    id: attempt.id,
    attributes: deliveryAttributes(attempt),
  });
  const schemaErrors = { missing: 'MISSING_REQUIRED_FIELD', invalid: 'INVALID_FIELDS' } as const;
  /**
   * Service errors as the API's: a field's InputError points at it, with the code the schema gives a malformed
   * member; an endpoint not the caller's is a 404.
   */
  const answering = async <T>(
    work: () => Promise<T>,
    sourceOf: (field: string | undefined) => ErrorSource = sourceOfField,
  ): Promise<T> => {
    try {
      return await pointingAt(sourceOf, work, schemaErrors.invalid);
    } catch (error) {
      if (error instanceof EndpointNotFound)
        throw new AppError('RECORD_NOT_FOUND', { detail: error.message });
      throw error;
    }
  };

  app.get(
    base,
    {
      config: { security: security.config },
      schema: {
        operationId: op('listWebhookEndpoints'),
        ...PAGINATED,
        tags,
        summary: operator ? "Every client's webhook endpoints" : "The calling client's webhook endpoints",
        description:
          'Oldest first, at most page[size] (1 to 1000, 1000 by default); links.next is the next page while more follow.',
        security: security.openApi,
        querystring: Type.Object(pageQueryProperties()),
        response: {
          200: Type.Object({ data: Type.Array(WebhookEndpointResource), links: pageLinksSchema() }),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const page = readPage(request.query as Record<string, unknown>, ENDPOINT_LIST_ORDER);
      const { items, next } = pageOf(
        await webhooks.endpoints.listPage(ownerOf(request), page),
        page,
        ENDPOINT_LIST_ORDER,
        { baseUrl, path: base, requestUrl: request.url },
        (row) => [row.pageKey, row.endpoint.id],
      );
      return { data: items.map((row) => wire(row.endpoint)), ...pageLinks(next) };
    },
  );

  app.post(
    base,
    {
      config: { security: security.config, schemaErrorCodes: schemaErrors },
      schema: {
        operationId: op('createWebhookEndpoint'),
        tags,
        summary: 'Register a URL to receive events',
        description:
          'Answers 201 with the endpoint and its signing secret, shown this once. Deliveries are signed by the ' +
          'Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature). Events: ' +
          EVENT_LIST +
          '. An endpoint receives only events of its client’s organizations and of the people who work there.',
        security: security.openApi,
        body: endpointCreateBody(operator),
        response: {
          201: Type.Object({ data: WebhookEndpointResource }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async (request, reply) => {
      const { attributes } = (request.body as EndpointDocument).data;
      const clientId = operator ? (attributes.client_id ?? '') : request.caller!.clientId;
      const { endpoint, secret } = await answering(() =>
        webhooks.endpoints.create(
          clientId,
          { url: attributes.url, description: attributes.description, eventTypes: attributes.event_types },
          now(),
        ),
      );
      return reply.code(201).send({ data: wire(endpoint, { secret }) });
    },
  );

  app.get(
    `${base}/:endpoint_id`,
    {
      config: { security: security.config },
      schema: {
        operationId: op('readWebhookEndpoint'),
        tags,
        summary: 'One webhook endpoint',
        security: security.openApi,
        params: Params,
        response: {
          200: Type.Object({ data: WebhookEndpointResource }),
          ...errorResponses(401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => ({
      data: wire(await answering(() => webhooks.endpoints.find(ownerOf(request), idOf(request)))),
    }),
  );

  app.patch(
    `${base}/:endpoint_id`,
    {
      config: { security: security.config, schemaErrorCodes: schemaErrors },
      schema: {
        operationId: op('updateWebhookEndpoint'),
        tags,
        summary: 'Change, disable or enable a webhook endpoint',
        description:
          'status ENABLED turns an endpoint disabled by failed deliveries back on; what it missed is sent again ' +
          'by a redelivery of that time range.',
        security: security.openApi,
        params: Params,
        body: EndpointUpdateBody,
        response: {
          200: Type.Object({ data: WebhookEndpointResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { data } = request.body as UpdateDocument;
      bodyIdMustMatch(data.id, idOf(request));
      const { attributes } = data;
      const endpoint = await answering(() =>
        webhooks.endpoints.update(
          ownerOf(request),
          idOf(request),
          {
            url: attributes.url,
            description: attributes.description,
            eventTypes: attributes.event_types,
            enabled: attributes.status === undefined ? undefined : attributes.status === 'ENABLED',
          },
          now(),
        ),
      );
      return { data: wire(endpoint) };
    },
  );

  app.delete(
    `${base}/:endpoint_id`,
    {
      config: { security: security.config },
      schema: {
        operationId: op('deleteWebhookEndpoint'),
        tags,
        summary: 'Remove a webhook endpoint',
        description:
          'Answers 204. Deliveries still queued for it are dropped; its delivery log goes with it.',
        security: security.openApi,
        params: Params,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404, 406, 500) },
      },
    },
    async (request, reply) => {
      await answering(() => webhooks.endpoints.remove(ownerOf(request), idOf(request)));
      return reply.code(204).send();
    },
  );

  app.post(
    `${base}/:endpoint_id/rotate_secret`,
    {
      config: { security: security.config, schemaErrorCodes: schemaErrors },
      // A rotation with the default overlap needs no body.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        operationId: op('rotateWebhookSecret'),
        tags,
        summary: 'Give the endpoint a new signing secret',
        description:
          'Answers the endpoint with its new secret (shown this once). Deliveries carry a signature by every ' +
          'secret not yet expired: the ones before it keep signing for overlap_seconds (a day by default), so ' +
          'the receiver can switch without losing an event. A body is optional.',
        security: security.openApi,
        [OPTIONAL_BODY]: true,
        params: Params,
        body: RotationBody,
        response: {
          200: Type.Object({ data: WebhookEndpointResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const body = request.body as { data?: { attributes?: { overlap_seconds?: number } } } | null;
      const { endpoint, secret, previousExpireAt } = await answering(() =>
        webhooks.endpoints.rotateSecret(
          ownerOf(request),
          idOf(request),
          body?.data?.attributes?.overlap_seconds,
          now(),
        ),
      );
      return { data: wire(endpoint, { secret, previousExpireAt }) };
    },
  );

  app.post(
    `${base}/:endpoint_id/test`,
    {
      config: { security: security.config },
      schema: {
        operationId: op('testWebhookEndpoint'),
        tags,
        summary: 'Send a webhook.test event to the endpoint',
        description: 'Answers 202 with the event id; the delivery log shows how the receiver answered.',
        security: security.openApi,
        params: Params,
        response: { 202: QueuedAnswer, ...errorResponses(400, 401, 403, 404, 406, 429, 500) },
      },
    },
    async (request, reply) => {
      const eventId = await answering(() => webhooks.events.sendTest(ownerOf(request), idOf(request), now()));
      webhooks.dispatcher.nudge();
      return reply.code(202).send({ meta: { queued: 1, event_id: eventId } });
    },
  );

  app.get(
    `${base}/:endpoint_id/deliveries`,
    {
      config: { security: security.config },
      schema: {
        operationId: op('listWebhookDeliveries'),
        ...PAGINATED,
        tags,
        summary: 'The delivery log of an endpoint, latest first',
        description: `Each attempt: the status code the receiver answered (none when it could not be reached), how long it took, and the outcome. Latest first, at most page[size] (1 to ${DELIVERIES_LIST_MAX}, ${DELIVERIES_PAGE_DEFAULT} by default); links.next is the next page while more follow.`,
        security: security.openApi,
        params: Params,
        querystring: Type.Object({
          limit: Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,4}$',
              deprecated: true,
              description: `The former name of page[size]: 1 to ${DELIVERIES_LIST_MAX}; ${DELIVERIES_PAGE_DEFAULT} by default.`,
            }),
          ),
          event_id: Type.Optional(Type.String({ maxLength: 64 })),
          ...pageQueryProperties(DELIVERIES_PAGE_DEFAULT),
        }),
        response: {
          200: Type.Object({ data: Type.Array(DeliveryResource), links: pageLinksSchema() }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const query = request.query as Record<string, unknown> & { limit?: string; event_id?: string };
      const page = readPage(query, DELIVERY_LIST_ORDER, { defaultSize: DELIVERIES_PAGE_DEFAULT });
      if (query.limit !== undefined) {
        const limit = Number(query.limit);
        if (query['page[size]'] !== undefined || !(limit >= 1 && limit <= DELIVERIES_LIST_MAX))
          throw new AppError('INVALID_PARAMETERS', {
            detail: `limit (the former name of page[size]) must be a whole number from 1 to ${DELIVERIES_LIST_MAX}, and not given with page[size].`,
            source: { parameter: 'limit' },
          });
        page.size = limit;
      }
      const rows = await answering(
        () =>
          webhooks.events.deliveriesPage(
            ownerOf(request),
            { endpointId: idOf(request), eventId: query.event_id },
            page,
          ),
        (field) => ({ parameter: field === 'event' ? 'event_id' : 'endpoint_id' }),
      );
      const { items, next } = pageOf(
        rows,
        page,
        DELIVERY_LIST_ORDER,
        {
          baseUrl,
          path: `${base}/${encodeURIComponent(idOf(request).toLowerCase())}/deliveries`,
          requestUrl: request.url,
          drop: ['limit'],
        },
        (row) => [row.pageKey, row.attempt.id],
      );
      return { data: items.map((row) => deliveryWire(row.attempt)), ...pageLinks(next) };
    },
  );

  app.post(
    `${base}/:endpoint_id/redeliveries`,
    {
      config: { security: security.config, schemaErrorCodes: schemaErrors },
      schema: {
        operationId: op('redeliverWebhookEvents'),
        tags,
        summary: 'Send events to the endpoint again',
        description:
          'One event (event_id), or every event of a time range (from, to) the endpoint receives, oldest first. ' +
          'Answers 202 with how many deliveries were queued.',
        security: security.openApi,
        params: Params,
        body: RedeliveryBody,
        response: { 202: QueuedAnswer, ...errorResponses(400, 401, 403, 404, 406, 415, 500) },
      },
    },
    async (request, reply) => {
      const { attributes } = (
        request.body as { data: { attributes: { event_id?: string; from?: string; to?: string } } }
      ).data;
      const queued = await answering(() =>
        webhooks.events.redeliver(
          ownerOf(request),
          {
            endpointId: idOf(request),
            eventId: attributes.event_id,
            // Not one: an Invalid Date, which the service refuses naming the field.
            from:
              attributes.from === undefined
                ? undefined
                : (parseInstant(attributes.from) ?? new Date(Number.NaN)),
            to:
              attributes.to === undefined ? undefined : (parseInstant(attributes.to) ?? new Date(Number.NaN)),
          },
          now(),
        ),
      );
      webhooks.dispatcher.nudge();
      return reply.code(202).send({ meta: { queued } });
    },
  );
};
