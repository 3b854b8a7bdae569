import { Type } from 'typebox';
import { OneOf, UuidString } from '../../platform/resource-schemas.ts';
import { EVENT_TYPE_NAMES } from '../../webhooks/event-types.ts';
import {
  DESCRIPTION_LENGTH_MAX,
  ROTATION_OVERLAP_MAX_SECONDS,
  URL_LENGTH_MAX,
} from '../../webhooks/webhook-endpoints.ts';

const EventTypes = Type.Union(
  [Type.Array(OneOf(EVENT_TYPE_NAMES), { minItems: 1, maxItems: EVENT_TYPE_NAMES.length * 2 }), Type.Null()],
  { description: 'The event types sent to it; null or left out for every type.' },
);

export const WebhookEndpointResource = Type.Object({
  type: Type.Literal('webhook_endpoints'),
  id: UuidString,
  attributes: Type.Object({
    url: Type.String({ format: 'uri', examples: ['https://partner.example.com/ewa/webhooks'] }),
    description: Type.Union([Type.String(), Type.Null()]),
    event_types: EventTypes,
    status: OneOf(['ENABLED', 'DISABLED']),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why it is disabled: by request, or deliveries not accepted within the retry window.',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    client_id: Type.Optional(Type.String({ description: 'Its client (operator API only).' })),
    secret: Type.Optional(
      Type.String({
        description:
          'The signing secret (Standard Webhooks, whsec_…): only in the answer that creates it, then never again.',
        examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      }),
    ),
  }),
  meta: Type.Optional(
    Type.Object({
      previous_secrets_expire_at: Type.Optional(Type.String({ format: 'date-time' })),
    }),
  ),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const attributes = {
  url: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: DESCRIPTION_LENGTH_MAX }), Type.Null()])),
  event_types: Type.Optional(EventTypes),
};

export function endpointCreateBody(withClient: boolean) {
  return Type.Object(
    {
      data: Type.Object(
        {
          type: Type.Literal('webhook_endpoints'),
          attributes: Type.Object(
            {
              ...attributes,
              ...(withClient ? { client_id: Type.String({ minLength: 1, maxLength: 200 }) } : {}),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );
}

export const EndpointUpdateBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('webhook_endpoints'),
        id: Type.String({ maxLength: 64 }),
        attributes: Type.Object(
          {
            url: Type.Optional(attributes.url),
            description: attributes.description,
            event_types: attributes.event_types,
            status: Type.Optional(OneOf(['ENABLED', 'DISABLED'])),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** Optional: no body (or `{}`) rotates with the default overlap. */
export const RotationBody = Type.Object(
  {
    data: Type.Optional(
      Type.Object(
        {
          type: Type.Literal('webhook_secret_rotations'),
          attributes: Type.Object(
            {
              overlap_seconds: Type.Optional(
                Type.Integer({
                  minimum: 0,
                  maximum: ROTATION_OVERLAP_MAX_SECONDS,
                  description: 'How long the secrets before it keep signing (default 86400: a day).',
                }),
              ),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const RedeliveryBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('webhook_redeliveries'),
        attributes: Type.Object(
          {
            event_id: Type.Optional(Type.String({ maxLength: 64 })),
            from: Type.Optional(Type.String({ format: 'date-time' })),
            to: Type.Optional(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const DeliveryResource = Type.Object({
  type: Type.Literal('webhook_deliveries'),
  id: UuidString,
  attributes: Type.Object({
    event_id: UuidString,
    event_type: Type.String(),
    endpoint_id: UuidString,
    attempt: Type.Integer(),
    attempted_at: Type.String({ format: 'date-time' }),
    duration_ms: Type.Integer(),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    outcome: OneOf(['DELIVERED', 'FAILED', 'GIVEN_UP']),
    error: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const QueuedAnswer = Type.Object({
  meta: Type.Object({ queued: Type.Integer(), event_id: Type.Optional(UuidString) }),
});
