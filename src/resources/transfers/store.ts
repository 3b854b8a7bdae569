import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Tx } from '../../db/transaction.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';

export interface TransferRow {
  id: string;
  person_id: string;
  origin_account_id: string | null;
  origin_paycheck_id: string | null;
  destination_account_id: string | null;
  amount_minor: number;
  fee_minor: number;
  currency: string;
  schedule: string;
  status: string;
  failure_reason: string | null;
  rail_reference: string | null;
  settle_after: Date | null;
  submitted_at: Date;
  resolved_at: Date | null;
}

export interface FundingSourceRow {
  transfer_id: string;
  paycheck_id: string;
  stage: 'ESTIMATED' | 'FINAL';
  amount_minor: number;
  currency: string;
}

export const TRANSFER_FILTER_FIELDS: FilterQueryFields = {
  submitted_at: { column: 't.submitted_at', contains: false },
};

const TRANSFER_COLUMNS = sql`t.id, t.person_id, t.origin_account_id, t.origin_paycheck_id, t.destination_account_id,
  t.amount_minor, t.fee_minor, trim(t.currency) as currency, t.schedule, t.status, t.failure_reason,
  t.rail_reference, t.settle_after, t.submitted_at, t.resolved_at`;

/** A person's transfers, oldest first, at most `limit`. */
export async function findTransfersOfPerson(
  db: Db,
  personId: string,
  query: ListQuery,
  limit: number,
): Promise<TransferRow[]> {
  const { rows } = await sql<TransferRow>`select ${TRANSFER_COLUMNS} from transfers t
    where t.person_id = ${personId}::uuid and ${listQuerySql(query, TRANSFER_FILTER_FIELDS)}
    order by t.submitted_at, t.id limit ${limit}`.execute(db);
  return rows;
}

export async function findTransferOfPerson(
  db: Db | Tx,
  personId: string,
  id: string,
): Promise<TransferRow | undefined> {
  const { rows } = await sql<TransferRow>`select ${TRANSFER_COLUMNS} from transfers t
    where t.id = ${id}::uuid and t.person_id = ${personId}::uuid`.execute(db);
  return rows[0];
}

export async function findFundingSources(
  db: Db | Tx,
  transferIds: readonly string[],
): Promise<FundingSourceRow[]> {
  if (transferIds.length === 0) return [];
  const { rows } = await sql<FundingSourceRow>`select transfer_id, paycheck_id, stage, amount_minor,
      trim(currency) as currency
    from funding_sources where transfer_id = any(${[...transferIds]}::uuid[]) order by id`.execute(db);
  return rows;
}

/** The account an advance comes from or goes to, if it is the person's and not deleted. */
export interface PersonAccountRow {
  id: string;
  account_type: string;
  subtype: string;
  currency: string;
}

export async function findLiveAccountOfPerson(
  db: Db | Tx,
  personId: string,
  accountId: string,
): Promise<PersonAccountRow | undefined> {
  const { rows } = await sql<PersonAccountRow>`select id, account_type, subtype, trim(currency) as currency
    from accounts where id = ${accountId}::uuid and person_id = ${personId}::uuid
      and deleted_at is null`.execute(db);
  return rows[0];
}

/** The job whose earnings balance this account is. */
export async function findJobOfEarningsBalance(db: Db | Tx, accountId: string): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`select id from jobs
    where earnings_balance_account_id = ${accountId}::uuid`.execute(db);
  return rows[0]?.id;
}

export interface PersonStanding {
  disallow_reason: string | null;
  state_of_residence: string | null;
}

export async function findPersonStanding(db: Db | Tx, personId: string): Promise<PersonStanding | undefined> {
  const { rows } = await sql<PersonStanding>`select disallow_reason, state_of_residence from people
    where id = ${personId}::uuid`.execute(db);
  return rows[0];
}

