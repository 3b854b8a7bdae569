import { type Kysely, sql } from 'kysely';
import { RULES_VERSION_SETTING } from '../../compliance/rule-store.ts';
import { runCompiledOnce } from '../../db/compiled-once.ts';
import { afterSql, type ListOrder, PAGE_KEY, type Page, pageKeySql } from '../../db/keyset-page.ts';
import type { DB } from '../../db/schema.ts';
import type { Caller } from '../../platform/access-tokens.ts';
import type { FilterQueryFields } from '../../platform/filter-query.ts';
import { runListPage } from '../../platform/list-page.ts';
import { type ListQuery, listQuerySql } from '../../platform/list-query.ts';
import { organizationLinkedTo } from '../people/visibility.ts';
import type { FeeSchedule } from './capabilities.ts';

export interface AccountRow {
  id: string;
  person_id: string;
  account_type: string;
  subtype: string;
  name: string;
  verification_status: string;
  currency: string;
  details: Record<string, string>;
}

const COLUMNS = [
  'accounts.id',
  'accounts.person_id',
  'accounts.account_type',
  'accounts.subtype',
  'accounts.name',
  'accounts.verification_status',
  'accounts.currency',
  sql<Record<string, string>>`accounts.details`.as('details'),
] as const;

/** The `filter[...]` fields of the accounts list and the deprecated free-form `filter`, with their columns. */
export const ACCOUNT_FILTER_FIELDS: FilterQueryFields = {
  'person.id': { column: 'accounts.person_id', contains: false },
  account_type: { column: 'accounts.account_type', contains: false },
  subtype: { column: 'accounts.subtype', contains: false },
  name: { column: 'accounts.name', contains: true },
};

/**
 * Live accounts a caller may see. A user: every account of its own person. A client: only the earnings balances
 * of jobs at organizations linked to it (bank accounts and cards are the person's own business).
 */
function accountsVisibleTo(db: Kysely<DB>, caller: Caller) {
  const query = db.selectFrom('accounts').select(COLUMNS).where('accounts.deleted_at', 'is', null);
  if (caller.kind === 'user') return query.where('accounts.person_id', '=', caller.personId);
  return query
    .where('accounts.account_type', '=', 'EARNINGS_BALANCE')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('jobs')
          .select(sql`1`.as('one'))
          .whereRef('jobs.earnings_balance_account_id', '=', 'accounts.id')
          .where(organizationLinkedTo(caller.clientId, 'jobs.organization_id')),
      ),
    );
}

/** The accounts list's order: oldest first, then by id. */
export const ACCOUNT_LIST_ORDER: ListOrder = {
  list: 'accounts',
  key: { column: 'accounts.created_at', type: 'timestamptz' },
  id: 'accounts.id',
};

/** An account with what its resource shows beyond its row, read in the same statement. */
export interface AccountReadRow extends AccountRow {
  /** The balance kept on its ledger account (migration 0020); null without one. */
  balance_minor: number | string | null;
  /**
   * The person's fee schedule (as findFeeSchedules reads it), one column each; schedule_currency is null when they
   * have no ACTIVATED job.
   */
  schedule_currency: string | null;
  schedule_fee_card_instant_minor: number | string | null;
  schedule_fee_card_next_day_minor: number | string | null;
  schedule_fee_bank_instant_minor: number | string | null;
  schedule_fee_bank_next_day_minor: number | string | null;
  schedule_time_zone: string | null;
  schedule_state_of_residence: string | null;
  schedule_rules_version: string | null;
  /** An earnings balance whose job is ACTIVATED: the only kind an advance may come from (INELIGIBLE_ORIGIN). */
  advance_origin: boolean;
}

export interface PersonFeeScheduleRow {
  currency: string;
  fee_card_instant_minor: number | string | null;
  fee_card_next_day_minor: number | string | null;
  fee_bank_instant_minor: number | string | null;
  fee_bank_next_day_minor: number | string | null;
  time_zone: string;
  state_of_residence: string | null;
  rules_version: string | null;
}

/**
 * The visible accounts with their kept balance and their person's fee schedule joined, so that a read is one round
 * trip: the schedule is that of findFeeSchedules (the policy of the person's earliest ACTIVATED job). The schedule
 * comes as columns of a lateral join rather than as one JSON value built in a subquery: building, printing and
 * parsing that value was most of what the schedule cost PostgreSQL and the API on every read of an account.
 */
