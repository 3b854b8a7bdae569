import type { Db } from '../../db/database.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { withTransaction } from '../../db/transaction.ts';
import { idAsShown, isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import { findActiveAccountOfPerson } from '../accounts/store.ts';
import { findVisibleJob, type JobChanges, type JobRow, updateJob } from './store.ts';

export interface JobUpdate {
  activationStatus?: string | undefined;
  defaultDepositoryId?: string | undefined;
  defaultCardId?: string | undefined;
}

export function jobNotFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No job ${idAsShown(id)} is visible to this token.` });
}

export async function readJob(db: Db, caller: Caller, id: string): Promise<JobRow> {
  const job = await findVisibleJob(db, caller, id);
  if (!job) throw jobNotFound(id);
  return job;
}

const DEFAULTS = [
  {
    key: 'defaultDepositoryId',
    relationship: 'direct_deposit_default_depository',
    accountType: 'DEPOSITORY',
  },
  { key: 'defaultCardId', relationship: 'direct_deposit_default_card', accountType: 'CARD' },
] as const;

/**
 * What a person may change on their job: where the remainder of each paycheck goes (their own DEPOSITORY or CARD
 * account, on an ACTIVATED job; setting one completes direct deposit), or turning on-demand pay off
 * (DEACTIVATED: the earnings balance stops accruing). Activation itself is the employer's (`ewa jobs activate`).
 * Checked in this order: the job is visible, the activation change is allowed, the job is active for defaults,
 * each account is the person's own and of the right type.
 */
export async function changeJob(
  db: Db,
  caller: Caller,
  id: string,
  update: JobUpdate,
  now: Date,
): Promise<JobRow> {
  if (update.activationStatus !== undefined && update.activationStatus !== 'DEACTIVATED') {
    throw new AppError('INVALID_PARAMETERS', {
      detail: `activation_status can only be set to DEACTIVATED here (got ${update.activationStatus}); the employer activates jobs.`,
      source: { pointer: '/data/attributes/activation_status' },
    });
  }
  return withTransaction(db, async (tx) => {
    // The person's lock first (db/lock-order.ts): advances read the job's status and defaults under it, and an
    // account is deleted under it, so neither can act on what this change replaces.
    const found = await findVisibleJob(tx, caller, id);
    if (!found) throw jobNotFound(id);
    await lockPeople(tx, [found.person_id]);
    const job = await findVisibleJob(tx, caller, id, { forUpdate: true });
    if (!job) throw jobNotFound(id);
    const changes: JobChanges = {};
    const settingDefaults = DEFAULTS.filter((entry) => update[entry.key] !== undefined);
    if (settingDefaults.length > 0 && job.activation_status !== 'ACTIVATED') {
      throw new AppError('ACTIVE_JOB_REQUIRED', {
        detail: `Job ${id} is ${job.activation_status}; default accounts can be set on an ACTIVATED job only.`,
      });
    }
    for (const entry of settingDefaults) {
      const accountId = update[entry.key]!;
      const pointer = `/data/relationships/${entry.relationship}/data/id`;
      const account = isUuid(accountId)
        ? await findActiveAccountOfPerson(tx, job.person_id, accountId.toLowerCase())
        : undefined;
      if (!account || account.account_type !== entry.accountType) {
        throw new AppError('INVALID_RESOURCE_LINK', {
          detail: `${entry.relationship} must be one of this person's own ${entry.accountType} accounts; ${accountId} is not.`,
          source: { pointer },
        });
      }
      changes[`${entry.relationship}_id`] = account.id;
    }
    if (settingDefaults.length > 0) changes.direct_deposit_status = 'SETUP_COMPLETE';
    if (update.activationStatus === 'DEACTIVATED' && job.activation_status !== 'DEACTIVATED') {
      changes.activation_status = 'DEACTIVATED';
    }
    return Object.keys(changes).length === 0 ? job : updateJob(tx, id, changes, now);
  });
}
