import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { LoadSheddingConfig } from '../config.ts';
import { RETRY_AFTER_SECONDS, serviceUnavailable } from '../errors/service-unavailable.ts';
import { renderErrorPage } from '../oauth/pages/pages.ts';
import { INTERACTION_PATH } from '../oauth/provider-setup.ts';

export interface LoadSheddingOptions {
  config: LoadSheddingConfig;
  /**
   * The answer to a request refused for overload, in the listener's own error shape. Unset, the request fails with
   * 503 SERVICE_UNAVAILABLE (with Retry-After) and the listener's error handler writes it.
   */
  refuse?: (request: FastifyRequest, reply: FastifyReply) => string;
}

const OVERLOADED =
  'This server is overloaded, so the request was not started; retry after Retry-After seconds.';

/**
 * Refuses new requests with 503 and Retry-After while this process is overloaded (@fastify/under-pressure): when
 * the event loop's mean delay over the last sample is above the threshold, a request would wait that long at every
 * step, and taking more only makes every answer later. Requests already running finish.
 */
async function loadShedding(app: FastifyInstance, options: LoadSheddingOptions): Promise<void> {
  const { eventLoopDelayMs, sampleIntervalMs } = options.config;
  if (eventLoopDelayMs === 0) return;
  const { refuse } = options;
  // Building the routes (compiling their schemas) stalls the loop for a second or more: the samples that can span
  // it, up to two, measure the start, not load, and are not acted on.
  let graceUntil = Number.POSITIVE_INFINITY;
  app.addHook('onReady', async () => {
    graceUntil = performance.now() + 2 * sampleIntervalMs;
  });
  await app.register(underPressure, {
    maxEventLoopDelay: eventLoopDelayMs,
    sampleInterval: sampleIntervalMs,
    retryAfter: RETRY_AFTER_SECONDS,
    // under-pressure carries on when the handler returns nothing, sends a body it returns, and hands a rejection to
    // the listener's error handler (its handlePressure); its types only know handlers that return nothing.
    pressureHandler: ((request: FastifyRequest, reply: FastifyReply) => {
      if (performance.now() < graceUntil) return undefined; // carry on
      if (refuse) return refuse(request, reply.code(503).header('Retry-After', String(RETRY_AFTER_SECONDS)));
      return Promise.reject(serviceUnavailable(OVERLOADED));
    }) as FastifyUnderPressureOptions['pressureHandler'],
  });
}

export const loadSheddingPlugin = fp(loadShedding, { name: 'load-shedding', fastify: '5.x' });

/** Where the authorization server answers a browser with a page rather than JSON. */
const PAGE_PREFIXES = [INTERACTION_PATH, '/oauth2/auth', '/oauth2/sessions'];

/**
 * The authorization server's refusal: an HTML page where a person is signing in, the OAuth error JSON
 * (`temporarily_unavailable`, RFC 6749 §4.1.2.1) on the protocol endpoints.
 */
export function refuseOnAuthServer(request: FastifyRequest, reply: FastifyReply): string {
  const description = 'The server is busy. Try again in a few seconds.';
  const path = request.url.split('?')[0] ?? '';
  if (PAGE_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) {
    reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store');
    return renderErrorPage('temporarily_unavailable', description);
  }
  reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-store');
  return JSON.stringify({ error: 'temporarily_unavailable', error_description: description });
}
