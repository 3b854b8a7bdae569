import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { PendingPayment } from '../rails/payment-rail.ts';
import { SANDBOX_RETURN_AMOUNTS } from '../rails/sandbox-rail.ts';

/**
 * A page, by id, of the settled advances the sandbox rail may still return: those of its return amounts, not yet
 * returned. The amounts are written into the statement as literals so that PostgreSQL matches the predicate of
 * their partial index (migration 0014), which holds only these few rows: asking every minute costs nothing however
 * many advances have settled. `expectedSettleAt` is when the rail settled each one.
 */
export async function returnableAdvances(db: Db, afterId: string, limit: number): Promise<PendingPayment[]> {
  const amounts = sql.join([...SANDBOX_RETURN_AMOUNTS.keys()].map((amount) => sql.lit(amount)));
  const { rows } = await sql<{
    id: string;
    amount_minor: number;
    rail_reference: string;
    settle_after: Date;
  }>`select id, amount_minor, rail_reference, settle_after from transfers
    where status = 'SETTLED' and returned_at is null and amount_minor in (${amounts})
      and rail_reference is not null and settle_after is not null and id > ${afterId}::uuid
    order by id limit ${limit}`.execute(db);
  return rows.map((row) => ({
    reference: row.id,
    purpose: 'ADVANCE',
    railReference: row.rail_reference,
    requestedAmountMinor: Number(row.amount_minor),
    expectedSettleAt: new Date(row.settle_after),
  }));
}
