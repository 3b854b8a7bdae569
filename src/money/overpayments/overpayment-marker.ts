import { sql } from 'kysely';
import type { Tx } from '../../db/transaction.ts';

/**
 * Keeps people.overpayment_status equal to their worst open overpayment (RESOLUTION_REQUIRED before RECOVERING; null
 * when none is open), in the transaction that changed them, under the person's lock. An advance reads the marker with
 * the person, so the people without an overpayment, nearly all, cost it nothing more.
 */
export async function refreshOverpaymentMarkers(tx: Tx, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  await sql`update people pe set overpayment_status = w.status
    from (select p.id, (select case when bool_or(o.status = 'RESOLUTION_REQUIRED') then 'RESOLUTION_REQUIRED'
            when bool_or(o.status = 'RECOVERING') then 'RECOVERING' end
          from overpayments o where o.person_id = p.id and o.status in ('RESOLUTION_REQUIRED', 'RECOVERING')) as status
        from unnest(${[...new Set(personIds)]}::uuid[]) as p(id)) w
    where pe.id = w.id and pe.overpayment_status is distinct from w.status`.execute(tx);
}
