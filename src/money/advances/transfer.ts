import type { Selectable } from 'kysely';
import type { FundingSourcesTable, TransfersTable } from '../../db/schema.ts';
import { type Money, money } from '../../domain/money.ts';

/** A transfer as the money core reads and writes it (its columns, from the schema's types). */
export type TransferRow = Pick<
  Selectable<TransfersTable>,
  | 'id'
  | 'person_id'
  | 'origin_account_id'
  | 'origin_paycheck_id'
  | 'destination_account_id'
  | 'amount_minor'
  | 'fee_minor'
  | 'currency'
  | 'schedule'
  | 'status'
  | 'failure_reason'
  | 'rail_reference'
  | 'settle_after'
  | 'submitted_at'
  | 'resolved_at'
>;

/** Which paycheck funds how much of a transfer: estimated when it is made, final when it settles. */
export type FundingSourceRow = Pick<
  Selectable<FundingSourcesTable>,
  'transfer_id' | 'paycheck_id' | 'stage' | 'amount_minor' | 'currency'
>;

/** One of a person's accounts, as an advance's destination. */
export interface PersonAccountRow {
  id: string;
  account_type: string;
}

/** What decides whether a person may take advances at all. */
export interface PersonStanding {
  disallow_reason: string | null;
  state_of_residence: string | null;
  /** The person's first open overpayment of their worst status (people.overpayment_status); null when none. */
  overpayment?: OpenOverpayment | null;
}

/** An overpayment not yet recovered or written off, as an advance's checks name it. */
export interface OpenOverpayment {
  id: string;
  status: 'RESOLUTION_REQUIRED' | 'RECOVERING';
  remainingMinor: number;
  currency: string;
}

/** A paycheck of a job that still has an accessible share not yet taken. */
export interface FundablePaycheck {
  id: string;
  remaining_minor: number;
  /** What advances not FAILED took from it: its pay period's advanced amount so far. */
  debited_minor: number;
  /** Advances not FAILED with a fee that it funds. */
  fee_bearing_advances: number;
  /** When its net pay is expected: the payday that repays what it funds. */
  deposit_expected_at: string;
}

/** Where a transfer's money comes from: an earnings balance (an advance) or a paycheck (payday's remainder). */
export type TransferOrigin =
  | { kind: 'account'; accountId: string }
  | { kind: 'paycheck'; paycheckId: string };

/** A transfer as the money core and the routes speak of it; its row is how the database keeps it. */
export interface Transfer {
  id: string;
  personId: string;
  origin: TransferOrigin;
  /** Null once the account it went to was deleted. */
  destinationAccountId: string | null;
  /** What the worker asked for; the fee comes out of it. */
  amount: Money;
  fee: Money;
  schedule: 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';
  status: 'PENDING' | 'SETTLED' | 'FAILED';
  /** The rail's reason, when FAILED. */
  failureReason: string | null;
  submittedAt: Date;
  resolvedAt: Date | null;
}

/** Which paycheck funds how much of a transfer: estimated when it is made, final when it settles. */
export interface FundingSource {
  transferId: string;
  paycheckId: string;
  stage: 'ESTIMATED' | 'FINAL';
  amount: Money;
}

export function transferOf(row: TransferRow): Transfer {
  const currency = row.currency.trim();
  return {
    id: row.id,
    personId: row.person_id,
    origin: row.origin_paycheck_id
      ? { kind: 'paycheck', paycheckId: row.origin_paycheck_id }
      : { kind: 'account', accountId: row.origin_account_id ?? '' },
    destinationAccountId: row.destination_account_id,
    amount: money(row.amount_minor, currency),
    fee: money(row.fee_minor, currency),
    schedule: row.schedule as Transfer['schedule'],
    status: row.status as Transfer['status'],
    failureReason: row.failure_reason,
    submittedAt: new Date(row.submitted_at),
    resolvedAt: row.resolved_at === null ? null : new Date(row.resolved_at),
  };
}

export function fundingSourceOf(row: FundingSourceRow): FundingSource {
  return {
    transferId: row.transfer_id,
    paycheckId: row.paycheck_id,
    stage: row.stage as FundingSource['stage'],
    amount: money(row.amount_minor, row.currency),
  };
}