/** Advances of the last 24 hours that have not failed: how many and how much. */
export async function recentAdvances(
  tx: Tx,
  personId: string,
  since: Date,
): Promise<{ count: number; amountMinor: number }> {
  const { rows } = await sql<{ count: number; amount: number | null }>`select count(*)::integer as count,
      sum(amount_minor)::bigint as amount
    from transfers where person_id = ${personId}::uuid and origin_account_id is not null
      and status <> 'FAILED' and submitted_at > ${since.toISOString()}::timestamptz`.execute(tx);
  return { count: Number(rows[0]?.count ?? 0), amountMinor: Number(rows[0]?.amount ?? 0) };
}

export async function hasRecentTwin(
  tx: Tx,
  personId: string,
  destinationId: string,
  amountMinor: number,
  since: Date,
): Promise<boolean> {
  const { rows } = await sql`select 1 from transfers where person_id = ${personId}::uuid
      and destination_account_id = ${destinationId}::uuid and amount_minor = ${amountMinor}
      and origin_account_id is not null and status <> 'FAILED'
      and submitted_at > ${since.toISOString()}::timestamptz limit 1`.execute(tx);
  return rows.length > 0;
}

/** Paychecks of a job that still have an accessible share not yet taken, oldest period first, locked. */
export interface FundablePaycheck {
  id: string;
  remaining_minor: number;
}

export async function lockFundablePaychecks(tx: Tx, jobId: string): Promise<FundablePaycheck[]> {
  const { rows } =
    await sql<FundablePaycheck>`select id, accessible_minor - total_debited_minor as remaining_minor
    from paychecks where job_id = ${jobId}::uuid and status in ('ESTIMATED', 'PROCESSING')
      and accessible_minor > total_debited_minor
    order by pay_period_starts_at, id for update`.execute(tx);
  return rows.map((row) => ({ id: row.id, remaining_minor: Number(row.remaining_minor) }));
}

/** Whether any transfer, of anyone, has this id: a client's id for a new transfer must be unused. */
export async function transferIdTaken(db: Db | Tx, id: string): Promise<boolean> {
  const { rows } = await sql`select 1 from transfers where id = ${id}::uuid`.execute(db);
  return rows.length > 0;
}

export async function insertTransfer(tx: Tx, row: TransferRow): Promise<boolean> {
  const { rows } = await sql`insert into transfers (id, person_id, origin_account_id, origin_paycheck_id,
      destination_account_id, amount_minor, fee_minor, currency, schedule, status, rail_reference, settle_after,
      submitted_at)
    values (${row.id}::uuid, ${row.person_id}::uuid, ${row.origin_account_id}::uuid, ${row.origin_paycheck_id}::uuid,
      ${row.destination_account_id}::uuid, ${row.amount_minor}, ${row.fee_minor}, ${row.currency}, ${row.schedule},
      'PENDING', ${row.rail_reference}, ${row.settle_after?.toISOString() ?? null}::timestamptz,
      ${row.submitted_at.toISOString()}::timestamptz)
    on conflict (id) do nothing returning id`.execute(tx);
  return rows.length === 1;
}

export async function insertFundingSources(tx: Tx, sources: readonly FundingSourceRow[]): Promise<void> {
  if (sources.length === 0) return;
  await sql`insert into funding_sources (transfer_id, paycheck_id, stage, amount_minor, currency)
    select * from unnest(${sources.map((s) => s.transfer_id)}::uuid[], ${sources.map((s) => s.paycheck_id)}::uuid[],
      ${sources.map((s) => s.stage)}::text[], ${sources.map((s) => s.amount_minor)}::bigint[],
      ${sources.map((s) => s.currency)}::char(3)[])`.execute(tx);
}

/** Adds (or with a negative amount, takes back) what advances took from each paycheck. */
export async function addToTotalDebited(
  tx: Tx,
  changes: readonly { paycheckId: string; amountMinor: number }[],
  now: Date,
): Promise<void> {
  if (changes.length === 0) return;
  await sql`update paychecks p set total_debited_minor = p.total_debited_minor + c.amount,
      updated_at = ${now.toISOString()}::timestamptz
    from unnest(${changes.map((c) => c.paycheckId)}::uuid[], ${changes.map((c) => c.amountMinor)}::bigint[])
      as c(id, amount)
    where p.id = c.id`.execute(tx);
}
