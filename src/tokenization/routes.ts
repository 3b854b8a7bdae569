import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { Type } from 'typebox';
import { AppError } from '../errors/app-error.ts';
import { errorDocument } from '../errors/error-document.ts';
import { toAppError } from '../errors/to-app-error.ts';
import { duplicateMember, duplicateRefused } from '../platform/duplicate-members.ts';
import { inputTextError } from '../platform/edge-input.ts';
import { logServerFailure } from '../platform/failure-log.ts';
import { JSON_MEDIA } from '../platform/media-types.ts';
import { poisoningRefused } from '../platform/prototype-members.ts';
import { traceIdOf } from '../platform/request-id.ts';
import { errorResponses } from '../platform/schemas.ts';
import { utf8Body } from '../platform/utf8-body.ts';
import { type CardTokenizer, RATE_LIMIT_WINDOW_MS, type SharedLimit } from './card-tokenizer.ts';
import { TEXT_LENGTH_MAX } from './card-validation.ts';
import type { CorsPolicy } from './cors-policy.ts';
import { sharedCardLimits } from './shared-rate-limits.ts';

/** A card request is a few hundred bytes; a small limit keeps floods of large bodies cheap to refuse. */
export const CARD_TOKEN_BODY_LIMIT_BYTES = 8192;

export interface CardTokenRoutesOptions {
  /** `/v2/cards/generic` on the payments listener, `/cards/generic` on the API listener. */
  path: string;
  tokenizer: CardTokenizer;
  cors: CorsPolicy;
  /** Where the error catalog page is (the API listener), for `links.about`. */
  errorsBaseUrl: string;
  /** With REDIS_URL: the limits are counted there, shared by every process and host. */
  redis?: Redis | undefined;
  limits: { perClientPerMinute: number; perCardPerMinute: number };
}

const text = (description: string, example: string) =>
  Type.String({ minLength: 1, maxLength: TEXT_LENGTH_MAX, description, examples: [example] });

/** For the OpenAPI document only: card-validation.ts checks the body, see `validatorCompiler` below. */
const CardTokenRequestSchema = Type.Object(
  {
    first_name: text('Given name of the cardholder.', 'Edith'),
    last_name: text('Surname of the cardholder.', 'Clarke'),
    card_number: Type.String({
      pattern: '^[0-9]{12,19}$',
      description: 'The card number, digits only; it must pass the Luhn check.',
      examples: ['4111111111111111'],
    }),
    expiration_year: Type.String({ pattern: '^[0-9]{4}$', examples: ['2031'] }),
    expiration_month: Type.String({ pattern: '^(0[1-9]|1[0-2])$', examples: ['02'] }),
    cvv: Type.Optional(
      Type.Union([Type.String({ pattern: '^[0-9]{3,4}$' }), Type.Null()], {
        description: 'Checked for format, never stored and never put in the token.',
      }),
    ),
    address_line_one: text('First line of the billing address.', '123 Kebly Street'),
    address_line_two: Type.Optional(
      Type.Union([Type.String({ maxLength: TEXT_LENGTH_MAX }), Type.Null()], {
        description: 'Second line of the billing address; an empty string counts as absent.',
      }),
    ),
    address_city: text('City of the billing address.', 'Fort Lee'),
    address_state: Type.String({ pattern: '^[A-Z]{2}$', examples: ['NJ'] }),
    address_zip_code: Type.String({ pattern: '^[0-9]{5}$', examples: ['07237'] }),
    address_country: Type.String({
      pattern: '^[A-Z]{2}$',
      description: 'ISO 3166-1 alpha-2 country code.',
      examples: ['US'],
    }),
  },
  { additionalProperties: false },
);

const CardTokenResponseSchema = Type.Object({
  token: Type.String({ description: 'A compact JWE carrying the card without its CVV; it expires soon.' }),
});

/**
 * POST a card, get a token: no bearer token, CORS for browsers, a small body limit, a rate limit per client
 * address (counted before the body is read, so every attempt counts) and one per card. Errors are the REST error
 * document, served as application/json. Registered once per listener; it is an encapsulated plugin, so its
 * parsers, hooks and error handler touch only these routes.
 */
