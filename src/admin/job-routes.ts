import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { activateJob, deactivateJob, type JobActivation } from '../operator/jobs.ts';
import { ResourceIdParam } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import { relationship, selfLink } from '../platform/serializer.ts';
import { JobActivationResource, OPERATOR } from './schemas.ts';

/** The employer's side of a job's activation: activate (with its earnings balance account) and deactivate. */
export const adminJobRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string }> = async (
  app,
  { db, baseUrl },
) => {
  const resource = (job: JobActivation) => ({
    type: 'jobs' as const,
    id: job.id,
    attributes: {
      external_identifiers: { primary_identifier: job.primaryIdentifier },
      activation_status: job.activationStatus,
    },
    relationships: {
      person: relationship('people', job.personId),
      organization: relationship('organizations', job.organizationId),
      earnings_balance_account: relationship('accounts', job.earningsBalanceAccountId),
    },
    meta: { earnings_balance_account_created: job.earningsBalanceAccountCreated },
    links: { self: selfLink(baseUrl, 'jobs', job.id) },
  });

  for (const [verb, change, summary, description] of [
    [
      'activate',
      activateJob,
      'Set a job ACTIVATED',
      'When its organization offers ODP and the job has no earnings balance account, one is created with it; a ' +
        'job activated again keeps its account. Activating an ACTIVATED job changes nothing.',
    ],
    [
      'deactivate',
      deactivateJob,
      'Set a job DEACTIVATED',
      'Its earnings balance account stays, with its history. Deactivating a DEACTIVATED job changes nothing.',
    ],
  ] as const) {
    app.post(
      `/admin/jobs/:job_id/${verb}`,
      {
        config: { security: OPERATOR.config },
        schema: {
          operationId: verb === 'activate' ? 'adminActivateJob' : 'adminDeactivateJob',
          tags: ['Operator'],
          summary,
          description,
          security: OPERATOR.openApi,
          params: ResourceIdParam('job_id'),
          response: {
            200: Type.Object({ data: JobActivationResource }),
            ...errorResponses(401, 403, 404, 406, 415, 500),
          },
        },
      },
      async (request) => {
        const { job_id: id } = request.params as { job_id: string };
        return { data: resource(await change(db, id)) };
      },
    );
  }
};
