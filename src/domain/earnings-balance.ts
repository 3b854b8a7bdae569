import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';

export const EARNINGS_BALANCE_NAME = 'Earnings balance';

/**
 * The rule of DESIGN §4: every ACTIVATED job of an organization with the ODP product has one EARNINGS_BALANCE
 * account (subtype ODP, details {}), created with the job and never replaced: a job that is deactivated and
 * activated again keeps its account, and with it the account's history.
 */
export function isEarningsBalanceDue(
  job: { activationStatus: string; earningsBalanceAccountId: string | null },
  organizationProducts: readonly string[],
): boolean {
  return (
    job.activationStatus === 'ACTIVATED' &&
    job.earningsBalanceAccountId === null &&
    organizationProducts.includes('ODP')
  );
}

export interface NewEarningsBalanceAccount {
  id: string;
  personId: string;
  currency: string;
}

/** Inserts earnings balance accounts in one statement, for jobs that the caller links to them. */
export async function insertEarningsBalanceAccounts(
  tx: Tx,
  accounts: readonly NewEarningsBalanceAccount[],
): Promise<void> {
  if (accounts.length === 0) return;
  await sql`insert into accounts (id, person_id, account_type, subtype, name, details, currency)
    select a.id, a.person_id, 'EARNINGS_BALANCE', 'ODP', ${EARNINGS_BALANCE_NAME}, '{}'::jsonb, a.currency
    from unnest(${accounts.map((a) => a.id)}::uuid[], ${accounts.map((a) => a.personId)}::uuid[],
      ${accounts.map((a) => a.currency)}::text[]) as a(id, person_id, currency)`.execute(tx);
}

/**
 * Gives each of these existing jobs that is due one (isEarningsBalanceDue) its account, in three statements
 * whatever the number of jobs; returns the jobs that got one, with the account's id. The job rows are locked
 * first, so that two callers cannot both create an account for one job.
 */
export async function ensureEarningsBalanceAccounts(
  tx: Tx,
  jobIds: readonly string[],
): Promise<Map<string, string>> {
  const created = new Map<string, string>();
  if (jobIds.length === 0) return created;
  const { rows } = await sql<{ id: string; person_id: string; currency: string | null }>`
    select j.id, j.person_id, p.currency
    from jobs j
      join organizations o on o.id = j.organization_id
      left join organization_policies p on p.organization_id = j.organization_id
    where j.id = any(${[...jobIds]}::uuid[])
      and j.activation_status = 'ACTIVATED'
      and j.earnings_balance_account_id is null
      and 'ODP' = any(o.products)
    order by j.id
    for update of j`.execute(tx);
  if (rows.length === 0) return created;
  const accounts = rows.map((row) => ({
    jobId: row.id,
    id: randomUUID(),
    personId: row.person_id,
    currency: (row.currency ?? 'USD').trim(),
  }));
  await insertEarningsBalanceAccounts(tx, accounts);
  await sql`update jobs j set earnings_balance_account_id = a.account_id, updated_at = now()
    from unnest(${accounts.map((a) => a.jobId)}::uuid[], ${accounts.map((a) => a.id)}::uuid[])
      as a(job_id, account_id)
    where j.id = a.job_id`.execute(tx);
  for (const account of accounts) created.set(account.jobId, account.id);
  return created;
}

/** The same rule for one job; returns the id of the account it created, or undefined when none was due. */
export async function ensureEarningsBalanceAccount(tx: Tx, jobId: string): Promise<string | undefined> {
  return (await ensureEarningsBalanceAccounts(tx, [jobId])).get(jobId);
}
