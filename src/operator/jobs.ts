import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { ensureEarningsBalanceAccount } from '../domain/earnings-balance.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';

/** A job as the operator commands report it after a change. */
export interface JobActivation {
  id: string;
  personId: string;
  organizationId: string;
  primaryIdentifier: string;
  activationStatus: string;
  earningsBalanceAccountId: string | null;
  /** True when this call created the earnings balance account. */
  earningsBalanceAccountCreated: boolean;
}

function notFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No job ${id.slice(0, 64)}.` });
}

async function setActivationStatus(tx: Tx, id: string, status: 'ACTIVATED' | 'DEACTIVATED') {
  return tx
    .updateTable('jobs')
    .set({
      activation_status: status,
      // Only a real change moves updated_at, so that repeating a command changes nothing.
      updated_at: sql<Date>`case when activation_status = ${status} then updated_at else now() end`,
    })
    .where('id', '=', id)
    .returning([
      'id',
      'person_id',
      'organization_id',
      'external_primary_identifier',
      'activation_status',
      'earnings_balance_account_id',
    ])
    .executeTakeFirst();
}

async function changeActivation(
  db: Db,
  id: string,
  status: 'ACTIVATED' | 'DEACTIVATED',
): Promise<JobActivation> {
  if (!isUuid(id)) throw notFound(id);
  return withTransaction(db, async (tx) => {
    // The person's lock first (db/lock-order.ts): an advance checks the job's status under it.
    const owner = await tx
      .selectFrom('jobs')
      .select('person_id')
      .where('id', '=', id.toLowerCase())
      .executeTakeFirst();
    if (!owner) throw notFound(id);
    await lockPeople(tx, [owner.person_id]);
    const job = await setActivationStatus(tx, id.toLowerCase(), status);
    if (!job) throw notFound(id);
    const createdAccount =
      status === 'ACTIVATED' ? await ensureEarningsBalanceAccount(tx, job.id) : undefined;
    return {
      id: job.id,
      personId: job.person_id,
      organizationId: job.organization_id,
      primaryIdentifier: job.external_primary_identifier,
      activationStatus: job.activation_status,
      earningsBalanceAccountId: createdAccount ?? job.earnings_balance_account_id,
      earningsBalanceAccountCreated: createdAccount !== undefined,
    };
  });
}

/** Sets the job ACTIVATED and gives it its earnings balance account if its organization offers ODP. */
export function activateJob(db: Db, jobId: string): Promise<JobActivation> {
  return changeActivation(db, jobId, 'ACTIVATED');
}

/** Sets the job DEACTIVATED. Its earnings balance account stays: the balance's history belongs to the worker. */
export function deactivateJob(db: Db, jobId: string): Promise<JobActivation> {
  return changeActivation(db, jobId, 'DEACTIVATED');
}
