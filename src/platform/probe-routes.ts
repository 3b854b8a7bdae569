import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Readiness } from './readiness.ts';

export const LIVENESS_PATH = '/livez';
export const READINESS_PATH = '/readyz';

const ProbeSchema = Type.Object({ status: Type.String() });

/** Probes are answered whatever the load: shedding them would take a busy but healthy process out of rotation. */
const NEVER_SHED = { pressureHandler: () => undefined };

/**
 * `/livez` and `/readyz` for load balancers and orchestrators, on each listener, outside the /rest surface: no
 * token, no rate limit, no database work beyond one cached ping. Liveness is 200 while the process answers at all;
 * readiness is 503 while it drains or while its database does not answer.
 */
export const probeRoutes: FastifyPluginAsync<{ readiness: Readiness }> = async (app, { readiness }) => {
  const schema = { hide: true, response: { 200: ProbeSchema, 503: ProbeSchema } };
  app.get(LIVENESS_PATH, { schema, config: NEVER_SHED }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    return { status: 'UP' };
  });
  app.get(READINESS_PATH, { schema, config: NEVER_SHED }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const state = await readiness.state();
    if (state.ready) return { status: 'READY' };
    return reply.code(503).send({ status: state.reason });
  });
};
