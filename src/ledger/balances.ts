import type { Db } from '../db/database.ts';

/**
 * Balances of people's accounts (credits less debits: what the platform owes the person), as kept on their ledger
 * accounts by every posting (posting.ts), so a read does not grow with the account's history. An account with no
 * ledger account has a balance of zero.
 */
export async function accountBalancesMinor(
  db: Db,
  accountIds: readonly string[],
): Promise<Map<string, number>> {
  const balances = new Map<string, number>();
  if (accountIds.length === 0) return balances;
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['account_id', 'balance_minor'])
    .where('account_id', 'in', [...accountIds])
    .execute();
  for (const row of rows)
    if (row.account_id !== null) balances.set(row.account_id, Number(row.balance_minor ?? 0));
  return balances;
}
