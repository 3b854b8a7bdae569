import type { SystemAccounts } from './ledger-accounts.ts';
import type { EntryLine, Movement } from './posting.ts';

/**
 * Every ledger movement the money core makes, one function per kind: the only code that composes entries. An
 * auditor reads here what each business event posts; posting.ts checks that each balances and writes it.
 *
 * Accounts, and the sign of their balance (credits − debits):
 * - EARNINGS_BALANCE (a worker's): what the worker may take now;
 * - PAYCHECK_CLEARING (a paycheck's): net pay not yet made accessible;
 * - EMPLOYER_PAYROLL_CLEARING: net pay the employer owes (negative);
 * - EXTERNAL_BANK / EXTERNAL_CARD: money on its way out through a rail, until the rail settles it;
 * - PROVIDER_FUNDING: the provider's money paid out (negative) and funded by employers;
 * - FEE_REVENUE: fees earned;
 * - RETURNS_PAYABLE: money that came back from a worker's bank after their paycheck was paid, owed to them again
 *   until the operator records it paid;
 * - OVERPAYMENT_RECEIVABLE: advances above a closed paycheck's net pay, owed back from later paychecks of the job
 *   (negative: an asset);
 * - OVERPAYMENT_WRITE_OFF: what of an overpayment was given up (negative: an expense).
 */

type Currency = string;

function line(
  ledgerAccountId: string,
  direction: EntryLine['direction'],
  amountMinor: number,
  currency: Currency,
): EntryLine {
  return { ledgerAccountId, direction, amountMinor, currency };
}

/** A line whose amount may be below zero (a correction): the opposite direction, for the amount's size. */
function signedLine(
  ledgerAccountId: string,
  direction: EntryLine['direction'],
  amountMinor: number,
  currency: Currency,
): EntryLine {
  if (amountMinor >= 0) return line(ledgerAccountId, direction, amountMinor, currency);
  return line(ledgerAccountId, direction === 'DEBIT' ? 'CREDIT' : 'DEBIT', -amountMinor, currency);
}

function externalOf(system: SystemAccounts, destination: 'DEPOSITORY' | 'CARD'): string {
  return destination === 'CARD' ? system.EXTERNAL_CARD : system.EXTERNAL_BANK;
}

/**
 * An employer's earnings raise a paycheck's net pay: the employer owes it to the paycheck. A correction (a negative
 * delta) lowers it: the employer owes that much less.
 */
export function earningsAccrued(input: {
  paycheckId: string;
  employerClearing: string;
  paycheckClearing: string;
  netDeltaMinor: number;
  currency: Currency;
  at: Date;
}): Movement {
  const { employerClearing, paycheckClearing, netDeltaMinor: amount, currency } = input;
  return {
    kind: amount < 0 ? 'EARNINGS_CORRECTED' : 'EARNINGS_ACCRUED',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      signedLine(employerClearing, 'DEBIT', amount, currency),
      signedLine(paycheckClearing, 'CREDIT', amount, currency),
    ],
  };
}

/**
 * A correction lowered an open paycheck's accessible share below what it had made accessible: the part not taken yet
 * goes back from the earnings balance to the paycheck (never more than the balance holds: what advances took stays
 * taken, and becomes an overpayment if the paycheck closes short).
 */
export function earningsWithdrawn(input: {
  paycheckId: string;
  paycheckClearing: string;
  earningsBalance: string;
  amountMinor: number;
  currency: Currency;
  at: Date;
}): Movement {
  const { amountMinor: amount, currency } = input;
  return {
    kind: 'EARNINGS_WITHDRAWN',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      line(input.earningsBalance, 'DEBIT', amount, currency),
      line(input.paycheckClearing, 'CREDIT', amount, currency),
    ],
  };
}

