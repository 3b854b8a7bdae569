import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { withTransaction } from '../../db/transaction.ts';
import { creditAccessibleEarnings, withdrawInaccessibleEarnings } from './accessible-earnings.ts';
import { loadJobTerms } from './job-terms.ts';
import { normalize, type PaycheckRow } from './paychecks.ts';

/**
 * The daily credit of DESIGN §4 for paychecks whose earnings did not change: an employer that raises its access
 * rate makes more of the open paychecks accessible; and a share above what net pay allows, left by a correction
 * while advances held it (they failed since), leaves the balance. Visits open paychecks whose accessible share may have grown,
 * in batches, each one transaction holding the people's locks; a second run finds nothing to do.
 */
export async function refreshAccessibleEarnings(db: Db, now: Date, batchSize = 1000): Promise<number> {
  let credited = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await sql<{
      id: string;
      person_id: string;
      job_id: string;
    }>`select p.id, p.person_id, p.job_id
      from paychecks p join jobs j on j.id = p.job_id
        join organization_policies o on o.organization_id = j.organization_id
      where p.status = 'ESTIMATED' and p.id > ${after}::uuid and j.earnings_balance_account_id is not null
        and j.activation_status = 'ACTIVATED'
        and (floor(p.net_earnings_minor * o.access_rate_bp / 10000.0) > p.accessible_minor
          or (p.accessible_minor > greatest(floor(p.net_earnings_minor * o.access_rate_bp / 10000.0), 0)
            and p.accessible_minor > p.total_debited_minor))
      order by p.id limit ${batchSize}`.execute(db);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    const terms = await loadJobTerms(
      db,
      rows.map((row) => row.job_id),
    );
    credited += await withTransaction(db, async (tx) => {
      await lockPeople(
        tx,
        rows.map((row) => row.person_id),
      );
      const { rows: locked } = await sql<PaycheckRow>`select * from paychecks
        where id = any(${rows.map((row) => row.id)}::uuid[]) and status = 'ESTIMATED' order by id for update`.execute(
        tx,
      );
      // A share above what net pay allows (a correction found advances in the way, since failed) goes back first.
      const { paychecks } = await withdrawInaccessibleEarnings(tx, locked.map(normalize), terms, now);
      return creditAccessibleEarnings(tx, paychecks, terms, now);
    });
  }
  return credited;
}
