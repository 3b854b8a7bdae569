/**
 * The port through which money leaves for a worker's bank account or card. Adapters (the sandbox simulator, ACH
 * through Nacha files, a push-to-card processor) implement it; the ledger never knows which one is behind it.
 *
 * The port is asynchronous and is called only after the change that caused the payment has committed: the money
 * core writes an instruction to the outbox in its transaction, and the outbox's dispatcher submits it later, at
 * least once. `instructionId` (the outbox row's id) is the idempotency key: an adapter that is given the same id
 * twice pays once and answers the same acceptance.
 */
export type RailSchedule = 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';
export type RailPurpose = 'ADVANCE' | 'PAYCHECK';
export type RailDestinationKind = 'DEPOSITORY' | 'CARD';

export interface RailInstruction {
  /** The outbox row's id: the rail's idempotency key. */
  instructionId: string;
  /** Our id for the payment (transfer id or paycheck id); outcomes name it. */
  reference: string;
  purpose: RailPurpose;
  /** What the worker asked for (advances) or the payout (paychecks). */
  requestedAmountMinor: number;
  /** What lands at the destination (requested − fee). */
  deliveredAmountMinor: number;
  currency: string;
  schedule: RailSchedule;
  /** The person's account (bank account or card) the money goes to. */
  destinationAccountId: string;
  destinationKind: RailDestinationKind;
  /** When the money core decided the payment (the transaction's instant), not when it is sent. */
  submittedAt: Date;
  /** Paychecks: not delivered before the expected deposit instant. */
  notBefore?: Date;
}

/** What a rail answers when it takes an instruction. */
export interface RailAcceptance {
  /** The rail's own id for the payment (a trace number, a processor's id). */
  railReference: string;
  /** When the rail expects to know the outcome; the settlement job asks for outcomes from then on. */
  expectedSettleAt: Date;
}

/** An instruction the rail accepted and whose outcome is not yet known to the books. */
export interface PendingPayment {
  reference: string;
  purpose: RailPurpose;
  railReference: string;
  requestedAmountMinor: number;
  expectedSettleAt: Date;
}

/**
 * What happened to a payment. FAILED: it never reached the destination. RETURNED: it came back from the receiving
 * bank (an ACH return), before or after the books counted it settled; ACH returns reach the money core from the rail
 * adapter that reads them (ach-rail.ts), the sandbox's from `returns`; `outcomes` answers SETTLED or FAILED. `reason` is the rail's code (R01,
 * DESTINATION_REJECTED, …).
 */
export type RailOutcome =
  | { reference: string; status: 'SETTLED' }
  | { reference: string; status: 'FAILED'; reason: string }
  | { reference: string; status: 'RETURNED'; reason: string };

/** Refused for good (a malformed or unpayable instruction): retrying will not help, the payment fails. */
export class RailRejection extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = 'RailRejection';
    this.reason = reason;
  }
}

export interface PaymentRail {
  readonly name: string;
  /** The kinds of account it pays; every kind when absent. Advances to another kind are refused before any write. */
  readonly destinations?: readonly RailDestinationKind[];
  /**
   * The kinds it pays within thirty minutes (WITHIN_THIRTY_MINUTES); every kind it pays when absent. An instant
   * advance to another kind is refused before any write, and its schedule is not offered in an account's capabilities.
   */
  readonly instantDestinations?: readonly RailDestinationKind[];
  /**
   * Takes an instruction. Resolves once the rail has durably accepted it; rejects with RailRejection when it never
   * will, or with any other error when it may later (the dispatcher retries with backoff).
   */
  submit(instruction: RailInstruction): Promise<RailAcceptance>;
  /** The outcomes known by `now` of the payments given (those without one are left out). */
  outcomes(pending: readonly PendingPayment[], now: Date): Promise<RailOutcome[]>;
  /**
   * The returns known by `now` of advances the books count settled, for a rail that reports them this way (the
   * sandbox's return amounts; ACH returns come in files instead). `expectedSettleAt` is when each settled.
   */
  returns?(settled: readonly PendingPayment[], now: Date): Promise<RailOutcome[]>;
}