/** The accessible share of a paycheck moves into the worker's earnings balance (a paycheck-origin transfer). */
export function earningsMadeAccessible(input: {
  transferId: string;
  paycheckId: string;
  paycheckClearing: string;
  earningsBalance: string;
  amountMinor: number;
  currency: Currency;
  at: Date;
}): Movement {
  const { amountMinor: amount, currency } = input;
  return {
    kind: 'EARNINGS_MADE_ACCESSIBLE',
    transferId: input.transferId,
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      line(input.paycheckClearing, 'DEBIT', amount, currency),
      line(input.earningsBalance, 'CREDIT', amount, currency),
    ],
  };
}

export interface AdvanceFigures {
  transferId: string;
  earningsBalance: string;
  destination: 'DEPOSITORY' | 'CARD';
  amountMinor: number;
  feeMinor: number;
  currency: Currency;
}

/** A worker's advance leaves the earnings balance: the fee is earned, the rest is on its way out. */
export function advanceSubmitted(advance: AdvanceFigures, system: SystemAccounts, at: Date): Movement {
  const { amountMinor, feeMinor, currency } = advance;
  return {
    kind: 'ADVANCE_SUBMITTED',
    transferId: advance.transferId,
    postedAt: at,
    lines: [
      line(advance.earningsBalance, 'DEBIT', amountMinor, currency),
      line(externalOf(system, advance.destination), 'CREDIT', amountMinor - feeMinor, currency),
      line(system.FEE_REVENUE, 'CREDIT', feeMinor, currency),
    ],
  };
}

/** The rail delivered the advance: the provider's money paid for it. */
export function advanceSettled(advance: AdvanceFigures, system: SystemAccounts, at: Date): Movement {
  const delivered = advance.amountMinor - advance.feeMinor;
  return {
    kind: 'ADVANCE_SETTLED',
    transferId: advance.transferId,
    postedAt: at,
    lines: [
      line(externalOf(system, advance.destination), 'DEBIT', delivered, advance.currency),
      line(system.PROVIDER_FUNDING, 'CREDIT', delivered, advance.currency),
    ],
  };
}

/** The rail never delivered the advance: amount and fee go back to the earnings balance. */
export function advanceFailed(
  advance: AdvanceFigures,
  system: SystemAccounts,
  reason: string,
  at: Date,
): Movement {
  const { amountMinor, feeMinor, currency } = advance;
  return {
    kind: 'ADVANCE_FAILED',
    transferId: advance.transferId,
    postedAt: at,
    memo: reason,
    lines: [
      line(externalOf(system, advance.destination), 'DEBIT', amountMinor - feeMinor, currency),
      line(system.FEE_REVENUE, 'DEBIT', feeMinor, currency),
      line(advance.earningsBalance, 'CREDIT', amountMinor, currency),
    ],
  };
}

/**
 * A settled advance came back (an ACH return): the provider has its money again and the fee is refunded. The
 * worker's share goes back to the earnings balance for the part funded by paychecks still open, and to
 * RETURNS_PAYABLE for the part whose paychecks were paid out already.
 */
export function advanceReturned(
  advance: AdvanceFigures,
  system: SystemAccounts,
  split: { toBalanceMinor: number; toPayableMinor: number },
  reason: string,
  at: Date,
): Movement {
  const { amountMinor, feeMinor, currency } = advance;
  if (split.toBalanceMinor + split.toPayableMinor !== amountMinor)
    throw new Error(`advance ${advance.transferId}: a return must give back its whole amount`);
  return {
    kind: 'ADVANCE_RETURNED',
    transferId: advance.transferId,
    postedAt: at,
    memo: reason,
    lines: [
      line(system.PROVIDER_FUNDING, 'DEBIT', amountMinor - feeMinor, currency),
      line(system.FEE_REVENUE, 'DEBIT', feeMinor, currency),
      line(advance.earningsBalance, 'CREDIT', split.toBalanceMinor, currency),
      line(system.RETURNS_PAYABLE, 'CREDIT', split.toPayableMinor, currency),
    ],
  };
}

