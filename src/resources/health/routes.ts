import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import packageJson from '../../../package.json' with { type: 'json' };
import type { Database } from '../../db/database.ts';
import { AppError } from '../../errors/app-error.ts';
import { sendErrorDocument } from '../../platform/json-api.ts';
import { JSON_MEDIA } from '../../platform/media-types.ts';
import { errorResponses } from '../../platform/schemas.ts';

export interface HealthRoutesOptions {
  database: Database;
  dbTimeoutMs: number;
  /** The REST API's public URL, for the error document's links. */
  baseUrl: string;
}

const HealthSchema = Type.Object({
  status: Type.Literal('UP'),
  version: Type.String({ description: 'The version of this server.' }),
});

export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (
  app,
  { database, dbTimeoutMs, baseUrl },
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
          '200 when the API and its database answer; 500 UNEXPECTED_ERROR when the database does not answer in ' +
          'time (load balancers: GET /readyz, which answers 503).',
        security: [{ oauth_client_credentials_token: ['health:read'] }],
        response: { 200: HealthSchema, ...errorResponses(401, 403, 406, 500) },
      },
    },
    async (request, reply) => {
      try {
        await database.ping(dbTimeoutMs);
      } catch (error) {
        // Its cause, in one line: a monitor's probes would write a stack every few seconds while it lasts. So the
        // answer is written here rather than thrown: the error handler logs every 500 as an error with its stack.
        request.log.warn({ reason: (error as Error)?.message }, 'health check: database did not answer');
        const unreachable = new AppError('UNEXPECTED_ERROR', {
          detail: 'The database did not answer in time.',
        });
        return sendErrorDocument(request, reply, unreachable, baseUrl);
      }
      return { status: 'UP' as const, version: packageJson.version };
    },
  );
};
