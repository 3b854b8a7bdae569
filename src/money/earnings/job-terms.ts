import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { OrganizationPolicy } from '../../operator/organization-policy.ts';
import { POLICY_COLUMNS, toPolicy } from '../../operator/organization-store.ts';
import type { PayCalendar } from './pay-periods.ts';

/** What the money rules need to know about a job: its person, wage, accounts and its employer's policy. */
export interface JobTerms {
  jobId: string;
  personId: string;
  organizationId: string;
  organizationProducts: string[];
  activationStatus: string;
  directDepositStatus: string;
  wageRateMinor: number;
  wageFrequency: string;
  wageCurrency: string;
  earningsBalanceAccountId: string | null;
  defaultDepositoryId: string | null;
  defaultCardId: string | null;
  policy: OrganizationPolicy;
}

export interface JobTermsRow extends Record<string, unknown> {
  id: string;
  person_id: string;
  organization_id: string;
  products: string[];
  activation_status: string;
  direct_deposit_status: string;
  wage_rate_minor: number;
  wage_frequency: string;
  wage_currency: string;
  earnings_balance_account_id: string | null;
  direct_deposit_default_depository_id: string | null;
  direct_deposit_default_card_id: string | null;
}

/** The columns of a job's terms, from `jobs j`, `organizations o` and `organization_policies p`. */
export const JOB_TERMS_COLUMNS = sql`j.id, j.person_id, j.organization_id, o.products, j.activation_status,
  j.direct_deposit_status, j.wage_rate_minor, j.wage_frequency, j.wage_currency, j.earnings_balance_account_id,
  j.direct_deposit_default_depository_id, j.direct_deposit_default_card_id, ${sql.join(POLICY_COLUMNS)}`;

export function toJobTerms(row: JobTermsRow): JobTerms {
  return {
    jobId: row.id,
    personId: row.person_id,
    organizationId: row.organization_id,
    organizationProducts: row.products,
    activationStatus: row.activation_status,
    directDepositStatus: row.direct_deposit_status,
    wageRateMinor: Number(row.wage_rate_minor),
    wageFrequency: row.wage_frequency,
    wageCurrency: row.wage_currency.trim(),
    earningsBalanceAccountId: row.earnings_balance_account_id,
    defaultDepositoryId: row.direct_deposit_default_depository_id,
    defaultCardId: row.direct_deposit_default_card_id,
    policy: toPolicy(row),
  };
}

/** Jobs with their employer's policy; unknown ids are left out. */
export async function loadJobTerms(db: Db | Tx, jobIds: readonly string[]): Promise<Map<string, JobTerms>> {
  const terms = new Map<string, JobTerms>();
  if (jobIds.length === 0) return terms;
  const ids = [...new Set(jobIds)];
  let rows = await selectJobTerms(db, ids);
  if (rows.length < ids.length) {
    // An organization made before policies existed gets the default row (an idempotent insert), then is read.
    await sql`insert into organization_policies (organization_id)
      select distinct organization_id from jobs where id = any(${ids}::uuid[])
      on conflict (organization_id) do nothing`.execute(db);
    rows = await selectJobTerms(db, ids);
  }
  for (const row of rows) terms.set(row.id, toJobTerms(row));
  return terms;
}

async function selectJobTerms(db: Db | Tx, ids: readonly string[]): Promise<JobTermsRow[]> {
  const { rows } = await sql<JobTermsRow>`select ${JOB_TERMS_COLUMNS}
    from jobs j join organizations o on o.id = j.organization_id
      join organization_policies p on p.organization_id = j.organization_id
    where j.id = any(${[...ids]}::uuid[])`.execute(db);
  return rows;
}

export function payCalendarOf(policy: OrganizationPolicy): PayCalendar {
  return {
    frequency: policy.payFrequency,
    anchor: policy.payCalendarAnchor,
    timeZone: policy.timeZone,
    paydayOffsetDays: policy.paydayOffsetDays,
  };
}
