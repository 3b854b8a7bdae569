import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';
import type { SystemLedger } from '../ledger/ledger-accounts.ts';
import type { ClaimedMessage, OutboxHandler } from '../outbox/outbox-dispatcher.ts';
import type { OutboxMessage } from '../outbox/outbox-message.ts';
import {
  type PaymentRail,
  type RailAcceptance,
  type RailInstruction,
  RailRejection,
} from '../rails/payment-rail.ts';
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
    async sent(tx, message, result) {
      const instruction = instructionOf(message);
      const acceptance: RailAcceptance = {
        railReference: String(result.railReference),
        expectedSettleAt: new Date(String(result.expectedSettleAt)),
      };
      await recordAcceptance(tx, instruction, acceptance);
    },
    refusalOf: (error) => (error instanceof RailRejection ? error.reason : undefined),
    async refused(tx, message, reason, at) {
      const instruction = instructionOf(message);
      if (instruction.purpose === 'ADVANCE')
        await resolveAdvances(
          tx,
          ledger,
          [{ reference: instruction.reference, status: 'FAILED', reason }],
          at,
        );
      else await failPaycheckPayouts(tx, ledger, [{ reference: instruction.reference, reason }], at);
    },
  };
}

async function recordAcceptance(
  tx: Tx,
  instruction: RailInstruction,
  acceptance: RailAcceptance,
): Promise<void> {
  const settleAfter = acceptance.expectedSettleAt.toISOString();
  if (instruction.purpose === 'ADVANCE')
    await sql`update transfers set rail_reference = ${acceptance.railReference}, settle_after = ${settleAfter}::timestamptz
      where id = ${instruction.reference}::uuid and status = 'PENDING'`.execute(tx);
  else
    await sql`update paychecks set payout_rail_reference = ${acceptance.railReference},
        payout_settle_after = ${settleAfter}::timestamptz
      where id = ${instruction.reference}::uuid and status = 'IN_TRANSIT'`.execute(tx);
}
