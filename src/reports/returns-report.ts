import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import {
  afterSql,
  fetchSize,
  type ListOrder,
  orderSql,
  PAGE_KEY,
  type Page,
  pageKeySql,
} from '../db/keyset-page.ts';
import type { Tx } from '../db/transaction.ts';
import { decimalAmount } from '../operator/decimal-amount.ts';

/**
 * What is owed back to workers: money the bank returned after the worker's paycheck was paid, which the ledger holds
 * in the system account RETURNS_PAYABLE (src/ledger/movements.ts) until the operator pays it by other means. Two
 * things put money there, each once (src/money/settlement.ts):
 * - PAYOUT: a payday payout returned (or refused by the rail): the paycheck's payout_minor, with payout_returned_at
 *   and payout_return_reason (the paycheck keeps its status: an IN_TRANSIT one stays so);
 * - ADVANCE: a settled advance returned after a paycheck that funded it was paid: its whole amount_minor (fee
 *   included), the transfer's returned_to RETURNS_PAYABLE, returned_at and failure_reason.
 *
 * An item the operator records paid (`ewa returns repaid`, src/money/returns-repaid.ts) leaves the account and the
 * report together. The ledger keeps one RETURNS_PAYABLE account per organization and currency (ledger-accounts.ts),
 * with its balance kept on its row (migration 0031; `ewa ledger check` holds it equal to its entries). The report
 * sets each organization's and currency's items beside that balance: they are equal unless the books were changed
 * by hand.
 */

export type ReturnsPayableKind = 'PAYOUT' | 'ADVANCE';

/** One item owed: a returned payout (its paycheck) or an advance returned after payday (its transfer). */
export interface ReturnsPayableLine {
  kind: ReturnsPayableKind;
  /** The paycheck's id (PAYOUT) or the transfer's (ADVANCE). */
  id: string;
  person_id: string;
  email: string | null;
  organization_id: string;
  currency: string;
  amount_minor: number;
  /** amount_minor as the currency writes it: 300.00. */
  amount: string;
  /** The return code (R01…) or the rail's reason. */
  return_reason: string | null;
  returned_at: string;
}

/** Per organization and currency: the items' sum, and the balance of the ledger's RETURNS_PAYABLE account. */
export interface ReturnsPayableTotal {
  organization_id: string;
  currency: string;
  items: number;
  amount_minor: number;
  amount: string;
  ledger_minor: number;
  ledger: string;
  /** The items' sum is not the ledger's balance: the books need a look (`ewa ledger check`). */
  differs: boolean;
}

export interface ReturnsPayableTotals {
  /** Every total agrees with the ledger. */
  reconciled: boolean;
  /** Those that differ first, then by organization and currency; at most RETURNS_TOTALS_MAX. */
  totals: ReturnsPayableTotal[];
  /** More organization/currency pairs than RETURNS_TOTALS_MAX hold money: filter by organization. */
  totals_truncated: boolean;
}

/** Lines read per statement: the CLI streams every line in pages of this many; the admin API's page at most. */
export const RETURNS_PAGE_LINES = 1_000;
/** Organization/currency pairs listed in the totals. */
export const RETURNS_TOTALS_MAX = 10_000;

/** Oldest return first: the order of the lines, and of the admin API's pages. */
export const RETURNS_PAYABLE_ORDER: ListOrder = {
  list: 'returns_payable',
  key: { column: 'r.returned_at', type: 'timestamptz' },
  id: 'r.id',
};

/** The items owed, of one organization or of all (the partial indexes of migration 0030 find them). */
function itemsSql(organizationId: string | undefined): RawBuilder<unknown> {
  const ofOrganization =
    organizationId === undefined ? sql`` : sql`and j.organization_id = ${organizationId}::uuid`;
  return sql`(select 'PAYOUT' as kind, p.id, j.person_id, j.organization_id, trim(p.currency) as currency,
        p.payout_minor as amount_minor, p.payout_return_reason as return_reason, p.payout_returned_at as returned_at
      from paychecks p join jobs j on j.id = p.job_id
      where p.payout_returned_at is not null ${ofOrganization}
        and not exists (select from returns_repaid rr where rr.item_id = p.id)
    union all
    select 'ADVANCE' as kind, t.id, t.person_id, j.organization_id, trim(t.currency) as currency,
        t.amount_minor, t.failure_reason as return_reason, t.returned_at
      from transfers t join jobs j on j.earnings_balance_account_id = t.origin_account_id
      where t.returned_to = 'RETURNS_PAYABLE' ${ofOrganization}
        and not exists (select from returns_repaid rr where rr.item_id = t.id))`;
}

/** What an item owed is: whose, how much, and the id of its paycheck (PAYOUT) or transfer (ADVANCE). */
export interface OwedItem {
  kind: ReturnsPayableKind;
  id: string;
  person_id: string;
  organization_id: string;
  currency: string;
  amount_minor: number;
}

/** An item owed (not yet recorded paid), by the id of its paycheck or transfer, read in the caller's transaction. */
export async function owedItem(runner: Db | Tx, id: string): Promise<OwedItem | undefined> {
  const { rows } = await sql<
    Omit<OwedItem, 'amount_minor'> & { amount_minor: number | string }
  >`select kind, id, person_id, organization_id, currency, amount_minor from ${itemsSql(undefined)} i
    where i.id = ${id}::uuid`.execute(runner);
  const row = rows[0];
  return row && { ...row, amount_minor: Number(row.amount_minor) };
}

