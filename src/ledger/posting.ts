import { randomUUID } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';

/** What a posting records; the kind names the business event, so an auditor can read the ledger alone. */
export type MovementKind =
  | 'EARNINGS_ACCRUED'
  | 'EARNINGS_MADE_ACCESSIBLE'
  | 'ADVANCE_SUBMITTED'
  | 'ADVANCE_SETTLED'
  | 'ADVANCE_FAILED'
  | 'ADVANCE_RETURNED'
  | 'PAYDAY'
  | 'EMPLOYER_PAYDAY'
  | 'PAYCHECK_DEPOSITED'
  | 'PAYCHECK_RETURNED'
  | 'RETURN_REPAID'
  | 'EARNINGS_CORRECTED'
  | 'EARNINGS_WITHDRAWN'
  | 'OVERPAYMENT_RECORDED'
  | 'OVERPAYMENT_RECOVERED'
  | 'OVERPAYMENT_WRITTEN_OFF';

export interface EntryLine {
  ledgerAccountId: string;
  direction: 'DEBIT' | 'CREDIT';
  amountMinor: number;
  currency: string;
}

export interface Movement {
  kind: MovementKind;
  transferId?: string | null;
  paycheckId?: string | null;
  postedAt: Date;
  memo?: string | null;
  /** Lines of zero are dropped, so callers can write every leg of a rule even when one is empty. */
  lines: readonly EntryLine[];
}

/** A movement that does not balance is a bug in the caller, never a business error: it must not be written. */
export class UnbalancedMovementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnbalancedMovementError';
  }
}

/**
 * The one writer of ledger entries. Each movement becomes a posting whose entries balance per currency (debits =
 * credits). The result is three CTE items (undefined when there is nothing to write) that write every posting and
 * entry, whatever their number, and add what they move to the balance kept on each ledger account that keeps one
 * (`balance_minor`, not null: the accounts of people and paychecks; migration 0020); they run only in the statement
 * (so the transaction) of the caller, so a movement is recorded together with the business change it explains and
 * the balances it changes, or not at all. `guard`, when given, is a condition on the rest of that statement (say,
 * that a transfer was inserted): when it is false nothing is written.
 *
 * The balance's update takes the ledger account's row lock to commit. The accounts that keep a balance belong to
 * one person each, and every transaction that moves a person's money holds that person's lock first
 * (db/lock-order.ts), so it waits for nobody there; the system's accounts, which every advance touches, keep none.
 */
export function movementWrites(
  movements: readonly Movement[],
  guard?: RawBuilder<unknown>,
): RawBuilder<unknown> | undefined {
  const postings: { id: string; movement: Movement }[] = [];
  const entryPosting: string[] = [];
  const entryAccount: string[] = [];
  const entryDirection: string[] = [];
  const entryAmount: number[] = [];
  const entryCurrency: string[] = [];
  for (const movement of movements) {
    const lines = movement.lines.filter((line) => line.amountMinor !== 0);
    checkBalanced(movement.kind, lines);
    if (lines.length === 0) continue;
    const id = randomUUID();
    postings.push({ id, movement });
    for (const line of lines) {
      entryPosting.push(id);
      entryAccount.push(line.ledgerAccountId);
      entryDirection.push(line.direction);
      entryAmount.push(line.amountMinor);
      entryCurrency.push(line.currency);
    }
  }
  if (postings.length === 0) return undefined;
  const when = guard ?? sql`true`;
  const moved = netByAccount(entryAccount, entryDirection, entryAmount);
  return sql`ledger_postings_written as (insert into ledger_postings (id, kind, transfer_id, paycheck_id,
      posted_at, memo)
    select * from unnest(${postings.map((p) => p.id)}::uuid[], ${postings.map((p) => p.movement.kind)}::text[],
      ${postings.map((p) => p.movement.transferId ?? null)}::uuid[],
      ${postings.map((p) => p.movement.paycheckId ?? null)}::uuid[],
      ${postings.map((p) => p.movement.postedAt.toISOString())}::timestamptz[],
      ${postings.map((p) => p.movement.memo ?? null)}::text[])
    where ${when}),
  ledger_entries_written as (insert into ledger_entries (posting_id, ledger_account_id, direction, amount_minor,
      currency)
    select * from unnest(${entryPosting}::uuid[], ${entryAccount}::uuid[], ${entryDirection}::text[],
      ${entryAmount}::bigint[], ${entryCurrency}::char(3)[])
    where ${when}),
  ledger_balances_kept as (update ledger_accounts a set balance_minor = a.balance_minor + m.amount
    from unnest(${moved.ids}::uuid[], ${moved.amounts}::bigint[]) as m(id, amount)
    where a.id = m.id and a.balance_minor is not null and ${when})`;
}

/** Credits less debits per ledger account, in account id order; accounts whose lines cancel out are left out. */
function netByAccount(
  accounts: readonly string[],
  directions: readonly string[],
  amounts: readonly number[],
): { ids: string[]; amounts: number[] } {
  const net = new Map<string, number>();
  accounts.forEach((id, index) => {
    const signed = directions[index] === 'CREDIT' ? amounts[index]! : -amounts[index]!;
    net.set(id, (net.get(id) ?? 0) + signed);
  });
  const ids = [...net.keys()].filter((id) => net.get(id) !== 0).sort();
  return { ids, amounts: ids.map((id) => net.get(id)!) };
}

/** Writes movements in one statement of the caller's transaction. */
export async function postMovements(tx: Tx, movements: readonly Movement[]): Promise<void> {
  const ctes = movementWrites(movements);
  if (ctes) await sql`with ${ctes} select 1`.execute(tx);
}

function checkBalanced(kind: string, lines: readonly EntryLine[]): void {
  const net = new Map<string, number>();
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amountMinor) || line.amountMinor < 0)
      throw new UnbalancedMovementError(`${kind}: amount ${line.amountMinor} is not a non-negative integer`);
    if (!line.ledgerAccountId) throw new UnbalancedMovementError(`${kind}: a line has no ledger account`);
    const signed = line.direction === 'CREDIT' ? line.amountMinor : -line.amountMinor;
    net.set(line.currency, (net.get(line.currency) ?? 0) + signed);
  }
  for (const [currency, difference] of net)
    if (difference !== 0)
      throw new UnbalancedMovementError(`${kind}: ${currency} credits and debits differ by ${difference}`);
}
