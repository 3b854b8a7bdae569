import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { allowsOrigin } from './cors-origins.ts';
import { isJsonApiPath } from './json-api.ts';
import { isVersionHeader, VERSION_HEADER } from './version-header.ts';

export interface RestCorsOptions {
  /** EWA_CORS_ORIGINS */
  origins: readonly string[];
}

/** What a browser app sends to the REST API beyond the simple headers, and what it may read of the answers. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', VERSION_HEADER, 'traceparent'];
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'];
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight answer; Chromium caps it at two hours, ten minutes keeps changes quick. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for /rest and /admin (@fastify/cors), so that web apps of the configured origins can call the API from a
 * browser with a bearer token (no cookies: credentials are never allowed). A preflight from an origin on the list
 * is answered 204 with what it may send, before the token check (a browser sends no token with it); one from
 * another origin gets no CORS header at all and falls through to 405, and the browser refuses the call. Answers to
 * actual requests carry the allow and expose headers, errors included, so that the app can read what went wrong.
 * Card tokenization keeps its own policy (EWA_CARD_CORS_ORIGINS, src/tokenization/cors-policy.ts).
 */
async function restCors(app: FastifyInstance, options: RestCorsOptions): Promise<void> {
  // A preflight is answered in the hook below, before the JSON:API hooks that set the request id on the rest.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback) =>
      callback(null, corsOptionsFor(request, options.origins) as FastifyCorsOptions),
  });
}

function corsOptionsFor(request: FastifyRequest, origins: readonly string[]): FastifyCorsOptions {
  const { origin } = request.headers;
  if (!isJsonApiPath(request.url) || !allowsOrigin(origins, origin)) return { origin: false };
  return {
    origin: origins.includes('*') ? '*' : origin,
    methods: METHODS,
    allowedHeaders: withVersionHeadersAsked(request),
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  };
}

/** The headers allowed, and a version header of another name that the preflight asks for (version-header.ts). */
function withVersionHeadersAsked(request: FastifyRequest): string[] {
  const asked = request.headers['access-control-request-headers']?.toLowerCase();
  if (asked === undefined || !asked.includes('-api-version')) return ALLOWED_HEADERS;
  const names = asked.split(',').map((name) => name.trim());
  return [
    ...ALLOWED_HEADERS,
    ...names.filter((name) => isVersionHeader(name) && name !== 'service-api-version'),
  ];
}

export const restCorsPlugin = fp(restCors, { name: 'rest-cors', fastify: '5.x' });
