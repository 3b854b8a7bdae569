import type { OrganizationPolicy } from '../../operator/organization-policy.ts';

export type Schedule = 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';

/** The employer's fee for this destination type and schedule; null when the pair is not offered. */
export function feeFor(
  policy: OrganizationPolicy,
  destinationType: string,
  schedule: Schedule,
): number | null {
  const instant = schedule === 'WITHIN_THIRTY_MINUTES';
  if (destinationType === 'CARD') return instant ? policy.feeCardInstantMinor : policy.feeCardNextDayMinor;
  if (destinationType === 'DEPOSITORY')
    return instant ? policy.feeBankInstantMinor : policy.feeBankNextDayMinor;
  return null;
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