export const cardTokenRoutes: FastifyPluginAsync<CardTokenRoutesOptions> = async (app, options) => {
  const { path, tokenizer, cors, errorsBaseUrl, redis, limits } = options;
  const sharedCount = redis
    ? await sharedCardLimits(app, {
        redis,
        windowMs: RATE_LIMIT_WINDOW_MS,
        maxOf: { 'card-client': limits.perClientPerMinute, card: limits.perCardPerMinute },
      })
    : undefined;
  const sharedOf = (request: FastifyRequest): SharedLimit | undefined =>
    sharedCount && ((limit, key) => sharedCount(request, limit, key));

  // JSON only: a text/plain or form post (what a browser may send without a preflight) is refused with 415, and so
  // is JSON in another charset than UTF-8; bytes that are not UTF-8 are 400.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    JSON_MEDIA,
    { parseAs: 'buffer', bodyLimit: CARD_TOKEN_BODY_LIMIT_BYTES },
    utf8Body((request, text, done) =>
      parseJson(request, text, (error, value) => {
        const twice = error ? undefined : duplicateMember(text);
        if (twice !== undefined) return done(duplicateRefused('INVALID_FIELDS', twice));
        done(error && (poisoningRefused(text) ?? error), value);
      }),
    ),
  );

  // Every string of the request by the one rule of input-text.ts, before the card is read; a body field that breaks
  // it is INVALID_FIELDS with its pointer, as any other malformed card field.
  app.addHook('preValidation', async (request) => {
    const error = inputTextError(request, 'INVALID_FIELDS');
    if (error) throw error;
  });

  app.setErrorHandler(cardListenerErrors(errorsBaseUrl, 'card tokenization failed', explained));

  app.options(path, { schema: { hide: true } }, async (request, reply) => {
    const method = request.headers['access-control-request-method'];
    reply.headers(
      cors.preflightHeaders(request.headers.origin, typeof method === 'string' ? method : undefined),
    );
    reply.header('Allow', 'OPTIONS, POST').code(204).send();
  });

  app.post(
    path,
    {
      bodyLimit: CARD_TOKEN_BODY_LIMIT_BYTES,
      config: { mediaType: JSON_MEDIA },
      schema: {
        operationId: 'createGenericCardToken',
        tags: ['Card Tokenization'],
        summary: 'Exchange card details for a short-lived card token',
        description:
          'No access token. Browsers may call it from the origins in EWA_CARD_CORS_ORIGINS. Rate limited per ' +
          'client address and per card (429 with Retry-After). In the sandbox only the test cards are accepted.',
        security: [],
        body: CardTokenRequestSchema,
        response: { 200: CardTokenResponseSchema, ...errorResponses(400, 415, 429, 500) },
      },
      // The schema above documents the body; card-validation.ts checks it, so that each error names its field in
      // words, in a fixed order, and never quotes what was sent (a schema message can quote a pattern or a value).
      validatorCompiler: () => () => true,
      onRequest: async (request, reply) => {
        reply.headers(cors.responseHeaders(request.headers.origin));
        await tokenizer.admitClient(request.ip, sharedOf(request));
      },
    },
    async (request) => tokenizer.tokenize(request.body, sharedOf(request)),
  );
};

/**
 * The card listener's error handler, of the card routes (whose framework errors are `explain`ed for the card) and of
 * what else it serves (the probes, a hook every listener shares): the card endpoint's JSON error document.
 */
export function cardListenerErrors(
  errorsBaseUrl: string,
  logMessage = 'request failed',
  explain: (error: AppError) => AppError = (error) => error,
) {
  return (error: Error, request: FastifyRequest, reply: FastifyReply) => {
    const appError = explain(toAppError(error));
    // Only the error object: it never holds the body (the JSON parser's message, which quotes it, is not logged).
    logServerFailure(request.log, appError, error, logMessage);
    sendError(request, reply, appError, errorsBaseUrl);
  };
}

/**
 * The not-found handler of a listener that serves only the card endpoint at `path`: 405 with `Allow` for another
 * method there, else 404, both in the card endpoint's error document.
 */
export function cardListenerNotFound(path: string, errorsBaseUrl: string) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const requested = (request.raw.url ?? '/').split('?')[0];
    const error =
      requested === path
        ? new AppError('METHOD_NOT_ALLOWED', {
            detail: `${path} accepts OPTIONS, POST, not ${request.method}.`,
            headers: { Allow: 'OPTIONS, POST' },
          })
        : new AppError('NOT_FOUND', { detail: `Nothing is served here but POST ${path}.` });
    sendError(request, reply, error, errorsBaseUrl);
  };
}

/** Framework errors with a detail that says what this endpoint wants. */
function explained(error: AppError): AppError {
  if (
    error.code === 'UNSUPPORTED_MEDIA_TYPE' &&
    !(error.source && 'header' in error.source && error.source.header === 'Content-Encoding')
  ) {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', {
      detail: 'Send the card as a JSON object with Content-Type: application/json.',
      source: { header: 'Content-Type' },
    });
  }
  if (error.code === 'PAYLOAD_TOO_LARGE') {
    return new AppError('PAYLOAD_TOO_LARGE', {
      detail: `A card token request is at most ${CARD_TOKEN_BODY_LIMIT_BYTES} bytes.`,
    });
  }
  return error;
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError, baseUrl: string): void {
  const body = errorDocument(error, {
    requestId: request.id,
    traceId: traceIdOf(request.headers.traceparent),
    baseUrl,
  });
  if (error.headers) reply.headers(error.headers);
  reply.code(error.status).type(JSON_MEDIA).serializer(JSON.stringify).send(body);
}