/** What either payday of a paycheck starts from. */
interface PaydayOf {
  paycheckId: string;
  earningsBalance: string | undefined;
  paycheckClearing: string;
  /** What was still accessible of the period: it leaves the earnings balance, which returns to zero. */
  untakenMinor: number;
  system: SystemAccounts;
  currency: Currency;
  at: Date;
}

/** Both paydays begin alike: what is still accessible leaves the earnings balance for the paycheck's clearing. */
function untakenLeavesBalance(input: PaydayOf): EntryLine[] {
  return [
    line(input.earningsBalance ?? '', 'DEBIT', input.untakenMinor, input.currency),
    line(input.paycheckClearing, 'CREDIT', input.untakenMinor, input.currency),
  ];
}

/**
 * Payday for one paycheck: what is still accessible leaves the earnings balance (which returns to zero for the
 * period), the employer funds net pay, and the remainder (net − advances) goes out to the worker's account.
 */
export function payday(
  input: PaydayOf & { payoutMinor: number; netMinor: number; destination: 'DEPOSITORY' | 'CARD' },
): Movement {
  const { system, currency, paycheckClearing } = input;
  return {
    kind: 'PAYDAY',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      ...untakenLeavesBalance(input),
      line(paycheckClearing, 'DEBIT', input.payoutMinor, currency),
      line(externalOf(system, input.destination), 'CREDIT', input.payoutMinor, currency),
      signedLine(system.PROVIDER_FUNDING, 'DEBIT', input.netMinor, currency),
      signedLine(system.EMPLOYER_PAYROLL_CLEARING, 'CREDIT', input.netMinor, currency),
    ],
  };
}

/**
 * Payday for one paycheck of an employer that runs payroll itself (`payday_payout` EMPLOYER): what is still
 * accessible leaves the earnings balance, as on any payday; the employer pays the worker the remainder itself, which
 * settles that much of the net pay it owes; and it remits the deductions (what advances took, up to net pay, and any
 * overpayment installment: the remittance report's line) to the provider. Nothing goes out through a rail. The books
 * end where a provider's payday ends once its payout has been deposited: the remainder left the paycheck for the
 * worker, the provider holds the deductions, and the employer owes nothing more for the paycheck. A net pay below
 * zero (a correction of a paid period) remits below zero: the employer is owed it back, as on a provider's payday,
 * and the overpayment recorded with it recovers it from the worker's later paychecks.
 */
export function employerPayday(
  input: PaydayOf & { paidByEmployerMinor: number; remittedMinor: number },
): Movement {
  const { system, currency, paycheckClearing } = input;
  return {
    kind: 'EMPLOYER_PAYDAY',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      ...untakenLeavesBalance(input),
      line(paycheckClearing, 'DEBIT', input.paidByEmployerMinor, currency),
      line(system.EMPLOYER_PAYROLL_CLEARING, 'CREDIT', input.paidByEmployerMinor, currency),
      signedLine(system.PROVIDER_FUNDING, 'DEBIT', input.remittedMinor, currency),
      signedLine(system.EMPLOYER_PAYROLL_CLEARING, 'CREDIT', input.remittedMinor, currency),
    ],
  };
}

/**
 * A paycheck closed with advances above its net pay: its payout is zero, and the difference is owed back by later
 * paychecks of the job (the paycheck's clearing account, short by that much, is made whole by the receivable).
 */
export function overpaymentRecorded(input: {
  paycheckId: string;
  paycheckClearing: string;
  amountMinor: number;
  system: SystemAccounts;
  currency: Currency;
  at: Date;
}): Movement {
  const { amountMinor: amount, currency } = input;
  return {
    kind: 'OVERPAYMENT_RECORDED',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      line(input.system.OVERPAYMENT_RECEIVABLE, 'DEBIT', amount, currency),
      line(input.paycheckClearing, 'CREDIT', amount, currency),
    ],
  };
}

