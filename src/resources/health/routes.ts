import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import packageJson from '../../../package.json' with { type: 'json' };
import type { Database } from '../../db/database.ts';
import { serviceUnavailable } from '../../errors/service-unavailable.ts';
import { JSON_MEDIA } from '../../platform/media-types.ts';
import { errorResponses } from '../../platform/schemas.ts';

export interface HealthRoutesOptions {
  database: Database;
  dbTimeoutMs: number;
}

const HealthSchema = Type.Object({
  status: Type.Literal('UP'),
  version: Type.String({ description: 'The version of this server.' }),
});

export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (
  app,
  { database, dbTimeoutMs },
) => {
  app.get(
    '/rest/health',
    {
      config: { mediaType: JSON_MEDIA, security: [{ kind: 'client', scopes: ['health:read'] }] },
      schema: {
        operationId: 'getHealth',
        tags: ['Health'],
        summary: 'Whether the API and its database answer',
        description:
          '200 when the API and its database answer; 503 SERVICE_UNAVAILABLE, with Retry-After, when the database ' +
          'does not answer in time, so that a load balancer takes this process out of rotation.',
        security: [{ oauth_client_credentials_token: ['health:read'] }],
        response: { 200: HealthSchema, ...errorResponses(401, 403, 406, 500) },
      },
    },
    async (request) => {
      try {
        await database.ping(dbTimeoutMs);
      } catch (error) {
        // Its cause, in one line: a load balancer's probes would write a stack every few seconds while it lasts.
        request.log.warn({ reason: (error as Error)?.message }, 'health check: database did not answer');
        throw serviceUnavailable('The database did not answer in time.', error);
      }
      return { status: 'UP' as const, version: packageJson.version };
    },
  );
};
