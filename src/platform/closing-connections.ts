import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Readiness } from './readiness.ts';

/**
 * Once the process drains, every answer says `Connection: close`, and Node closes the connection after it. A client
 * that keeps connections alive (a load balancer, an agent) then opens its next one elsewhere, rather than sending
 * a request on a connection that the final close of the listener cuts under it (ECONNRESET).
 */
async function closingConnections(app: FastifyInstance, options: { readiness: Readiness }): Promise<void> {
  app.addHook('onRequest', (_request, reply, done) => {
    // On the raw response: the authorization server's provider writes its answers there, past Fastify's headers.
    if (options.readiness.draining) reply.raw.setHeader('Connection', 'close');
    done();
  });
}

export const closingConnectionsPlugin = fp(closingConnections, {
  name: 'closing-connections',
  fastify: '5.x',
});
