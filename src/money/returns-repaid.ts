import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { textProblem } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import type { SystemLedger } from '../ledger/ledger-accounts.ts';
import { returnRepaid } from '../ledger/movements.ts';
import { postMovements } from '../ledger/posting.ts';
import { type OwedItem, owedItem } from '../reports/returns-report.ts';

/** The longest payment reference kept (the column's check, migration 0034). */
export const REPAID_REFERENCE_MAX = 140;

/** An item of RETURNS_PAYABLE (its id the one `ewa reports returns` lists) recorded paid by the operator. */
export interface ReturnRepaid extends OwedItem {
  reference: string;
  repaid_at: string;
}

/**
 * The reference as given: 1 to REPAID_REFERENCE_MAX characters, not all blank, text by the one rule (input-text.ts:
 * no control, bidirectional or zero-width character), else why not. It is kept trimmed. The length is of the text as
 * given, as the request schema counts it, so `ewa returns repaid` and the API take the same references.
 */
export function repaidReferenceProblem(reference: string): string | undefined {
  // Characters as the column's check and the request schema count them (code points), not UTF-16 units: an emoji
  // is one character, not two.
  const characters = [...reference].length;
  if (characters > REPAID_REFERENCE_MAX)
    return `must be at most ${REPAID_REFERENCE_MAX} characters (got ${characters})`;
  const trimmed = reference.trim();
  if (trimmed.length === 0) return 'must name the payment (a wire, transfer or check number)';
  // The one rule for text from outside: `ewa returns repaid` reads a reference that never passes the HTTP edge.
  const problem = textProblem(trimmed);
  return problem?.replace(/\.$/, '');
}

/**
 * Records that what a worker was owed back (a returned payday payout, or an advance returned after payday: an item of
 * `ewa reports returns`) was paid to them by the operator outside the rails: the RETURN_REPAID movement takes the
 * whole item out of RETURNS_PAYABLE, in the transaction that keeps the record, so the report and the ledger's balance
 * drop together. Under the person's lock (the lock returns are applied under); an item is recorded once: a second
 * try, even at the same moment from another process, is refused (the record's key is the item's id).
 */
export async function recordReturnRepaid(
  db: Db,
  ledger: SystemLedger,
  input: { id: string; reference: string; now: Date },
): Promise<ReturnRepaid> {
  const problem = repaidReferenceProblem(input.reference);
  if (problem)
    throw new AppError('INVALID_PARAMETERS', {
      detail: `reference ${problem}.`,
      source: { pointer: '/data/attributes/reference' },
    });
  const reference = input.reference.trim();
  const before = await owedItem(db, input.id);
  if (!before) throw await notOwed(db, input.id);
  // Made (if new) outside the transaction, as every movement's system accounts are; a returned item's exist.
  const system = await ledger.accountsFor(before.organization_id, before.currency);
  return withTransaction(db, async (tx) => {
    await lockPeople(tx, [before.person_id]);
    const item = await owedItem(tx, input.id);
    if (!item) throw await notOwed(tx, input.id);
    const repaid: ReturnRepaid = { ...item, reference, repaid_at: input.now.toISOString() };
    const inserted =
      await sql`insert into returns_repaid (item_id, kind, person_id, organization_id, currency,
        amount_minor, reference, repaid_at)
      values (${item.id}::uuid, ${item.kind}, ${item.person_id}::uuid, ${item.organization_id}::uuid,
        ${item.currency}, ${item.amount_minor}, ${reference}, ${repaid.repaid_at}::timestamptz)
      on conflict (item_id) do nothing`.execute(tx);
    if (Number(inserted.numAffectedRows ?? 0) !== 1) throw alreadyRepaid(item.id);
    await postMovements(tx, [
      returnRepaid({
        item: item.kind === 'PAYOUT' ? { paycheckId: item.id } : { transferId: item.id },
        amountMinor: item.amount_minor,
        system,
        currency: item.currency,
        reference,
        at: input.now,
      }),
    ]);
    return repaid;
  });
}

function alreadyRepaid(id: string): AppError {
  return new AppError('INVALID_RESOURCE_STATE', { detail: `${id} was recorded repaid already.` });
}

/** Why an id names no item owed: recorded repaid already, or nothing returned to RETURNS_PAYABLE has it. */
async function notOwed(runner: Db | Tx, id: string): Promise<AppError> {
  const { rows } = await sql<{ repaid_at: Date | string }>`select repaid_at from returns_repaid
    where item_id = ${id}::uuid`.execute(runner);
  if (rows[0]) return alreadyRepaid(id);
  return new AppError('RECORD_NOT_FOUND', {
    detail: `Nothing owed back has id ${id}: it names no returned payout's paycheck or returned advance.`,
  });
}
