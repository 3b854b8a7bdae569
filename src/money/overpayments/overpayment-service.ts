import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { type Tx, withTransaction } from '../../db/transaction.ts';
import { AppError } from '../../errors/app-error.ts';
import type { SystemLedger } from '../../ledger/ledger-accounts.ts';
import { postMovements } from '../../ledger/posting.ts';
import { installmentsOf, type OverpaymentRow, type Resolution } from './overpayment.ts';
import { refreshOverpaymentMarkers } from './overpayment-marker.ts';
import { markDelinquent, saveOverpayments, writeOffMovement } from './overpayment-payday.ts';

/** Who chose a resolution: the worker (REST extension) or an operator (CLI, admin API). */
export type Resolver = 'PERSON' | 'OPERATOR';

function notFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No overpayment ${id}.` });
}

async function lockedOverpaymentsOf(tx: Tx, personId: string): Promise<OverpaymentRow[]> {
  const { rows } = await sql<OverpaymentRow>`select * from overpayments where person_id = ${personId}::uuid
    order by detected_at, id for update`.execute(tx);
  return rows;
}

async function personOf(db: Db, overpaymentId: string): Promise<string> {
  const row = await db
    .selectFrom('overpayments')
    .select('person_id')
    .where('id', '=', overpaymentId)
    .executeTakeFirst();
  if (!row) throw notFound(overpaymentId);
  return row.person_id;
}

/**
 * Chooses how overpayments are recovered, under the person's lock (the lock an advance reads the marker under: an
 * advance that waited for this sees OVERPAYMENT_RESOLVING, one that went first saw RESOLUTION_REQUIRED).
 *
 * The worker resolves their overpayments that wait for a resolution (one by id, or all of them); an overpayment
 * resolved already is refused (INVALID_RESOURCE_STATE), so two requests racing resolve it once and the second is
 * told. An operator may also change the resolution of one being recovered; the installments left start again.
 */
export async function resolveOverpayments(
  db: Db,
  input: {
    personId: string;
    overpaymentId: string | undefined;
    resolution: Resolution;
    by: Resolver;
    now: Date;
  },
): Promise<OverpaymentRow[]> {
  return withTransaction(db, async (tx) => {
    await lockPeople(tx, [input.personId]);
    const all = await lockedOverpaymentsOf(tx, input.personId);
    const named = input.overpaymentId ? all.filter((row) => row.id === input.overpaymentId) : undefined;
    if (input.overpaymentId && named?.length === 0) throw notFound(input.overpaymentId);
    const changeable = (row: OverpaymentRow) =>
      row.status === 'RESOLUTION_REQUIRED' || (input.by === 'OPERATOR' && row.status === 'RECOVERING');
    const chosen = (named ?? all).filter(changeable);
    if (chosen.length === 0) {
      const which = named?.[0];
      throw new AppError('INVALID_RESOURCE_STATE', {
        detail: which
          ? `Overpayment ${which.id} is ${which.status}; only an overpayment waiting for a resolution (RESOLUTION_REQUIRED) can be resolved.`
          : 'This person has no overpayment waiting for a resolution.',
        ...(which ? { source: { pointer: '/data/relationships/overpayment/data/id' } } : {}),
      });
    }
    const installments = installmentsOf(input.resolution);
    const changed = chosen.map((row) => ({
      ...row,
      status: 'RECOVERING',
      resolution: input.resolution.kind,
      installments,
      installments_left: installments,
      resolved_by: input.by,
      resolved_at: input.now,
      updated_at: input.now,
    }));
    await saveOverpayments(tx, changed, input.now);
    await refreshOverpaymentMarkers(tx, [input.personId]);
    return changed;
  });
}

/** The operator's resolution of one overpayment, found by its id. */
export async function resolveOverpaymentById(
  db: Db,
  input: { overpaymentId: string; resolution: Resolution; now: Date },
): Promise<OverpaymentRow> {
  const personId = await personOf(db, input.overpaymentId);
  const [row] = await resolveOverpayments(db, { ...input, personId, by: 'OPERATOR' });
  return row!;
}

/**
 * An operator writes off what is left of an open overpayment now (a ledger movement: the write-off expense against
 * the receivable), under the person's lock. The person becomes DELINQUENT only when the employer's policy says so.
 */
export async function writeOffOverpayment(
  db: Db,
  ledger: SystemLedger,
  input: { overpaymentId: string; now: Date },
): Promise<OverpaymentRow> {
  const personId = await personOf(db, input.overpaymentId);
  const first = await db
    .selectFrom('overpayments')
    .select(['organization_id', 'currency'])
    .where('id', '=', input.overpaymentId)
    .executeTakeFirstOrThrow();
  // Made (if new) outside the transaction, as every movement's system accounts are.
  const system = await ledger.accountsFor(first.organization_id, first.currency.trim());
  return withTransaction(db, async (tx) => {
    await lockPeople(tx, [personId]);
    const row = (await lockedOverpaymentsOf(tx, personId)).find((o) => o.id === input.overpaymentId);
    if (!row) throw notFound(input.overpaymentId);
    if (row.status !== 'RESOLUTION_REQUIRED' && row.status !== 'RECOVERING') {
      throw new AppError('INVALID_RESOURCE_STATE', {
        detail: `Overpayment ${row.id} is ${row.status}; only an open overpayment can be written off.`,
      });
    }
    const closed = { ...row, updated_at: input.now };
    const movement = writeOffMovement(closed, row.paycheck_id, system, input.now);
    await postMovements(tx, [movement]);
    await saveOverpayments(tx, [closed], input.now);
    const { rows } = await sql<{ delinquent: boolean }>`select overpayment_write_off_delinquent as delinquent
      from organization_policies where organization_id = ${row.organization_id}::uuid`.execute(tx);
    if (rows[0]?.delinquent) await markDelinquent(tx, [personId], input.now);
    await refreshOverpaymentMarkers(tx, [personId]);
    return closed;
  });
}
