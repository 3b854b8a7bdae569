import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';
import type { SystemLedger } from '../ledger/ledger-accounts.ts';
import type { ClaimedMessage, OutboxHandler } from '../outbox/outbox-dispatcher.ts';
import type { OutboxMessage } from '../outbox/outbox-message.ts';
import { type PaymentRail, type RailInstruction, RailRejection } from '../rails/payment-rail.ts';
import { failPaycheckPayouts, resolveAdvances } from './settlement.ts';

/** An instruction to the rail as written with the money change; the outbox row's id becomes its instructionId. */
export type RailPayment = Omit<RailInstruction, 'instructionId'>;

/** The outbox message that tells the rail to pay, sent once the transaction that wrote it commits. */
export function railPaymentMessage(payment: RailPayment): OutboxMessage {
  return {
    id: randomUUID(),
    topic: 'rail.payment',
    subjectId: payment.reference,
    payload: {
      ...payment,
      submittedAt: payment.submittedAt.toISOString(),
      notBefore: payment.notBefore?.toISOString(),
    },
    createdAt: payment.submittedAt,
    dueAt: payment.submittedAt,
  };
}

export function instructionOf(message: Pick<ClaimedMessage, 'id' | 'payload'>): RailInstruction {
  const payload = message.payload as unknown as Omit<RailInstruction, 'submittedAt' | 'notBefore'> & {
    submittedAt: string;
    notBefore?: string;
  };
  const { notBefore, submittedAt, ...rest } = payload;
  return {
    ...rest,
    instructionId: message.id,
    submittedAt: new Date(submittedAt),
    ...(notBefore ? { notBefore: new Date(notBefore) } : {}),
  };
}

/**
 * Sends rail instructions from the outbox. The rail's acceptance is recorded on the transfer (or the paycheck):
 * its reference, and when to ask for the outcome. A rail that refuses for good fails the advance (the money goes
 * back to the earnings balance) or returns the paycheck's payout (owed to the worker again).
 */
export function railPaymentHandler(rail: PaymentRail, ledger: SystemLedger): OutboxHandler {
  return {
    topic: 'rail.payment',
    async send(message) {
      const acceptance = await rail.submit(instructionOf(message));
      return {
        railReference: acceptance.railReference,
        expectedSettleAt: acceptance.expectedSettleAt.toISOString(),
      };
    },
    async sent(tx, answered, at) {
      await recordAcceptances(
        tx,
        at,
        answered.map(({ message, result }) => ({
          instruction: instructionOf(message),
          railReference: String(result.railReference),
          expectedSettleAt: String(result.expectedSettleAt),
        })),
      );
    },
    refusalOf: (error) => (error instanceof RailRejection ? error.reason : undefined),
    async refused(tx, refusals, at) {
      const refused = refusals.map(({ message, reason }) => ({
        instruction: instructionOf(message),
        reason,
      }));
      const advances = refused.filter((r) => r.instruction.purpose === 'ADVANCE');
      const payouts = refused.filter((r) => r.instruction.purpose === 'PAYCHECK');
      if (advances.length > 0)
        await resolveAdvances(
          tx,
          ledger,
          advances.map((r) => ({ reference: r.instruction.reference, status: 'FAILED', reason: r.reason })),
          at,
        );
      if (payouts.length > 0)
        await failPaycheckPayouts(
          tx,
          ledger,
          payouts.map((r) => ({ reference: r.instruction.reference, reason: r.reason })),
          at,
        );
    },
  };
}

/**
 * Each payment's rail reference, when to ask for its outcome and when the rail took it, on its transfer or paycheck:
 * two statements. None of these columns is indexed, so a transfer's row is updated in place (migration 0011).
 *
 * Each row is found by primary key (`id = any`). The status is compared with IS NOT DISTINCT FROM, the same as `=`
 * for a column that is never null, because `=` would imply the predicate of the partial indexes of every pending
 * transfer (or paycheck in transit): a plan made while those looked small scanned all of one on every round of the
 * outbox, and they grow with the day's advances.
 */
async function recordAcceptances(
  tx: Tx,
  at: Date,
  accepted: readonly { instruction: RailInstruction; railReference: string; expectedSettleAt: string }[],
): Promise<void> {
  const advances = accepted.filter((a) => a.instruction.purpose === 'ADVANCE');
  const payouts = accepted.filter((a) => a.instruction.purpose === 'PAYCHECK');
  const ids = (rows: typeof accepted) => sql`${rows.map((r) => r.instruction.reference)}::uuid[]`;
  const table = (rows: typeof accepted) =>
    sql`unnest(${rows.map((r) => r.instruction.reference)}::uuid[], ${rows.map((r) => r.railReference)}::text[],
      ${rows.map((r) => r.expectedSettleAt)}::timestamptz[]) as a(id, rail_reference, settle_after)`;
  if (advances.length > 0)
    await sql`update transfers t set rail_reference = a.rail_reference, settle_after = a.settle_after,
        rail_accepted_at = ${at.toISOString()}::timestamptz
      from ${table(advances)} where t.id = any(${ids(advances)}) and t.id = a.id
        and t.status is not distinct from 'PENDING'`.execute(tx);
  if (payouts.length > 0)
    await sql`update paychecks p set payout_rail_reference = a.rail_reference, payout_settle_after = a.settle_after,
        payout_rail_accepted_at = ${at.toISOString()}::timestamptz
      from ${table(payouts)} where p.id = any(${ids(payouts)}) and p.id = a.id
        and p.status is not distinct from 'IN_TRANSIT'`.execute(tx);
}
