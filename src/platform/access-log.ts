import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** One line per request, written when the response is sent: id, method, route, status and latency. */
async function accessLog(app: FastifyInstance): Promise<void> {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        latency_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  });
}

export const accessLogPlugin = fp(accessLog, { name: 'access-log', fastify: '5.x' });
