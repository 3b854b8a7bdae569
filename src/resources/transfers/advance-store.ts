import { sql } from 'kysely';
import type { Tx } from '../../db/transaction.ts';
import { JOB_TERMS_COLUMNS, type JobTerms, type JobTermsRow, toJobTerms } from '../../earnings/job-terms.ts';
import { type Movement, movementWrites } from '../../ledger/posting.ts';
import type {
  FundablePaycheck,
  FundingSourceRow,
  PersonAccountRow,
  PersonStanding,
  TransferRow,
} from './store.ts';

/**
 * The SQL of one advance, in three statements: the person locked and read with the origin, job and terms and the
 * destination, then the money state read under that lock, then every write in one statement. Only the money state
 * must be read under the lock (every change to it holds the person's lock); the rest may change meanwhile (an
 * operator deactivating the job, a deleted account), and the advance is checked against what the first statement
 * read. Fewer round trips keep the person's lock short.
 */

/** What the first statement finds; `jobId` without `terms` means the employer has no policy row yet. */
export interface AdvanceContext {
  standing: PersonStanding;
  origin: { id: string; account_type: string } | undefined;
  jobId: string | undefined;
  terms: JobTerms | undefined;
  destination: PersonAccountRow | undefined;
  balanceLedgerId: string | undefined;
}

interface ContextRow extends Partial<JobTermsRow>, PersonStanding {
  origin_id: string | null;
  origin_type: string | null;
  job_id: string | null;
  has_policy: boolean;
  destination_id: string | null;
  destination_type: string | null;
  balance_ledger_id: string | null;
}

/**
 * Locks the person (`FOR UPDATE`, unless `lock` is false, for a preview) and reads the advance's context. The
 * destination is the one asked for, else the job's default depository; either must be the person's and live.
 * Undefined when the person does not exist.
 */
export async function readAdvanceContext(
  tx: Tx,
  input: { personId: string; originId: string; destinationId: string | undefined; lock: boolean },
): Promise<AdvanceContext | undefined> {
  const { rows } = await sql<ContextRow>`select pe.disallow_reason, pe.state_of_residence,
      a.id as origin_id, a.account_type as origin_type, j.id as job_id, p.organization_id is not null as has_policy,
      ${JOB_TERMS_COLUMNS},
      d.id as destination_id, d.account_type as destination_type, la.id as balance_ledger_id
    from people pe
      left join accounts a on a.id = ${input.originId}::uuid and a.person_id = pe.id and a.deleted_at is null
      left join jobs j on a.account_type = 'EARNINGS_BALANCE' and j.earnings_balance_account_id = a.id
      left join organizations o on o.id = j.organization_id
      left join organization_policies p on p.organization_id = j.organization_id
      left join accounts d on d.id = coalesce(${input.destinationId ?? null}::uuid,
          j.direct_deposit_default_depository_id)
        and d.person_id = pe.id and d.deleted_at is null
      left join ledger_accounts la on la.account_id = a.id
    where pe.id = ${input.personId}::uuid ${input.lock ? sql`for update of pe` : sql``}`.execute(tx);
  const row = rows[0];
  if (!row) return undefined;
  return {
    standing: { disallow_reason: row.disallow_reason, state_of_residence: row.state_of_residence },
    origin: row.origin_id ? { id: row.origin_id, account_type: row.origin_type ?? '' } : undefined,
    jobId: row.job_id ?? undefined,
    terms: row.job_id && row.has_policy ? toJobTerms(row as JobTermsRow) : undefined,
    destination: row.destination_id
      ? { id: row.destination_id, account_type: row.destination_type ?? '' }
      : undefined,
    balanceLedgerId: row.balance_ledger_id ?? undefined,
  };
}

/** What an advance may take, read under the person's lock. */
export interface MoneyState {
  balanceMinor: number;
  /** Advances of the last 24 hours that have not failed. */
  recentCount: number;
  recentMinor: number;
  /** An advance of the same amount to the same destination within the duplicate window. */
  twin: boolean;
  /** The client's id is used by a transfer already. */
  idTaken: boolean;
  /** The job's paychecks with an accessible share not yet taken, oldest period first. */
  fundable: FundablePaycheck[];
}

interface MoneyStateRow {
  balance: number;
  recent_count: number;
  recent_minor: number;
  twin: boolean;
  id_taken: boolean;
  fundable: { id: string; remaining_minor: number }[];
}

/**
 * The money state of an advance in one statement. Every transaction that changes these rows holds the person's
 * lock, so this is read after taking it, in a statement of its own: a statement that waited for the lock would
 * read the other tables as they were before it waited.
 */
