import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors/app-error.ts';

function hostHeaders(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.length === 4 && rawHeaders[index]!.toLowerCase() === 'host') count++;
  return count;
}

/**
 * A request with more than one Host header is refused (RFC 9112 §3.2 asks a server for a 400): Node keeps the
 * first, and a proxy in front may have routed by the other. Each listener answers it in its own shape.
 */
async function oneHost(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    if (hostHeaders(request.raw.rawHeaders) > 1) {
      // Refused before the hooks that set it on every answer: the caller still gets the id to report.
      reply.header('X-Request-Id', request.id);
      throw new AppError('INVALID_USER_INPUT', {
        detail: 'Send one Host header: this request has more than one.',
        source: { header: 'Host' },
      });
    }
  });
}

export const oneHostPlugin = fp(oneHost, { name: 'one-host', fastify: '5.x' });
