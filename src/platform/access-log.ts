import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import fp from 'fastify-plugin';

/** The access line of a request: id (from the logger), method, route, status and latency. */
export function logRequestCompleted(request: FastifyRequest, reply: FastifyReply): void {
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
}

/** One line per request, written when the response is sent: id, method, route, status and latency. */
async function accessLog(app: FastifyInstance): Promise<void> {
  app.addHook('onResponse', async (request, reply) => logRequestCompleted(request, reply));
}

export const accessLogPlugin = fp(accessLog, { name: 'access-log', fastify: '5.x' });

/**
 * Fastify's own per-request lines are left out (the access line above replaces its "incoming request" and
 * "request completed", and a 404's access line says what its "route not found" would), but not its error lines.
 * `disableRequestLogging: true` would silence those too: a 500 answered by Fastify's default error handler, or an
 * error thrown in an onResponse hook or while streaming a response, would leave an access line and no cause.
 */
export class AccessLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id', disableRequestLogging: false });
  }

  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    _request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // Only the failure: the access line is written by the onResponse hook.
    if (error) reply.log.error({ err: error }, 'request errored after its response');
  }
}
