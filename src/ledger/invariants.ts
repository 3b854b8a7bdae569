import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * The money invariants, checked against the whole database. Each query returns the rows that break a rule, so an
 * empty list means the books are sound. Used by the tests after every step and by the benchmarks after their runs.
 */
const CHECKS: readonly { rule: string; query: ReturnType<typeof sql<Record<string, unknown>>> }[] = [
  {
    rule: 'every posting balances per currency',
    query: sql`select posting_id, currency,
        sum(case when direction = 'CREDIT' then amount_minor else -amount_minor end) as difference
      from ledger_entries group by posting_id, currency
      having sum(case when direction = 'CREDIT' then amount_minor else -amount_minor end) <> 0`,
  },
  {
    rule: 'an entry has the currency of its ledger account',
    query: sql`select e.id, e.currency, a.currency as account_currency from ledger_entries e
      join ledger_accounts a on a.id = e.ledger_account_id where e.currency <> a.currency`,
  },
  {
    rule: 'a kept balance equals the sum of its entries',
    query: sql`select a.id, a.kind, a.balance_minor as kept, coalesce(e.balance, 0) as entries
      from ledger_accounts a left join (select ledger_account_id,
          sum(case when direction = 'CREDIT' then amount_minor else -amount_minor end) as balance
        from ledger_entries group by ledger_account_id) e on e.ledger_account_id = a.id
      where a.balance_minor is not null and a.balance_minor <> coalesce(e.balance, 0)`,
  },
  {
    rule: 'the ledger accounts of accounts and paychecks keep a balance (reads take it as it is)',
    query: sql`select id, kind from ledger_accounts
      where balance_minor is null and (account_id is not null or paycheck_id is not null)`,
  },
  {
    rule: 'no earnings balance is below zero',
    query: sql`select a.account_id, sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end)
        as balance
      from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
      where a.kind = 'EARNINGS_BALANCE' group by a.account_id
      having sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end) < 0`,
  },
  {
    rule: "an earnings balance equals what its job's open paychecks made accessible and advances have not taken",
    query: sql`with ledger as (
        select a.account_id, sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end)
          as balance
        from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
        where a.kind = 'EARNINGS_BALANCE' group by a.account_id),
      paychecks_open as (
        select j.earnings_balance_account_id as account_id,
          sum(p.accessible_minor - p.total_debited_minor) as untaken
        from paychecks p join jobs j on j.id = p.job_id
        where p.status in ('ESTIMATED', 'PROCESSING') and j.earnings_balance_account_id is not null
        group by j.earnings_balance_account_id)
      select coalesce(l.account_id, o.account_id) as account_id, l.balance, o.untaken
      from ledger l full join paychecks_open o on o.account_id = l.account_id
      where coalesce(l.balance, 0) <> coalesce(o.untaken, 0)`,
  },
  {
    rule: "a paycheck's accessible_minor equals its paycheck-origin transfers less what corrections withdrew",
    query: sql`select p.id, p.accessible_minor, coalesce(t.total, 0) as transfers, coalesce(w.total, 0) as withdrawn
      from paychecks p left join (select origin_paycheck_id, sum(amount_minor) as total from transfers
        where origin_paycheck_id is not null group by origin_paycheck_id) t on t.origin_paycheck_id = p.id
        left join (select lp.paycheck_id, sum(e.amount_minor) as total from ledger_postings lp
          join ledger_entries e on e.posting_id = lp.id and e.direction = 'CREDIT'
          where lp.kind = 'EARNINGS_WITHDRAWN' group by lp.paycheck_id) w on w.paycheck_id = p.id
      where p.accessible_minor <> coalesce(t.total, 0) - coalesce(w.total, 0)`,
  },
  {
    rule: "a paycheck's total_debited_minor equals the estimated funding of its advances that did not fail (or came back to RETURNS_PAYABLE)",
    query: sql`select p.id, p.total_debited_minor, coalesce(f.total, 0) as funded
      from paychecks p left join (select f.paycheck_id, sum(f.amount_minor) as total
        from funding_sources f join transfers t on t.id = f.transfer_id
        where f.stage = 'ESTIMATED' and (t.status <> 'FAILED' or t.returned_to = 'RETURNS_PAYABLE')
        group by f.paycheck_id) f on f.paycheck_id = p.id
      where p.total_debited_minor <> coalesce(f.total, 0)`,
  },
  {
    rule: "a paycheck's clearing balance is net − accessible while open, and zero once paid",
    query: sql`select p.id, p.status, coalesce(b.balance, 0) as balance
      from paychecks p left join ledger_accounts a on a.paycheck_id = p.id
        left join (select ledger_account_id, sum(case when direction = 'CREDIT' then amount_minor
          else -amount_minor end) as balance from ledger_entries group by ledger_account_id) b
          on b.ledger_account_id = a.id
      where coalesce(b.balance, 0) <> case when p.status in ('ESTIMATED', 'PROCESSING')
        then p.net_earnings_minor - p.accessible_minor else 0 end`,
  },
  {
    rule:
      'a paid paycheck paid out exactly net − total_debited − what it recovered, or nothing when short (advances, ' +
      'payout and recovery add up to net pay and its overpayment)',
    query: sql`select p.id, p.net_earnings_minor, p.total_debited_minor, p.payout_minor,
        p.overpayment_recovered_minor, o.amount_minor as overpaid
      from paychecks p left join overpayments o on o.paycheck_id = p.id
      where p.status in ('IN_TRANSIT', 'DEPOSITED')
        and coalesce(p.payout_minor, -1) + p.total_debited_minor + p.overpayment_recovered_minor
          - coalesce(o.amount_minor, 0) <> p.net_earnings_minor`,
  },
  {
    rule: 'the overpayment receivable equals what is left of the overpayments',
    query: sql`with ledger as (
        select a.organization_id, a.currency,
          sum(case when e.direction = 'DEBIT' then e.amount_minor else -e.amount_minor end) as receivable
        from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
        where a.kind = 'OVERPAYMENT_RECEIVABLE' group by a.organization_id, a.currency),
      owed as (select organization_id, currency, sum(amount_minor - recovered_minor - written_off_minor) as left_minor
        from overpayments group by organization_id, currency)
      select coalesce(l.organization_id, o.organization_id) as organization_id, l.receivable, o.left_minor
      from ledger l full join owed o on o.organization_id = l.organization_id and o.currency = l.currency
      where coalesce(l.receivable, 0) <> coalesce(o.left_minor, 0)`,
  },
  {
    rule: 'an overpayment never recovers or writes off more than its amount, and its movements say the same',
    query: sql`select o.id, o.amount_minor, o.recovered_minor, o.written_off_minor, coalesce(r.total, 0) as posted_recovered,
        coalesce(w.total, 0) as posted_written_off
      from overpayments o
        left join (select lp.memo, sum(e.amount_minor) as total from ledger_postings lp
          join ledger_entries e on e.posting_id = lp.id and e.direction = 'CREDIT'
          where lp.kind = 'OVERPAYMENT_RECOVERED' group by lp.memo) r on r.memo = o.id::text
        left join (select lp.memo, sum(e.amount_minor) as total from ledger_postings lp
          join ledger_entries e on e.posting_id = lp.id and e.direction = 'CREDIT'
          where lp.kind = 'OVERPAYMENT_WRITTEN_OFF' group by lp.memo) w on w.memo = o.id::text
      where o.recovered_minor + o.written_off_minor > o.amount_minor
        or o.recovered_minor <> coalesce(r.total, 0) or o.written_off_minor <> coalesce(w.total, 0)
        or (o.status in ('RECOVERED', 'WRITTEN_OFF')) <> (o.recovered_minor + o.written_off_minor = o.amount_minor)`,
  },
  {
    rule: 'each item recorded repaid has its one RETURN_REPAID movement out of RETURNS_PAYABLE, and each such movement its record',
    query: sql`with moved as (
        select coalesce(lp.paycheck_id, lp.transfer_id) as item_id, count(distinct lp.id) as postings,
          sum(e.amount_minor) as amount_minor
        from ledger_postings lp join ledger_entries e on e.posting_id = lp.id and e.direction = 'DEBIT'
          join ledger_accounts a on a.id = e.ledger_account_id and a.kind = 'RETURNS_PAYABLE'
        where lp.kind = 'RETURN_REPAID' group by 1)
      select coalesce(r.item_id, m.item_id) as item_id, r.amount_minor, m.postings, m.amount_minor as moved_minor
      from returns_repaid r full join moved m on m.item_id = r.item_id
      where r.item_id is null or m.item_id is null or m.postings <> 1 or m.amount_minor <> r.amount_minor`,
  },
  {
    rule: 'no overpayment movement touches a bank account or card: recovery comes from paychecks only',
    query: sql`select lp.id, lp.kind, a.kind as account_kind from ledger_postings lp
      join ledger_entries e on e.posting_id = lp.id join ledger_accounts a on a.id = e.ledger_account_id
      where lp.kind in ('OVERPAYMENT_RECORDED', 'OVERPAYMENT_RECOVERED', 'OVERPAYMENT_WRITTEN_OFF')
        and a.kind in ('EXTERNAL_BANK', 'EXTERNAL_CARD', 'EARNINGS_BALANCE')`,
  },
  {
    rule: "a paycheck's overpayment_recovered_minor equals the recoveries posted against it",
    query: sql`select p.id, p.overpayment_recovered_minor, coalesce(r.total, 0) as posted
      from paychecks p left join (select lp.paycheck_id, sum(e.amount_minor) as total from ledger_postings lp
          join ledger_entries e on e.posting_id = lp.id and e.direction = 'CREDIT'
          where lp.kind = 'OVERPAYMENT_RECOVERED' group by lp.paycheck_id) r on r.paycheck_id = p.id
      where p.overpayment_recovered_minor <> coalesce(r.total, 0)`,
  },
  {
    rule: "a person's overpayment_status is their worst open overpayment",
    query: sql`select pe.id, pe.overpayment_status, w.status from people pe
      left join (select person_id, case when bool_or(status = 'RESOLUTION_REQUIRED') then 'RESOLUTION_REQUIRED'
          else 'RECOVERING' end as status
        from overpayments where status in ('RESOLUTION_REQUIRED', 'RECOVERING') group by person_id) w
        on w.person_id = pe.id
      where pe.overpayment_status is distinct from w.status`,
  },
  {
    rule: 'settled (and returned) advances have final funding equal to their estimated funding; others have none',
    query: sql`select t.id, t.status, coalesce(est.total, 0) as estimated, coalesce(fin.total, 0) as final
      from transfers t
        left join (select transfer_id, sum(amount_minor) as total from funding_sources where stage = 'ESTIMATED'
          group by transfer_id) est on est.transfer_id = t.id
        left join (select transfer_id, sum(amount_minor) as total from funding_sources where stage = 'FINAL'
          group by transfer_id) fin on fin.transfer_id = t.id
      where t.origin_account_id is not null and (coalesce(est.total, 0) <> t.amount_minor
        or coalesce(fin.total, 0) <> case when t.status = 'SETTLED' or t.returned_at is not null then t.amount_minor
          else 0 end)`,
  },
];

export interface InvariantViolation {
  rule: string;
  rows: Record<string, unknown>[];
}

/** How many rules checkLedgerInvariants checks. */
export const LEDGER_RULE_COUNT = CHECKS.length;

/** The rules broken, each with at most 20 of its rows; `checked` is told how many rules are done so far. */
export async function checkLedgerInvariants(
  db: Db,
  checked: (done: number) => void = () => {},
): Promise<InvariantViolation[]> {
  const violations: InvariantViolation[] = [];
  for (const [index, check] of CHECKS.entries()) {
    const { rows } = await check.query.execute(db);
    if (rows.length > 0) violations.push({ rule: check.rule, rows: rows.slice(0, 20) });
    checked(index + 1);
  }
  return violations;
}
