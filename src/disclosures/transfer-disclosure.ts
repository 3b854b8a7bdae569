import { localDateOf } from '../domain/calendar.ts';
import type { Schedule } from '../money/advances/advance-rules.ts';
import type { DisclosureRead, TransferDisclosureRow } from '../money/advances/advance-store.ts';
import { ACH_TIME_ZONE } from '../rails/ach/ach-windows.ts';
import { nextBusinessDay } from '../rails/business-days.ts';

/**
 * What an advance disclosed, as its row of transfer_disclosures: the figures of its answer (the preview showed the
 * same), when the money is expected and when it is repaid, and what the person had accepted and acknowledged.
 */
export function transferDisclosureOf(input: {
  transferId: string;
  amountMinor: number;
  feeMinor: number;
  currency: string;
  destinationId: string;
  schedule: Schedule;
  /** The payday of the first paycheck that funds it. */
  debitAt: Date;
  timeZone: string;
  disclosure: DisclosureRead | undefined;
  acknowledged: boolean;
  /** The person's state of residence, as the advance read it under the person's lock. */
  stateOfResidence: string | null;
  now: Date;
}): TransferDisclosureRow {
  // Banks' days are New York's: an instant transfer lands today, a next-day one on the next business day.
  const today = localDateOf(input.now, ACH_TIME_ZONE);
  return {
    transfer_id: input.transferId,
    amount_minor: input.amountMinor,
    fee_minor: input.feeMinor,
    received_minor: input.amountMinor - input.feeMinor,
    currency: input.currency,
    destination_account_id: input.destinationId,
    schedule: input.schedule,
    expected_on: input.schedule === 'NEXT_BUSINESS_DAY' ? nextBusinessDay(today) : today,
    debit_on: localDateOf(input.debitAt, input.timeZone),
    document_id: input.disclosure?.acceptedAt ? input.disclosure.id : null,
    document_version: input.disclosure?.acceptedAt ? input.disclosure.version : null,
    acknowledged_at: input.acknowledged ? input.now : null,
    created_at: input.now,
    state_of_residence: input.stateOfResidence,
  };
}