export async function readMoneyState(
  tx: Tx,
  input: {
    personId: string;
    jobId: string;
    balanceLedgerId: string | undefined;
    destinationId: string;
    amountMinor: number;
    clientId: string | undefined;
    recentSince: Date;
    /** Undefined when the duplicate check is off. */
    twinSince: Date | undefined;
  },
): Promise<MoneyState> {
  const person = sql`${input.personId}::uuid`;
  const { rows } = await sql<MoneyStateRow>`select b.balance, r.recent_count, r.recent_minor,
      (${input.twinSince?.toISOString() ?? null}::timestamptz is not null and exists (select 1 from transfers
        where person_id = ${person} and destination_account_id = ${input.destinationId}::uuid
          and amount_minor = ${input.amountMinor} and origin_account_id is not null and status <> 'FAILED'
          and submitted_at > ${input.twinSince?.toISOString() ?? null}::timestamptz)) as twin,
      (${input.clientId ?? null}::uuid is not null
        and exists (select 1 from transfers where id = ${input.clientId ?? null}::uuid)) as id_taken,
      coalesce((select json_agg(json_build_object('id', f.id, 'remaining_minor', f.remaining_minor)
          order by f.pay_period_starts_at, f.id)
        from (select id, pay_period_starts_at, accessible_minor - total_debited_minor as remaining_minor
          from paychecks where job_id = ${input.jobId}::uuid and status in ('ESTIMATED', 'PROCESSING')
            and accessible_minor > total_debited_minor) f), '[]'::json) as fundable
    from (select coalesce(sum(case when direction = 'CREDIT' then amount_minor else -amount_minor end), 0)::bigint
          as balance
        from ledger_entries where ledger_account_id = ${input.balanceLedgerId ?? null}::uuid) b,
      (select count(*)::integer as recent_count, coalesce(sum(amount_minor), 0)::bigint as recent_minor
        from transfers where person_id = ${person} and origin_account_id is not null and status <> 'FAILED'
          and submitted_at > ${input.recentSince.toISOString()}::timestamptz) r`.execute(tx);
  const row = rows[0]!;
  return {
    balanceMinor: Number(row.balance),
    recentCount: Number(row.recent_count),
    recentMinor: Number(row.recent_minor),
    twin: row.twin,
    idTaken: row.id_taken,
    fundable: row.fundable.map((p) => ({ id: p.id, remaining_minor: Number(p.remaining_minor) })),
  };
}

/**
 * Writes an advance in one statement: the transfer, its estimated funding sources, what it takes from each
 * paycheck, and its ledger movement. If the id is taken (by a transfer written since it was checked), nothing is
 * written and false is returned.
 */
export async function writeAdvance(
  tx: Tx,
  row: TransferRow,
  sources: readonly FundingSourceRow[],
  movement: Movement,
): Promise<boolean> {
  const ctes = movementWrites([movement], sql`exists (select 1 from transfer_written)`);
  if (!ctes) throw new Error('an advance moves money: its movement has lines');
  const paycheckIds = sources.map((s) => s.paycheck_id);
  const amounts = sources.map((s) => s.amount_minor);
  const { rows } = await sql<{ written: number }>`with transfer_written as (
      insert into transfers (id, person_id, origin_account_id, origin_paycheck_id, destination_account_id,
        amount_minor, fee_minor, currency, schedule, status, rail_reference, settle_after, submitted_at)
      values (${row.id}::uuid, ${row.person_id}::uuid, ${row.origin_account_id}::uuid, null,
        ${row.destination_account_id}::uuid, ${row.amount_minor}, ${row.fee_minor}, ${row.currency}, ${row.schedule},
        'PENDING', ${row.rail_reference}, ${row.settle_after?.toISOString() ?? null}::timestamptz,
        ${row.submitted_at.toISOString()}::timestamptz)
      on conflict (id) do nothing returning id),
    sources_written as (insert into funding_sources (transfer_id, paycheck_id, stage, amount_minor, currency)
      select t.id, s.paycheck_id, 'ESTIMATED', s.amount, ${row.currency}
      from transfer_written t,
        unnest(${paycheckIds}::uuid[], ${amounts}::bigint[]) with ordinality as s(paycheck_id, amount, n)
      order by s.n),
    paychecks_debited as (update paychecks p set total_debited_minor = p.total_debited_minor + s.amount,
        updated_at = ${row.submitted_at.toISOString()}::timestamptz
      from unnest(${paycheckIds}::uuid[], ${amounts}::bigint[]) as s(id, amount)
      where p.id = s.id and exists (select 1 from transfer_written)),
    ${ctes}
    select count(*)::integer as written from transfer_written`.execute(tx);
  return rows[0]?.written === 1;
}
