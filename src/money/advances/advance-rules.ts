import { type Jurisdiction, rulesOfKind } from '../../compliance/jurisdiction.ts';
import type { OrganizationPolicy } from '../../operator/organization-policy.ts';

export type Schedule = 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';

/**
 * The fee for this destination type and schedule; null when the pair is not offered. The employer's schedule,
 * except where the person's state requires a free option (FREE_OPTION_REQUIRED) and the employer offers none: then
 * the state wins, and a next-business-day transfer to a bank account costs 0 and is offered, since every rail pays
 * bank accounts. Preview, the transfer's fee and the ledger all take the fee from here. `payable`: the kinds of
 * account the configured rails pay (all when not given), since a free card transfer no rail can pay is no option.
 */
export function feeFor(
  policy: OrganizationPolicy,
  destinationType: string,
  schedule: Schedule,
  jurisdiction?: Jurisdiction,
  payable?: readonly string[],
): number | null {
  if (
    destinationType === 'DEPOSITORY' &&
    schedule === 'NEXT_BUSINESS_DAY' &&
    stateAddsFreeOption(policy, jurisdiction, payable)
  )
    return 0;
  const instant = schedule === 'WITHIN_THIRTY_MINUTES';
  if (destinationType === 'CARD') return instant ? policy.feeCardInstantMinor : policy.feeCardNextDayMinor;
  if (destinationType === 'DEPOSITORY')
    return instant ? policy.feeBankInstantMinor : policy.feeBankNextDayMinor;
  return null;
}

/** The four fees of an employer's schedule: all that `offersFreeOption` reads (an account's capabilities have them too). */
export type FeeSchedule = Pick<
  OrganizationPolicy,
  'feeCardInstantMinor' | 'feeCardNextDayMinor' | 'feeBankInstantMinor' | 'feeBankNextDayMinor'
>;

/** What the configured rails pay: the kinds of account, and those paid within thirty minutes (every one when absent). */
export interface RailReach {
  payable?: readonly string[] | undefined;
  instant?: readonly string[] | undefined;
}

/**
 * The employer's fees with each pair no configured rail pays made not offered (null): an advance on such a pair is
 * refused, an account's capabilities leave it out, and it is no free option.
 */
export function feesWithinReach<T extends FeeSchedule>(fees: T, reach: RailReach): T {
  const pays = (kind: string) => reach.payable?.includes(kind) ?? true;
  const atOnce = (kind: string) => pays(kind) && (reach.instant?.includes(kind) ?? true);
  return {
    ...fees,
    feeCardInstantMinor: atOnce('CARD') ? fees.feeCardInstantMinor : null,
    feeCardNextDayMinor: pays('CARD') ? fees.feeCardNextDayMinor : null,
    feeBankInstantMinor: atOnce('DEPOSITORY') ? fees.feeBankInstantMinor : null,
    feeBankNextDayMinor: pays('DEPOSITORY') ? fees.feeBankNextDayMinor : null,
  };
}

/**
 * The person's state requires a free option and the employer's schedule has none a rail pays: then a
 * next-business-day transfer to a bank account is free (feeFor), and an account's capabilities say so.
 */
export function stateAddsFreeOption(
  policy: FeeSchedule,
  jurisdiction: Jurisdiction | undefined,
  payable?: readonly string[],
): boolean {
  return rulesOfKind(jurisdiction, 'FREE_OPTION_REQUIRED').length > 0 && !offersFreeOption(policy, payable);
}

/** Some pair of the employer's schedule that a rail pays costs nothing. */
export function offersFreeOption(policy: FeeSchedule, payable?: readonly string[]): boolean {
  const pays = (kind: string) => payable?.includes(kind) ?? true;
  return [
    ...(pays('CARD') ? [policy.feeCardInstantMinor, policy.feeCardNextDayMinor] : []),
    ...(pays('DEPOSITORY') ? [policy.feeBankInstantMinor, policy.feeBankNextDayMinor] : []),
  ].includes(0);
}

export interface FundingShare {
  paycheckId: string;
  amountMinor: number;
}

/**
 * First in, first out: the oldest paycheck's untaken share funds an advance first, and an advance may span two or
 * more paychecks. Returns undefined when the paychecks cannot cover the amount.
 */
export function fundFifo(
  paychecks: readonly { id: string; remaining_minor: number }[],
  amountMinor: number,
): FundingShare[] | undefined {
  const shares: FundingShare[] = [];
  let left = amountMinor;
  for (const paycheck of paychecks) {
    if (left === 0) break;
    const take = Math.min(left, paycheck.remaining_minor);
    if (take > 0) shares.push({ paycheckId: paycheck.id, amountMinor: take });
    left -= take;
  }
  return left === 0 ? shares : undefined;
}
