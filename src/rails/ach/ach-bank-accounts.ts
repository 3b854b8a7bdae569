import { sql } from 'kysely';
import type { Tx } from '../../db/transaction.ts';
import type { AchBankAccount } from './ach-rail.ts';

/**
 * Reads the bank accounts an ACH file pays, opening each number with `open` (the key lives with the accounts), in
 * the transaction that composes the file. A deleted account still has its number: money sent before it was deleted
 * still goes out.
 */
export async function readAchBankAccounts(
  tx: Tx,
  ids: readonly string[],
  open: (accountId: string, sealed: Uint8Array) => string,
): Promise<Map<string, AchBankAccount>> {
  const { rows } = await sql<{
    id: string;
    subtype: string;
    routing_number: string;
    account_number_enc: Uint8Array;
    first_name: string;
    last_name: string;
  }>`select a.id, a.subtype, a.routing_number, a.account_number_enc, p.first_name, p.last_name
    from accounts a join people p on p.id = a.person_id
    where a.id = any(${ids}::uuid[]) and a.account_type = 'DEPOSITORY'`.execute(tx);
  return new Map(
    rows.map((row) => [
      row.id,
      {
        routingNumber: row.routing_number,
        accountNumber: open(row.id, row.account_number_enc),
        subtype: row.subtype === 'SAVINGS' ? 'SAVINGS' : 'CHECKING',
        holderName: `${row.first_name} ${row.last_name}`
          .normalize('NFKD')
          .replace(/[^\x20-\x7e]/g, '')
          .slice(0, 22),
      },
    ]),
  );
}
