import { activateJob, deactivateJob, type JobActivation } from '../operator/jobs.ts';
import { type Command, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

function jobJson(job: JobActivation) {
  return {
    id: job.id,
    person_id: job.personId,
    organization_id: job.organizationId,
    primary_identifier: job.primaryIdentifier,
    activation_status: job.activationStatus,
    earnings_balance_account_id: job.earningsBalanceAccountId,
    earnings_balance_account_created: job.earningsBalanceAccountCreated,
  };
}

function describe(job: JobActivation): string {
  const account = job.earningsBalanceAccountId
    ? `${job.earningsBalanceAccountId}${job.earningsBalanceAccountCreated ? ' (created now)' : ''}`
    : 'none (the organization does not offer ODP)';
  return [
    `job                ${job.id} (${job.primaryIdentifier})`,
    `person             ${job.personId}`,
    `organization       ${job.organizationId}`,
    `activation_status  ${job.activationStatus}`,
    `earnings balance   ${account}`,
  ].join('\n');
}

function command(
  verb: 'activate' | 'deactivate',
  summary: string,
  detail: string,
  change: typeof activateJob,
): Command {
  return {
    name: `jobs ${verb}`,
    summary,
    help: `Usage: ewa jobs ${verb} JOB_ID [--json]\n\n${detail}`,
    options: { json: { type: 'boolean' } },
    allowPositionals: true,
    async run(flags, positionals, context) {
      if (positionals.length !== 1) throw new UsageError('name one job id.');
      const jobId = uuidValue('JOB_ID', positionals[0]!);
      return withMigratedDatabase(context, async ({ database }) => {
        const job = await change(database.db, jobId);
        writeLine(context.stdout, flags.json ? JSON.stringify(jobJson(job)) : describe(job));
        return 0;
      });
    },
  };
}

export const jobCommands: Command[] = [
  command(
    'activate',
    'Set a job ACTIVATED (with its earnings balance account)',
    'When the organization offers ODP and the job has no earnings balance account yet, one is created; a job\n' +
      'activated again keeps the account it had. Activating an ACTIVATED job changes nothing.',
    activateJob,
  ),
  command(
    'deactivate',
    'Set a job DEACTIVATED (its earnings balance account stays)',
    'The earnings balance account and its history stay with the worker. Deactivating a DEACTIVATED job changes\n' +
      'nothing.',
    deactivateJob,
  ),
];