function readableAccounts(db: Kysely<DB>, caller: Caller) {
  return accountsVisibleTo(db, caller)
    .leftJoin('ledger_accounts as kept', 'kept.account_id', 'accounts.id')
    .leftJoinLateral(
      sql<ScheduleColumns>`(select policy.currency, policy.fee_card_instant_minor, policy.fee_card_next_day_minor,
          policy.fee_bank_instant_minor, policy.fee_bank_next_day_minor, policy.time_zone, people.state_of_residence
        from jobs join organization_policies policy on policy.organization_id = jobs.organization_id
          join people on people.id = jobs.person_id
        where jobs.person_id = accounts.person_id and jobs.activation_status = 'ACTIVATED'
        order by jobs.created_at limit 1)`.as('schedule'),
      (join) => join.onTrue(),
    )
    .select([
      'kept.balance_minor',
      'schedule.currency as schedule_currency',
      'schedule.fee_card_instant_minor as schedule_fee_card_instant_minor',
      'schedule.fee_card_next_day_minor as schedule_fee_card_next_day_minor',
      'schedule.fee_bank_instant_minor as schedule_fee_bank_instant_minor',
      'schedule.fee_bank_next_day_minor as schedule_fee_bank_next_day_minor',
      'schedule.time_zone as schedule_time_zone',
      'schedule.state_of_residence as schedule_state_of_residence',
    ])
    .select(
      sql<boolean>`exists (select 1 from jobs where jobs.earnings_balance_account_id = accounts.id
        and jobs.activation_status = 'ACTIVATED')`.as('advance_origin'),
    )
    .select(
      sql<string | null>`(select value #>> '{}' from app_settings where key = ${RULES_VERSION_SETTING})`.as(
        'schedule_rules_version',
      ),
    );
}

/** The columns of a person's fee schedule as readableAccounts joins them (null when they have none). */
interface ScheduleColumns {
  currency: string | null;
  fee_card_instant_minor: number | string | null;
  fee_card_next_day_minor: number | string | null;
  fee_bank_instant_minor: number | string | null;
  fee_bank_next_day_minor: number | string | null;
  time_zone: string | null;
  state_of_residence: string | null;
}

/** The fee schedule of an AccountReadRow, as findFeeSchedules gives it. */
export function feeScheduleOf(row: AccountReadRow): PersonFeeSchedule | undefined {
  if (row.schedule_currency === null) return undefined;
  return personFeeSchedule({
    currency: row.schedule_currency,
    fee_card_instant_minor: row.schedule_fee_card_instant_minor,
    fee_card_next_day_minor: row.schedule_fee_card_next_day_minor,
    fee_bank_instant_minor: row.schedule_fee_bank_instant_minor,
    fee_bank_next_day_minor: row.schedule_fee_bank_next_day_minor,
    time_zone: row.schedule_time_zone ?? '',
    state_of_residence: row.schedule_state_of_residence,
    rules_version: row.schedule_rules_version,
  });
}

/** One page of the accounts visible to the caller, with one row more when another page follows. */
export async function findVisibleAccounts(
  db: Kysely<DB>,
  caller: Caller,
  options: { query: ListQuery; page: Page },
): Promise<(AccountReadRow & { [PAGE_KEY]: string })[]> {
  const build = (who: Caller, limit: number) =>
    readableAccounts(db, who)
      .select(pageKeySql(ACCOUNT_LIST_ORDER).as(PAGE_KEY))
      .where(listQuerySql(options.query, ACCOUNT_FILTER_FIELDS))
      .where(afterSql(ACCOUNT_LIST_ORDER, options.page))
      .orderBy('accounts.created_at')
      .orderBy('accounts.id')
      .limit(limit);
  return runListPage(db, "accounts: a user's first page", caller, options, build);
}

/** One visible account with what its resource shows (readableAccounts). */
export async function readVisibleAccount(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
): Promise<AccountReadRow | undefined> {
  if (caller.kind === 'user') {
    const rows = await runCompiledOnce(
      db,
      "account: a user's",
      [caller.personId, id],
      (personId: string, accountId: string) =>
        readableAccounts(db, { ...caller, personId }).where('accounts.id', '=', accountId),
    );
    return rows[0];
  }
  return readableAccounts(db, caller).where('accounts.id', '=', id).executeTakeFirst();
}