interface TotalRow {
  organization_id: string;
  currency: string;
  items: number | string;
  amount_minor: number | string;
  ledger_minor: number | string;
}

/** The totals of the organization (or all), in the caller's transaction so that they agree with its lines. */
export async function returnsPayableTotals(
  runner: Db | Tx,
  organizationId: string | undefined,
): Promise<ReturnsPayableTotals> {
  const ofOrganization =
    organizationId === undefined ? sql`` : sql`and a.organization_id = ${organizationId}::uuid`;
  const { rows } = await sql<TotalRow>`with owed as (
      select organization_id, currency, count(*) as items, sum(amount_minor) as amount_minor
      from ${itemsSql(organizationId)} i group by organization_id, currency),
    ledger as (
      select a.organization_id, trim(a.currency) as currency, sum(a.balance_minor) as balance
      from ledger_accounts a
      where a.kind = 'RETURNS_PAYABLE' and a.account_id is null and a.paycheck_id is null ${ofOrganization}
      group by a.organization_id, trim(a.currency))
    select organization_id, currency, coalesce(o.items, 0) as items, coalesce(o.amount_minor, 0) as amount_minor,
      coalesce(l.balance, 0) as ledger_minor
    from owed o full join ledger l using (organization_id, currency)
    where coalesce(o.amount_minor, 0) <> 0 or coalesce(l.balance, 0) <> 0 or coalesce(o.items, 0) > 0
    order by coalesce(o.amount_minor, 0) = coalesce(l.balance, 0), organization_id, currency
    limit ${RETURNS_TOTALS_MAX + 1}`.execute(runner);
  const totals = rows.slice(0, RETURNS_TOTALS_MAX).map((row): ReturnsPayableTotal => {
    const amountMinor = Number(row.amount_minor);
    const ledgerMinor = Number(row.ledger_minor);
    return {
      organization_id: row.organization_id,
      currency: row.currency,
      items: Number(row.items),
      amount_minor: amountMinor,
      amount: decimalAmount(amountMinor, row.currency),
      ledger_minor: ledgerMinor,
      ledger: decimalAmount(ledgerMinor, row.currency),
      differs: amountMinor !== ledgerMinor,
    };
  });
  // Those that differ come first: when the first agrees, all do, those past the limit too.
  return {
    reconciled: !totals.some((total) => total.differs),
    totals,
    totals_truncated: rows.length > RETURNS_TOTALS_MAX,
  };
}

interface LineRow {
  kind: ReturnsPayableKind;
  id: string;
  person_id: string;
  email: string | null;
  organization_id: string;
  currency: string;
  amount_minor: number | string;
  return_reason: string | null;
  returned_at: Date | string;
  [PAGE_KEY]: string;
}

/** One page of lines (one row more than the page holds, to know whether another follows), oldest return first. */
export async function returnsPayablePage(
  runner: Db | Tx,
  organizationId: string | undefined,
  page: Page,
): Promise<(ReturnsPayableLine & { [PAGE_KEY]: string })[]> {
  const { rows } =
    await sql<LineRow>`select r.*, pe.email, ${pageKeySql(RETURNS_PAYABLE_ORDER)} as ${sql.ref(PAGE_KEY)}
    from ${itemsSql(organizationId)} r join people pe on pe.id = r.person_id
    where ${afterSql(RETURNS_PAYABLE_ORDER, page)}
    order by ${orderSql(RETURNS_PAYABLE_ORDER)} limit ${fetchSize(page)}`.execute(runner);
  return rows.map((row) => {
    const amountMinor = Number(row.amount_minor);
    return {
      kind: row.kind,
      id: row.id,
      person_id: row.person_id,
      email: row.email ?? null,
      organization_id: row.organization_id,
      currency: row.currency,
      amount_minor: amountMinor,
      amount: decimalAmount(amountMinor, row.currency),
      return_reason: row.return_reason ?? null,
      returned_at: new Date(row.returned_at).toISOString(),
      [PAGE_KEY]: row[PAGE_KEY],
    };
  });
}

/** Every line, page after page of RETURNS_PAGE_LINES, each handed to `onPage` as it is read; the count. */
export async function eachReturnsPayablePage(
  runner: Db | Tx,
  organizationId: string | undefined,
  onPage: (lines: ReturnsPayableLine[]) => void | Promise<void>,
): Promise<number> {
  let after: Page['after'];
  let listed = 0;
  for (;;) {
    const rows = await returnsPayablePage(runner, organizationId, { size: RETURNS_PAGE_LINES, after });
    const lines = rows.slice(0, RETURNS_PAGE_LINES);
    if (lines.length > 0) await onPage(lines.map(({ [PAGE_KEY]: _key, ...line }) => line));
    listed += lines.length;
    if (rows.length <= RETURNS_PAGE_LINES) return listed;
    const last = lines.at(-1)!;
    after = { key: last[PAGE_KEY], id: last.id };
  }
}

/** The CSV columns of a line, in order. */
export const RETURNS_PAYABLE_COLUMNS = [
  'kind',
  'id',
  'person_id',
  'email',
  'organization_id',
  'currency',
  'amount_minor',
  'amount',
  'return_reason',
  'returned_at',
] as const satisfies readonly (keyof ReturnsPayableLine)[];
