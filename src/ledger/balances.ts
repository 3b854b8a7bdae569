import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * Balances of people's accounts, derived from their ledger entries (credits less debits: what the platform owes
 * the person). An account with no ledger account or no entries has a balance of zero.
 */
export async function accountBalancesMinor(
  db: Db,
  accountIds: readonly string[],
): Promise<Map<string, number>> {
  const balances = new Map<string, number>();
  if (accountIds.length === 0) return balances;
  const rows = await db
    .selectFrom('ledger_accounts')
    .innerJoin('ledger_entries', 'ledger_entries.ledger_account_id', 'ledger_accounts.id')
    .select([
      'ledger_accounts.account_id',
      sql<number>`sum(case when ledger_entries.direction = 'CREDIT' then ledger_entries.amount_minor
        else -ledger_entries.amount_minor end)::bigint`.as('balance_minor'),
    ])
    .where('ledger_accounts.account_id', 'in', [...accountIds])
    .groupBy('ledger_accounts.account_id')
    .execute();
  for (const row of rows)
    if (row.account_id !== null) balances.set(row.account_id, Number(row.balance_minor));
  return balances;
}