/**
 * An installment of an overpayment recovered from a later paycheck's payout, on its payday: from that paycheck only,
 * never from a bank account or card, with no fee and no interest.
 */
export function overpaymentRecovered(input: {
  paycheckId: string;
  paycheckClearing: string;
  overpaymentId: string;
  amountMinor: number;
  system: SystemAccounts;
  currency: Currency;
  at: Date;
}): Movement {
  const { amountMinor: amount, currency } = input;
  return {
    kind: 'OVERPAYMENT_RECOVERED',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    memo: input.overpaymentId,
    lines: [
      line(input.paycheckClearing, 'DEBIT', amount, currency),
      line(input.system.OVERPAYMENT_RECEIVABLE, 'CREDIT', amount, currency),
    ],
  };
}

/** What is left of an overpayment is given up: an expense of the provider; nothing is ever asked of the worker. */
export function overpaymentWrittenOff(input: {
  paycheckId: string;
  overpaymentId: string;
  amountMinor: number;
  system: SystemAccounts;
  currency: Currency;
  at: Date;
}): Movement {
  const { amountMinor: amount, currency, system } = input;
  return {
    kind: 'OVERPAYMENT_WRITTEN_OFF',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    memo: input.overpaymentId,
    lines: [
      line(system.OVERPAYMENT_WRITE_OFF, 'DEBIT', amount, currency),
      line(system.OVERPAYMENT_RECEIVABLE, 'CREDIT', amount, currency),
    ],
  };
}

/** The rail delivered a paycheck's payout. */
export function paycheckDeposited(input: {
  paycheckId: string;
  payoutMinor: number;
  destination: 'DEPOSITORY' | 'CARD';
  system: SystemAccounts;
  currency: Currency;
  at: Date;
}): Movement {
  const { system, payoutMinor, currency } = input;
  return {
    kind: 'PAYCHECK_DEPOSITED',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    lines: [
      line(externalOf(system, input.destination), 'DEBIT', payoutMinor, currency),
      line(system.PROVIDER_FUNDING, 'CREDIT', payoutMinor, currency),
    ],
  };
}

/**
 * A paycheck's payout came back from the worker's bank: the money is owed to the worker again. Before the books
 * counted it delivered it leaves the rail's account; after, the provider's funding has it back.
 */
export function paycheckReturned(input: {
  paycheckId: string;
  payoutMinor: number;
  destination: 'DEPOSITORY' | 'CARD';
  deliveredBefore: boolean;
  system: SystemAccounts;
  currency: Currency;
  reason: string;
  at: Date;
}): Movement {
  const { system, payoutMinor, currency } = input;
  const from = input.deliveredBefore ? system.PROVIDER_FUNDING : externalOf(system, input.destination);
  return {
    kind: 'PAYCHECK_RETURNED',
    paycheckId: input.paycheckId,
    postedAt: input.at,
    memo: input.reason,
    lines: [
      line(from, 'DEBIT', payoutMinor, currency),
      line(system.RETURNS_PAYABLE, 'CREDIT', payoutMinor, currency),
    ],
  };
}

/**
 * What was owed back to a worker (a returned payout or advance) was paid to them by the operator outside the rails:
 * it leaves RETURNS_PAYABLE, paid from the provider's funding as any payment to a worker is. `item` is the paycheck
 * (a payout) or the transfer (an advance) the money came back for.
 */
export function returnRepaid(input: {
  item: { paycheckId: string } | { transferId: string };
  amountMinor: number;
  system: SystemAccounts;
  currency: Currency;
  reference: string;
  at: Date;
}): Movement {
  const { system, amountMinor, currency } = input;
  return {
    kind: 'RETURN_REPAID',
    ...input.item,
    postedAt: input.at,
    memo: input.reference,
    lines: [
      line(system.RETURNS_PAYABLE, 'DEBIT', amountMinor, currency),
      line(system.PROVIDER_FUNDING, 'CREDIT', amountMinor, currency),
    ],
  };
}