export async function findVisibleAccount(
  db: Kysely<DB>,
  caller: Caller,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<AccountRow | undefined> {
  let query = accountsVisibleTo(db, caller).where('accounts.id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * A live account of this person, share-locked so that it cannot be deleted while it is being made someone's
 * default or a transfer's destination in the same transaction.
 */
export async function findActiveAccountOfPerson(
  db: Kysely<DB>,
  personId: string,
  id: string,
): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .select(COLUMNS)
    .where('accounts.id', '=', id)
    .where('accounts.person_id', '=', personId)
    .where('accounts.deleted_at', 'is', null)
    .forShare()
    .executeTakeFirst();
}

/** Bank accounts and cards the person holds now. */
export async function countDestinationAccounts(db: Kysely<DB>, personId: string): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select(sql<number>`count(*)::int`.as('count'))
    .where('person_id', '=', personId)
    .where('deleted_at', 'is', null)
    .where('account_type', 'in', ['DEPOSITORY', 'CARD'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Whether a live account has this number: this person's (a duplicate), or, with `others`, anyone else's. */
export async function hasActiveAccountWithFingerprint(
  db: Kysely<DB>,
  personId: string,
  fingerprint: string,
  whose: 'same person' | 'others' = 'same person',
): Promise<boolean> {
  const row = await db
    .selectFrom('accounts')
    .select('id')
    .where('person_id', whose === 'same person' ? '=' : '<>', personId)
    .where('number_fingerprint', '=', fingerprint)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export interface NewBankAccount {
  id: string;
  personId: string;
  subtype: 'CHECKING' | 'SAVINGS';
  name: string;
  currency: string;
  details: Record<string, string>;
  routingNumber: string;
  accountNumberSealed: Buffer;
  fingerprint: string;
  now: Date;
}

export async function insertBankAccount(db: Kysely<DB>, account: NewBankAccount): Promise<AccountRow> {
  return db
    .insertInto('accounts')
    .values({
      id: account.id,
      person_id: account.personId,
      account_type: 'DEPOSITORY',
      subtype: account.subtype,
      name: account.name,
      verification_status: 'VERIFIED',
      currency: account.currency,
      details: JSON.stringify(account.details),
      routing_number: account.routingNumber,
      account_number_enc: account.accountNumberSealed,
      number_fingerprint: account.fingerprint,
      created_at: account.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export interface NewCardAccount {
  id: string;
  personId: string;
  name: string;
  currency: string;
  details: Record<string, string>;
  vaultCardId: string;
  fingerprint: string;
  now: Date;
}

export async function insertCardAccount(db: Kysely<DB>, account: NewCardAccount): Promise<AccountRow> {
  return db
    .insertInto('accounts')
    .values({
      id: account.id,
      person_id: account.personId,
      account_type: 'CARD',
      subtype: 'DEBIT',
      name: account.name,
      verification_status: 'VERIFIED',
      currency: account.currency,
      details: JSON.stringify(account.details),
      vault_card_id: account.vaultCardId,
      number_fingerprint: account.fingerprint,
      created_at: account.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function markAccountDeleted(db: Kysely<DB>, id: string, now: Date): Promise<void> {
  await db.updateTable('accounts').set({ deleted_at: now }).where('id', '=', id).execute();
}

/** A job that pays into an account by default, with what decides whether that account may be deleted. */
export interface DefaultingJob {
  id: string;
  activation_status: string;
  /** The account is the job's default card, and the job has a default bank account besides, not deleted. */
  card_beside_depository: boolean;
  /** The job's paycheck not yet DEPOSITED that comes first, if any. */
  unpaid_paycheck_id: string | null;
  unpaid_deposit_expected_at: Date | string | null;
}

/** Jobs that pay into this account by default (a person's own, so few); the caller holds their person's lock. */
export async function findJobsDefaultingTo(db: Kysely<DB>, accountId: string): Promise<DefaultingJob[]> {
  const { rows } = await sql<DefaultingJob>`select j.id, j.activation_status,
      (j.direct_deposit_default_card_id = ${accountId} and dep.id is not null) as card_beside_depository,
      unpaid.id as unpaid_paycheck_id, unpaid.deposit_expected_at as unpaid_deposit_expected_at
    from jobs j
      left join accounts dep on dep.id = j.direct_deposit_default_depository_id and dep.deleted_at is null
      left join lateral (select p.id, p.deposit_expected_at from paychecks p
        where p.job_id = j.id and p.status <> 'DEPOSITED'
        order by p.pay_period_starts_at limit 1) unpaid on true
    where j.direct_deposit_default_depository_id = ${accountId} or j.direct_deposit_default_card_id = ${accountId}
    order by j.id
    for update of j`.execute(db);
  return rows;
}

/**
 * Stops jobs paying into an account that is being deleted. A job left with no default needs one set up again
 * (SETUP_REQUIRED).
 */
export async function clearDefaultAccount(db: Kysely<DB>, accountId: string, jobIds: string[], now: Date) {
  if (jobIds.length === 0) return;
  await sql`update jobs set
      direct_deposit_default_depository_id = nullif(direct_deposit_default_depository_id, ${accountId}),
      direct_deposit_default_card_id = nullif(direct_deposit_default_card_id, ${accountId}),
      direct_deposit_status = case
        when nullif(direct_deposit_default_depository_id, ${accountId}) is null
          and nullif(direct_deposit_default_card_id, ${accountId}) is null then 'SETUP_REQUIRED'
        else direct_deposit_status end,
      updated_at = ${now}
    where id = any(${jobIds}::uuid[])`.execute(db);
}

export async function findPendingTransfersTo(db: Kysely<DB>, accountId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('transfers')
    .select('id')
    .where('destination_account_id', '=', accountId)
    .where('status', '=', 'PENDING')
    .limit(10)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Each person's fee schedule: the policy of the employer of their earliest ACTIVATED job. A person with no active
 * job has none, and so no way to move money yet.
 */
/** The employer's fee schedule of a person, with what decides which state rules apply to it. */
export interface PersonFeeSchedule extends FeeSchedule {
  jurisdiction: { state: string; timeZone: string; rulesVersion: number } | undefined;
}

export async function findFeeSchedules(
  db: Kysely<DB>,
  personIds: readonly string[],
): Promise<Map<string, PersonFeeSchedule>> {
  const schedules = new Map<string, PersonFeeSchedule>();
  if (personIds.length === 0) return schedules;
  const rows = await db
    .selectFrom('jobs')
    .innerJoin('organization_policies as policy', 'policy.organization_id', 'jobs.organization_id')
    .distinctOn('jobs.person_id')
    .innerJoin('people', 'people.id', 'jobs.person_id')
    .select((eb) => [
      'jobs.person_id',
      'policy.currency',
      'policy.fee_card_instant_minor',
      'policy.fee_card_next_day_minor',
      'policy.fee_bank_instant_minor',
      'policy.fee_bank_next_day_minor',
      'policy.time_zone',
      'people.state_of_residence',
      eb
        .selectFrom('app_settings')
        .select(sql<string>`value #>> '{}'`.as('version'))
        .where('key', '=', RULES_VERSION_SETTING)
        .as('rules_version'),
    ])
    .where('jobs.person_id', 'in', [...personIds])
    .where('jobs.activation_status', '=', 'ACTIVATED')
    .orderBy('jobs.person_id')
    .orderBy('jobs.created_at')
    .execute();
  for (const { person_id: personId, ...schedule } of rows)
    schedules.set(personId, personFeeSchedule(schedule));
  return schedules;
}

export function personFeeSchedule(row: PersonFeeScheduleRow): PersonFeeSchedule {
  const { time_zone, state_of_residence, rules_version } = row;
  return {
    jurisdiction: state_of_residence
      ? { state: state_of_residence, timeZone: time_zone, rulesVersion: Number(rules_version ?? 0) }
      : undefined,
    currency: row.currency.trim(),
    fee_card_instant_minor: nullableNumber(row.fee_card_instant_minor),
    fee_card_next_day_minor: nullableNumber(row.fee_card_next_day_minor),
    fee_bank_instant_minor: nullableNumber(row.fee_bank_instant_minor),
    fee_bank_next_day_minor: nullableNumber(row.fee_bank_next_day_minor),
  };
}

function nullableNumber(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}
