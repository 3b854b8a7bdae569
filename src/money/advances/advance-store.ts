import { type CompiledQuery, type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { currentDocumentSql } from '../../disclosures/document-store.ts';
import type { ReadGuard } from '../../idempotency/keyed-work.ts';
import { type Movement, movementWrites } from '../../ledger/posting.ts';
import { type OutboxMessage, outboxWrites } from '../../outbox/outbox-message.ts';
import { JOB_TERMS_COLUMNS, type JobTerms, type JobTermsRow, toJobTerms } from '../earnings/job-terms.ts';
import type {
  FundablePaycheck,
  FundingSourceRow,
  PersonAccountRow,
  PersonStanding,
  TransferRow,
} from './transfer.ts';

/**
 * The SQL of advances, as statements for two batches (db/statement-batch.ts), so that advances cost two round trips:
 * first the employers and people locked, then the people read with their origin, job, terms and destination, and
 * the money state in a statement of its own; then every write in one statement. Each statement serves any number of
 * advances at once (of different people): one alone, or a batch sharing a transaction (idempotency/keyed-batch.ts),
 * with the same text, so that each is prepared once per connection. Each row read names its advance by `n`, its
 * 1-based position.
 *
 * Everything an advance checks is read under locks that every writer of it takes too (db/lock-order.ts): the
 * employer's policy under the organization's KEY SHARE lock (a policy change takes FOR UPDATE), the rest under the
 * person's lock (deleting an account, changing a job, a person's details, earnings and payday all take it first).
 * The locks are taken by statements of their own, before the reads: a statement takes its snapshot when it starts,
 * so the reads see everything committed before the locks were granted, where a statement that waited for a lock
 * reads the other tables as they were before it waited.
 *
 * They are meant for a transaction that keeps generic plans (GENERIC_PLANS in db/prepared-pool.ts, or the
 * idempotency key's hold, sent first).
 *
 * Each statement takes a `guard` on `n`, a condition that must hold for advance n to lock or read anything: the
 * idempotency layer passes "this request holds a fresh key", so a request whose key is busy or answered neither
 * locks nor reads.
 */

type Compiler = Kysely<DB>;

/** What one advance asks the reads for. */
export interface AdvanceReadPlan {
  personId: string;
  originId: string;
  destinationId: string | undefined;
  amountMinor: number;
  clientId: string | undefined;
  recentSince: Date;
  /** When the advance started: the calendar month of its fees is counted from this instant's month. */
  startedAt: Date;
  /** Undefined when the duplicate check is off. */
  twinSince: Date | undefined;
  /** A preview locks nothing (when every advance read together is one). */
  preview: boolean;
  /**
   * The states whose rules count the month's fees or the advances with a fee of a pay period (RuleBook's
   * countingStates): the reads count them only for people of those states. Undefined: for everyone.
   */
  countIn?: readonly string[] | undefined;
  /**
   * The states with a DISCLOSURE_BEFORE_FIRST_TRANSFER rule (RuleBook's disclosureStates): the current disclosure
   * document and the person's acceptance of it are read only for people of those states. Undefined: for everyone.
   */
  discloseIn?: readonly string[] | undefined;
}

/** Everything an advance writes. */
export interface AdvanceWrite {
  row: TransferRow;
  sources: readonly FundingSourceRow[];
  movement: Movement;
  /** The instruction to the rail, sent after commit. */
  payment: OutboxMessage;
  /** What was disclosed for it (transfer_disclosures). */
  disclosure: TransferDisclosureRow;
}

/** A row of transfer_disclosures, as the advance writes it. */
export interface TransferDisclosureRow {
  transfer_id: string;
  amount_minor: number;
  fee_minor: number;
  received_minor: number;
  currency: string;
  destination_account_id: string;
  schedule: string;
  expected_on: string;
  debit_on: string;
  document_id: string | null;
  document_version: number | null;
  acknowledged_at: Date | null;
  created_at: Date;
  /** The person's state of residence when the advance was made: where the states' reports count it. */
  state_of_residence: string | null;
}

function plansTable(plans: readonly AdvanceReadPlan[]) {
  return sql`unnest(${plans.map((p) => p.personId)}::uuid[], ${plans.map((p) => p.originId)}::uuid[],
    ${plans.map((p) => p.destinationId ?? null)}::uuid[], ${plans.map((p) => p.startedAt.toISOString())}::timestamptz[])
    with ordinality as r(person_id, origin_id, destination_id, started_at, n)`;
}

/** What the first statement finds; `jobId` without `terms` means the employer has no policy row yet. */
export interface AdvanceContext {
  standing: PersonStanding;
  origin: { id: string; account_type: string } | undefined;
  jobId: string | undefined;
  terms: JobTerms | undefined;
  destination: PersonAccountRow | undefined;
  balanceLedgerId: string | undefined;
  /** The compliance rules' version counter (compliance/rule-book.ts), read with everything else. */
  rulesVersion: number;
  /** The disclosure document current for the person's state and their acceptance of it; undefined when not read. */
  disclosure: DisclosureRead | undefined;
}

/** The current disclosure document of a person's state, and when they accepted that version (null: not yet). */
export interface DisclosureRead {
  id: string;
  version: number;
  title: string;
  acceptedAt: string | null;
}

interface ContextRow extends Partial<JobTermsRow>, PersonStanding {
  origin_id: string | null;
  origin_type: string | null;
  job_id: string | null;
  has_policy: boolean;
  rules_version: string | null;
  destination_id: string | null;
  destination_type: string | null;
  balance_ledger_id: string | null;
  disclosure: DisclosureRead | null;
}

/**
 * Share-locks the employers of the advances' jobs (`FOR KEY SHARE`, in id order), so that a policy change waits for
 * them to commit and they read the policy it leaves. Nothing is locked when every advance is a preview.
 */
function lockEmployersStatement(
  db: Compiler,
  plans: readonly AdvanceReadPlan[],
  guard: ReadGuard,
): CompiledQuery {
  return sql`select o.id from organizations o
    where o.id in (select j.organization_id
      from unnest(${plans.map((p) => p.personId)}::uuid[], ${plans.map((p) => p.originId)}::uuid[])
          with ordinality as r(person_id, origin_id, n)
        join accounts a on a.id = r.origin_id and a.person_id = r.person_id
        join jobs j on j.earnings_balance_account_id = a.id
      where ${guard(sql`r.n`)})
    order by o.id
    ${locking(plans) ? sql`for key share of o` : sql``}`.compile(db);
}

/** Locks the people (`FOR UPDATE`, in id order like every money transaction); nothing when every one is a preview. */
function lockPeopleStatement(
  db: Compiler,
  plans: readonly AdvanceReadPlan[],
  guard: ReadGuard,
): CompiledQuery {
  return sql`select pe.id
    from unnest(${plans.map((p) => p.personId)}::uuid[]) with ordinality as r(person_id, n)
      join people pe on pe.id = r.person_id
    where ${guard(sql`r.n`)}
    order by pe.id
    ${locking(plans) ? sql`for update of pe` : sql``}`.compile(db);
}

function locking(plans: readonly AdvanceReadPlan[]): boolean {
  return plans.some((plan) => !plan.preview);
}

/**
 * Reads each advance's context, after the locks. The destination is the one asked for, else the job's default
 * depository; either must be the person's and live.
 */
function advanceContextStatement(
  db: Compiler,
  plans: readonly AdvanceReadPlan[],
  guard: ReadGuard,
): CompiledQuery {
  return sql`select r.n::integer as n,
      pe.disallow_reason, pe.state_of_residence,
      ${overpaymentColumn()} as overpayment,
      a.id as origin_id, a.account_type as origin_type, j.id as job_id, p.organization_id is not null as has_policy,
      ${JOB_TERMS_COLUMNS},
      d.id as destination_id, d.account_type as destination_type, la.id as balance_ledger_id,
      (select s.value #>> '{}' from app_settings s where s.key = 'compliance_rules_version') as rules_version,
      ${disclosureColumn(plans)} as disclosure
    from ${plansTable(plans)}
      join people pe on pe.id = r.person_id
      left join accounts a on a.id = r.origin_id and a.person_id = pe.id and a.deleted_at is null
      left join jobs j on a.account_type = 'EARNINGS_BALANCE' and j.earnings_balance_account_id = a.id
      left join organizations o on o.id = j.organization_id
      left join organization_policies p on p.organization_id = j.organization_id
      left join accounts d on d.id = coalesce(r.destination_id, j.direct_deposit_default_depository_id)
        and d.person_id = pe.id and d.deleted_at is null
      left join ledger_accounts la on la.account_id = a.id
    where ${guard(sql`r.n`)}`.compile(db);
}

/**
 * The person's first open overpayment, as one JSON value, read only when the person's marker says there is one
 * (people.overpayment_status, kept by every change of an overpayment under the person's lock): a person without one,
 * nearly everyone, costs the statement nothing more.
 */
function overpaymentColumn() {
  return sql`case when pe.overpayment_status is not null then (select json_build_object('id', o.id,
      'status', o.status, 'remainingMinor', o.amount_minor - o.recovered_minor - o.written_off_minor,
      'currency', trim(o.currency))
    from overpayments o where o.person_id = pe.id and o.status = pe.overpayment_status
    order by o.detected_at, o.id limit 1) end`;
}

/** What the context statement found; undefined when the person does not exist (or the guard did not hold). */
function readAdvanceContext(rows: readonly Record<string, unknown>[]): AdvanceContext | undefined {
  const row = rows[0] as ContextRow | undefined;
  if (!row) return undefined;
  return {
    standing: {
      disallow_reason: row.disallow_reason,
      state_of_residence: row.state_of_residence,
      overpayment: row.overpayment ?? null,
    },
    origin: row.origin_id ? { id: row.origin_id, account_type: row.origin_type ?? '' } : undefined,
    jobId: row.job_id ?? undefined,
    terms: row.job_id && row.has_policy ? toJobTerms(row as JobTermsRow) : undefined,
    destination: row.destination_id
      ? { id: row.destination_id, account_type: row.destination_type ?? '' }
      : undefined,
    balanceLedgerId: row.balance_ledger_id ?? undefined,
    rulesVersion: Number(row.rules_version ?? 0),
    disclosure: row.disclosure ?? undefined,
  };
}

/**
 * The current disclosure document of the person's state with their acceptance, as one JSON value. Like the counts
 * of the money state, it is read only for people of the states whose rules ask for it (a condition on the person
 * that PostgreSQL checks once), and under the person's lock, which an acceptance takes too.
 */
function disclosureColumn(plans: readonly AdvanceReadPlan[]) {
  const everyone = plans.some((plan) => plan.discloseIn === undefined);
  const states = [...new Set(plans.flatMap((plan) => plan.discloseIn ?? []))];
  const document = currentDocumentSql(
    sql`trim(pe.state_of_residence)`,
    sql`r.started_at`,
    sql`(${everyone}::boolean or trim(pe.state_of_residence) = any(${states}::text[]))`,
  );
  return sql`(select json_build_object('id', cd.id, 'version', cd.version, 'title', cd.title,
      'acceptedAt', (select da.accepted_at from disclosure_acceptances da
        where da.person_id = pe.id and da.document_id = cd.id))
    from (${document}) cd)`;
}

/** The disclosure of one advance again, whatever its state: the rules changed since the plan was made. */
export async function rereadDisclosure(
  runner: Compiler,
  plan: AdvanceReadPlan,
): Promise<DisclosureRead | undefined> {
  const { rows } = await runner.executeQuery<{ disclosure: DisclosureRead | null }>(
    sql`select ${disclosureColumn([{ ...plan, discloseIn: undefined }])} as disclosure
      from ${plansTable([plan])} join people pe on pe.id = r.person_id`.compile(runner),
  );
  return rows[0]?.disclosure ?? undefined;
}

/** What an advance may take, read under the person's lock. */
export interface MoneyState {
  /** What the job's open paychecks made accessible and advances have not taken: the earnings balance. */
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
  /**
   * Fees of the person's advances not FAILED since the start of the calendar month (employer's time zone) of the
   * advance: what a state's monthly fee cap counts.
   */
  monthFeesMinor: number;
}

interface MoneyStateRow {
  recent_count: number;
  recent_minor: number;
  twin: boolean;
  id_taken: boolean;
  fundable: {
    id: string;
    remaining_minor: number;
    debited_minor: number;
    fee_bearing_advances: number;
    deposit_expected_at: string;
  }[];
  month_fees_minor: number;
}

/**
 * The money state of each advance, in one statement sent after the locks and the context statement in the same
 * batch, so that it too sees everything committed before the locks were granted. It finds each
 * job and destination from the origin by itself, as the context statement does, and compares them as correlated
 * values, so that the plan looks the job's paychecks up by index even on tables never analyzed: a join, planned
 * without statistics, hash-joined every open paycheck.
 *
 * The balance is the sum of the open paychecks' untaken shares, not a sum over the ledger: the two are equal by
 * invariant (ledger/invariants.ts, checked after every step of the property test), and this sum is bounded by the
 * open pay periods where the ledger's grows with the account's whole history.
 *
 * For the states' limits per pay period, each fundable paycheck also brings what advances took from it
 * (total_debited_minor) and how many advances with a fee it funds (funding_sources_paycheck_idx, then each
 * transfer by its key, as a correlated value: a join or EXISTS, planned without statistics, hash-joined a scan of
 * every transfer): the pay
 * period of an advance is that of the paychecks it is funded from and repaid from. The month's fees are a range of
 * transfers_person_idx, from the month's first midnight in the employer's time zone.
 */
function moneyStateStatement(
  db: Compiler,
  plans: readonly AdvanceReadPlan[],
  guard: ReadGuard,
): CompiledQuery {
  const column = <T>(pick: (plan: AdvanceReadPlan) => T) => plans.map(pick);
  // The counts of the states' rules cost index lookups per advance: they run only for the people of a state that
  // has such rules (a condition on the person alone, which PostgreSQL checks once before the scan).
  const everyone = plans.some((plan) => plan.countIn === undefined);
  const states = [...new Set(plans.flatMap((plan) => plan.countIn ?? []))];
  return sql`select r.n::integer as n, recent.recent_count, recent.recent_minor, month.month_fees_minor,
      (r.twin_since is not null and exists (select 1 from transfers t
        where t.destination_account_id = o.destination_id and t.person_id = r.person_id
          and t.amount_minor = r.amount and t.origin_account_id is not null and t.status <> 'FAILED'
          and t.submitted_at > r.twin_since)) as twin,
      (r.client_id is not null and exists (select 1 from transfers t where t.id = r.client_id)) as id_taken,
      coalesce((select json_agg(json_build_object('id', f.id, 'remaining_minor', f.remaining_minor,
            'debited_minor', f.total_debited_minor, 'deposit_expected_at', f.deposit_expected_at,
            'fee_bearing_advances', (select count(distinct fs.transfer_id) from funding_sources fs
              where g.counted and fs.paycheck_id = f.id and (select t.fee_minor > 0 and t.status <> 'FAILED'
                and t.origin_account_id is not null from transfers t where t.id = fs.transfer_id)))
          order by f.pay_period_starts_at, f.id)
        from (select p.id, p.pay_period_starts_at, p.total_debited_minor, p.deposit_expected_at,
            p.accessible_minor - p.total_debited_minor as remaining_minor
          from paychecks p
          where p.job_id = o.job_id and p.status in ('ESTIMATED', 'PROCESSING')
            and p.accessible_minor > p.total_debited_minor) f),
        '[]'::json) as fundable
    from unnest(${column((p) => p.personId)}::uuid[], ${column((p) => p.originId)}::uuid[],
        ${column((p) => p.destinationId ?? null)}::uuid[], ${column((p) => p.amountMinor)}::bigint[],
        ${column((p) => p.clientId ?? null)}::uuid[], ${column((p) => p.recentSince.toISOString())}::timestamptz[],
        ${column((p) => p.twinSince?.toISOString() ?? null)}::timestamptz[],
        ${column((p) => p.startedAt.toISOString())}::timestamptz[])
        with ordinality as r(person_id, origin_id, destination_id, amount, client_id, recent_since, twin_since,
          started_at, n)
      left join lateral (select j.id as job_id, d.id as destination_id,
            date_trunc('month', r.started_at at time zone pol.time_zone) at time zone pol.time_zone as month_starts_at
          from accounts a
            join jobs j on j.earnings_balance_account_id = a.id
            left join organization_policies pol on pol.organization_id = j.organization_id
            left join accounts d on d.id = coalesce(r.destination_id, j.direct_deposit_default_depository_id)
              and d.person_id = a.person_id and d.deleted_at is null
          where a.id = r.origin_id and a.person_id = r.person_id and a.deleted_at is null
            and a.account_type = 'EARNINGS_BALANCE') o on true
      cross join lateral (select ${everyone}::boolean
            or (select trim(pe.state_of_residence) from people pe where pe.id = r.person_id) = any(${states}::text[])
            as counted) g
      cross join lateral (select count(*)::integer as recent_count,
            coalesce(sum(t.amount_minor), 0)::bigint as recent_minor
          from transfers t
          where t.person_id = r.person_id and t.origin_account_id is not null and t.status <> 'FAILED'
            and t.submitted_at > r.recent_since) recent
      cross join lateral (select coalesce(sum(t.fee_minor), 0)::bigint as month_fees_minor
          from transfers t
          where g.counted and t.person_id = r.person_id and t.origin_account_id is not null
            and t.status <> 'FAILED' and t.submitted_at >= o.month_starts_at) month
    where ${guard(sql`r.n`)}`.compile(db);
}

function readMoneyState(rows: readonly Record<string, unknown>[]): MoneyState | undefined {
  const row = rows[0] as MoneyStateRow | undefined;
  if (!row) return undefined;
  const fundable = row.fundable.map((p) => ({
    id: p.id,
    remaining_minor: Number(p.remaining_minor),
    debited_minor: Number(p.debited_minor),
    fee_bearing_advances: Number(p.fee_bearing_advances),
    deposit_expected_at: p.deposit_expected_at,
  }));
  return {
    balanceMinor: fundable.reduce((sum, paycheck) => sum + paycheck.remaining_minor, 0),
    recentCount: Number(row.recent_count),
    recentMinor: Number(row.recent_minor),
    twin: row.twin,
    idTaken: row.id_taken,
    fundable,
    monthFeesMinor: Number(row.month_fees_minor),
  };
}

/** What an advance's reads found, under its locks. */
export interface AdvanceRead {
  context: AdvanceContext;
  money: MoneyState;
}

/**
 * The reads of advances, in their order: the employers and people locked (lock order: db/lock-order.ts), then
 * the context and the money state, which see what the writers the locks waited for committed.
 */
export function advanceReadStatements(
  db: Compiler,
  plans: readonly AdvanceReadPlan[],
  guard: ReadGuard,
): CompiledQuery[] {
  return [
    lockEmployersStatement(db, plans, guard),
    lockPeopleStatement(db, plans, guard),
    advanceContextStatement(db, plans, guard),
    moneyStateStatement(db, plans, guard),
  ];
}

/** The money state of one advance again, counting what the states' rules count whatever its state. */
export async function rereadMoneyState(
  runner: Compiler,
  plan: AdvanceReadPlan,
): Promise<MoneyState | undefined> {
  const { rows } = await runner.executeQuery(
    moneyStateStatement(runner, [{ ...plan, countIn: undefined }], () => sql`true`),
  );
  return readMoneyState(rows as Record<string, unknown>[]);
}

/** One advance's rows of advanceReadStatements; undefined when its person does not exist. */
export function readAdvance(rows: readonly (readonly Record<string, unknown>[])[]): AdvanceRead | undefined {
  const [, , contextRows = [], moneyRows = []] = rows;
  const context = readAdvanceContext(contextRows);
  const money = readMoneyState(moneyRows);
  return context && money ? { context, money } : undefined;
}

/**
 * Writes advances in one statement: the transfers, their estimated funding sources, what each takes from each
 * paycheck (found by primary key, so a plan kept from when the table was small never scans it), and their ledger
 * movements. A transfer id taken since it was checked fails the statement with a unique
 * violation of transfers_pkey (see isTransferIdTaken), so nothing is written.
 */
export function writeAdvancesStatement(db: Compiler, writes: readonly AdvanceWrite[]): CompiledQuery {
  const ctes = movementWrites(writes.map((write) => write.movement));
  if (!ctes) throw new Error('an advance moves money: its movement has lines');
  const rows = writes.map((write) => write.row);
  const row = <T>(pick: (row: TransferRow) => T) => rows.map(pick);
  const sources = writes.flatMap((write) => write.sources);
  const source = <T>(pick: (source: FundingSourceRow) => T) => sources.map(pick);
  const paycheckIds = source((s) => s.paycheck_id);
  const disclosed = <T>(pick: (row: TransferDisclosureRow) => T) =>
    writes.map((write) => pick(write.disclosure));
  const stampOf = new Map(rows.map((r) => [r.id, r.submitted_at.toISOString()]));
  const debits = sql`unnest(${paycheckIds}::uuid[], ${source((s) => s.amount_minor)}::bigint[],
    ${source((s) => stampOf.get(s.transfer_id) ?? null)}::timestamptz[]) as d(id, amount, at)`;
  return sql`with transfer_written as (
      insert into transfers (id, person_id, origin_account_id, origin_paycheck_id, destination_account_id,
        amount_minor, fee_minor, currency, schedule, status, rail_reference, settle_after, submitted_at)
      select t.id, t.person_id, t.origin_id, null, t.destination_id, t.amount, t.fee, t.currency, t.schedule, 'PENDING',
        t.rail_reference, t.settle_after, t.submitted_at
      from unnest(${row((r) => r.id)}::uuid[], ${row((r) => r.person_id)}::uuid[],
          ${row((r) => r.origin_account_id)}::uuid[], ${row((r) => r.destination_account_id)}::uuid[],
          ${row((r) => r.amount_minor)}::bigint[], ${row((r) => r.fee_minor)}::bigint[], ${row((r) => r.currency)}::text[],
          ${row((r) => r.schedule)}::text[], ${row((r) => r.rail_reference)}::text[],
          ${row((r) => r.settle_after?.toISOString() ?? null)}::timestamptz[],
          ${row((r) => r.submitted_at.toISOString())}::timestamptz[])
        as t(id, person_id, origin_id, destination_id, amount, fee, currency, schedule, rail_reference, settle_after,
          submitted_at)
      returning id),
    sources_written as (insert into funding_sources (transfer_id, paycheck_id, stage, amount_minor, currency)
      select t.id, s.paycheck_id, 'ESTIMATED', s.amount, s.currency
      from unnest(${source((s) => s.transfer_id)}::uuid[], ${source((s) => s.paycheck_id)}::uuid[],
          ${source((s) => s.amount_minor)}::bigint[], ${source((s) => s.currency)}::text[])
          with ordinality as s(transfer_id, paycheck_id, amount, currency, n)
        join transfer_written t on t.id = s.transfer_id
      order by s.n),
    paychecks_debited as (update paychecks p set
        total_debited_minor = p.total_debited_minor + (select sum(d.amount) from ${debits} where d.id = p.id),
        updated_at = (select max(d.at) from ${debits} where d.id = p.id)
      where p.id = any(${paycheckIds}::uuid[])),
    disclosures_written as (insert into transfer_disclosures (transfer_id, amount_minor, fee_minor, received_minor,
        currency, destination_account_id, schedule, expected_on, debit_on, document_id, document_version,
        acknowledged_at, created_at, state_of_residence)
      select t.id, d.amount, d.fee, d.received, d.currency, d.destination_id, d.schedule, d.expected_on, d.debit_on,
        d.document_id, d.document_version, d.acknowledged_at, d.created_at, d.state_of_residence
      from unnest(${disclosed((d) => d.transfer_id)}::uuid[], ${disclosed((d) => d.amount_minor)}::bigint[],
          ${disclosed((d) => d.fee_minor)}::bigint[], ${disclosed((d) => d.received_minor)}::bigint[],
          ${disclosed((d) => d.currency)}::text[], ${disclosed((d) => d.destination_account_id)}::uuid[],
          ${disclosed((d) => d.schedule)}::text[], ${disclosed((d) => d.expected_on)}::date[],
          ${disclosed((d) => d.debit_on)}::date[], ${disclosed((d) => d.document_id)}::uuid[],
          ${disclosed((d) => d.document_version)}::integer[],
          ${disclosed((d) => d.acknowledged_at?.toISOString() ?? null)}::timestamptz[],
          ${disclosed((d) => d.created_at.toISOString())}::timestamptz[],
          ${disclosed((d) => d.state_of_residence)}::text[])
          as d(transfer_id, amount, fee, received, currency, destination_id, schedule, expected_on, debit_on,
            document_id, document_version, acknowledged_at, created_at, state_of_residence)
        join transfer_written t on t.id = d.transfer_id),
    ${ctes},
    ${outboxWrites(writes.map((write) => write.payment))}
    select count(*)::integer as written from transfer_written`.compile(db);
}

/** The write failed because a transfer with its id was written since the id was checked. */
export function isTransferIdTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  // The write statement inserts the transfer and what was disclosed for it, both keyed by the transfer's id; which
  // insert meets the taken id first is the plan's choice.
  return code === '23505' && (constraint === 'transfers_pkey' || constraint === 'transfer_disclosures_pkey');
}
