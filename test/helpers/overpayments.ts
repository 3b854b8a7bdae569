import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/database.ts';

/**
 * An overpayment of 25.00 waiting for a resolution, as payday leaves one (its row and the person's marker; not its
 * ledger movement: tests of resolution and its races, not of the books). Its id.
 */
export async function insertWaitingOverpayment(
  db: Db,
  owner: { personId: string; jobId: string; organizationId: string; paycheckId: string },
  detectedAt = new Date(),
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('overpayments')
    .values({
      id,
      person_id: owner.personId,
      job_id: owner.jobId,
      paycheck_id: owner.paycheckId,
      organization_id: owner.organizationId,
      currency: 'USD',
      amount_minor: 2500,
      status: 'RESOLUTION_REQUIRED',
      resolution: null,
      installments: null,
      installments_left: null,
      resolved_by: null,
      detected_at: detectedAt,
      resolved_at: null,
      closed_at: null,
      updated_at: detectedAt,
    })
    .execute();
  await db
    .updateTable('people')
    .set({ overpayment_status: 'RESOLUTION_REQUIRED' })
    .where('id', '=', owner.personId)
    .execute();
  return id;
}
