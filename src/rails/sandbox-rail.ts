/**
 * A payment rail that moves no money: it settles on a realistic schedule, fails on a few magic amounts and returns
 * one after settling it, so partners can exercise every transfer state in the sandbox.
 */
import { localDateOf, localInstant } from '../domain/calendar.ts';
import { nextBusinessDay } from './business-days.ts';
import type { PaymentRail, RailAcceptance, RailInstruction, RailOutcome } from './payment-rail.ts';

/**
 * Advance amounts (requestedAmountMinor) that the sandbox fails, with the reason it reports. Paychecks never
 * fail: a worker's pay must always arrive, whatever its amount.
 */
export const SANDBOX_FAILURE_AMOUNTS: ReadonlyMap<number, string> = new Map([
  [666, 'DESTINATION_REJECTED'], // $6.66
  [1313, 'ACCOUNT_CLOSED'], // $13.13
  [4040, 'DESTINATION_NOT_FOUND'], // $40.40
]);

/**
 * Advance amounts that the sandbox settles and then returns, as a receiving bank returns an ACH credit, with the
 * return code: the advance is SETTLED first and FAILED with that code the next business day. The partial index of
 * migration 0014 (transfers_sandbox_return_idx) names these amounts, so that finding the settled ones costs nothing.
 */
export const SANDBOX_RETURN_AMOUNTS: ReadonlyMap<number, string> = new Map([
  [505, 'R03'], // $5.05: no account / unable to locate account
]);

const SETTLEMENT_TIME = '09:00';

export interface SandboxRailOptions {
  instantDelayMs?: number;
  timeZone?: string;
}

/** The sandbox rail; `settleAt` tells when it delivers an instruction (the demo history plans with it). */
export interface SandboxRail extends PaymentRail {
  settleAt(instruction: Pick<RailInstruction, 'purpose' | 'schedule' | 'submittedAt' | 'notBefore'>): Date;
  /** When a settled advance of a return amount comes back: 09:00 the business day after it settled. */
  returnAt(settledAt: Date): Date;
}

export function createSandboxRail(options: SandboxRailOptions = {}): SandboxRail {
  const instantDelayMs = options.instantDelayMs ?? 2 * 60_000;
  const timeZone = options.timeZone ?? 'America/New_York';
  // Throws a RangeError on an unknown zone, so a misconfigured rail fails at start-up, not at the first transfer.
  new Intl.DateTimeFormat('en-US', { timeZone });

  function scheduledInstant(instruction: Pick<RailInstruction, 'schedule' | 'submittedAt'>): Date {
    const { submittedAt } = instruction;
    if (instruction.schedule === 'WITHIN_THIRTY_MINUTES')
      return new Date(submittedAt.getTime() + instantDelayMs);
    return localInstant(nextBusinessDay(localDateOf(submittedAt, timeZone)), SETTLEMENT_TIME, timeZone);
  }

  /** When the sandbox delivers an instruction: a pure function of it, so a resend answers the same. */
  function settleAt(
    instruction: Pick<RailInstruction, 'purpose' | 'schedule' | 'submittedAt' | 'notBefore'>,
  ): Date {
    const settleAfter = scheduledInstant(instruction);
    const notBefore = instruction.purpose === 'PAYCHECK' ? instruction.notBefore : undefined;
    return notBefore && notBefore > settleAfter ? notBefore : settleAfter;
  }

  function returnAt(settledAt: Date): Date {
    return localInstant(nextBusinessDay(localDateOf(settledAt, timeZone)), SETTLEMENT_TIME, timeZone);
  }

  return {
    name: 'sandbox',
    settleAt,
    returnAt,
    async submit(instruction: RailInstruction): Promise<RailAcceptance> {
      assertWellFormed(instruction);
      return { railReference: `sandbox-${instruction.reference}`, expectedSettleAt: settleAt(instruction) };
    },
    async outcomes(pending, now): Promise<RailOutcome[]> {
      return pending
        .filter((payment) => payment.railReference.startsWith('sandbox-') && payment.expectedSettleAt <= now)
        .map((payment): RailOutcome => {
          const reason =
            payment.purpose === 'ADVANCE'
              ? SANDBOX_FAILURE_AMOUNTS.get(payment.requestedAmountMinor)
              : undefined;
          return reason
            ? { reference: payment.reference, status: 'FAILED', reason }
            : { reference: payment.reference, status: 'SETTLED' };
        });
    },
    async returns(settled, now): Promise<RailOutcome[]> {
      return settled.flatMap((payment): RailOutcome[] => {
        const reason =
          payment.purpose === 'ADVANCE'
            ? SANDBOX_RETURN_AMOUNTS.get(payment.requestedAmountMinor)
            : undefined;
        if (!reason || !payment.railReference.startsWith('sandbox-')) return [];
        return returnAt(payment.expectedSettleAt) <= now
          ? [{ reference: payment.reference, status: 'RETURNED', reason }]
          : [];
      });
    },
  };
}

/** A malformed instruction is a bug in the caller, never a rail failure: crash rather than report it. */
function assertWellFormed(instruction: RailInstruction): void {
  const { requestedAmountMinor: requested, deliveredAmountMinor: delivered } = instruction;
  if (
    !Number.isSafeInteger(requested) ||
    !Number.isSafeInteger(delivered) ||
    delivered <= 0 ||
    delivered > requested
  ) {
    throw new Error(
      `malformed rail instruction ${instruction.reference}: ${requested} requested, ${delivered} delivered`,
    );
  }
}
