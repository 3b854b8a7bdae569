/** The fee schedule of an organization's policy, in minor units; null means the pair is not offered. */
export interface FeeSchedule {
  currency: string;
  fee_card_instant_minor: number | null;
  fee_card_next_day_minor: number | null;
  fee_bank_instant_minor: number | null;
  fee_bank_next_day_minor: number | null;
}

export interface TransferDestinationCapability {
  schedule: 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';
  fee: number;
  currency: string;
}

/**
 * How money can reach an account, and at what fee, by the employer's schedule. An earnings balance is never a
 * destination, and an account of a person without an employer policy has no way in.
 */
export function transferDestinations(
  accountType: string,
  schedule: FeeSchedule | undefined,
): TransferDestinationCapability[] {
  if (!schedule || (accountType !== 'DEPOSITORY' && accountType !== 'CARD')) return [];
  const [instant, nextDay] =
    accountType === 'CARD'
      ? [schedule.fee_card_instant_minor, schedule.fee_card_next_day_minor]
      : [schedule.fee_bank_instant_minor, schedule.fee_bank_next_day_minor];
  const offered: TransferDestinationCapability[] = [];
  if (instant !== null)
    offered.push({ schedule: 'WITHIN_THIRTY_MINUTES', fee: instant, currency: schedule.currency });
  if (nextDay !== null)
    offered.push({ schedule: 'NEXT_BUSINESS_DAY', fee: nextDay, currency: schedule.currency });
  return offered;
}
