/**
 * The port through which money leaves for a worker's bank account or card. Adapters (the sandbox simulator, a
 * real ACH or push-to-card provider) implement it; the ledger never knows which one is behind it.
 */
export type RailSchedule = 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';
export type RailPurpose = 'ADVANCE' | 'PAYCHECK';

export interface RailInstruction {
  /** Our id (transfer id or paycheck id); the rail echoes it. */
  reference: string;
  purpose: RailPurpose;
  /** What the worker asked for (advances) or the payout (paychecks). */
  requestedAmountMinor: number;
  /** What lands at the destination (requested - fee). */
  deliveredAmountMinor: number;
  currency: string;
  schedule: RailSchedule;
  destinationKind: 'DEPOSITORY' | 'CARD';
  submittedAt: Date;
  /** Paychecks: not delivered before the expected deposit instant. */
  notBefore?: Date;
}

export interface RailSubmission {
  railReference: string;
  settleAfter: Date;
}

export type RailOutcome = { status: 'SETTLED' } | { status: 'FAILED'; reason: string };

export interface PaymentRail {
  readonly name: string;
  /** Synchronous: the sandbox needs no I/O. */
  submit(instruction: RailInstruction): RailSubmission;
  /** Asked once `settleAfter` has passed. */
  outcome(instruction: RailInstruction): RailOutcome;
}
