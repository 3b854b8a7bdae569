import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { FundingSourceRow, TransferRow } from '../money/advances/transfer.ts';
import { fundingSourceOf, transferOf } from '../money/advances/transfer.ts';
import { type PaycheckFigures, paycheckOf } from '../money/earnings/paychecks.ts';
import type { AccountPricer } from '../resources/accounts/account-pricing.ts';
import type { FeeSchedule } from '../resources/accounts/capabilities.ts';
import { accountResource } from '../resources/accounts/serialize.ts';
import {
  type AccountRow,
  type PersonFeeScheduleRow,
  personFeeSchedule,
} from '../resources/accounts/store.ts';
import { jobResource } from '../resources/jobs/serialize.ts';
import type { JobRow } from '../resources/jobs/store.ts';
import { paycheckResource } from '../resources/paychecks/serialize.ts';
import { transferResource } from '../resources/transfers/serialize.ts';

/** An event as stored: the snapshot its trigger took (migration 0013), in the shape of the resource's rows. */
export interface StoredEvent {
  id: string;
  type: string;
  resourceType: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}

/**
 * An account event with its fee schedule priced as an advance would have been when it happened: the employer's,
 * with the free option the person's state then required (AccountPricer). Events stored before the snapshot took the
 * person's state (migration 0021) show the employer's schedule.
 */
export async function pricedAccountEvent(
  db: Kysely<DB>,
  pricer: AccountPricer,
  event: StoredEvent,
): Promise<StoredEvent> {
  const snapshot = event.data.fee_schedule as PersonFeeScheduleRow | null | undefined;
  if (event.resourceType !== 'accounts' || !snapshot) return event;
  const feeSchedule = await pricer.priced(db, personFeeSchedule(snapshot), event.occurredAt);
  return { ...event, data: { ...event.data, fee_schedule: feeSchedule } };
}

/**
 * The body a receiver gets: the event's id, type and time, and the resource as `GET` showed it when the event
 * happened (rendered now, by the same serializers as the routes, from the snapshot taken then; an account event's
 * fees priced first by pricedAccountEvent).
 */
export function webhookPayload(event: StoredEvent, baseUrl: string): Record<string, unknown> {
  const head = { id: event.id, type: event.type, timestamp: event.occurredAt.toISOString() };
  const { data } = event;
  switch (event.resourceType) {
    case 'transfers': {
      const sources = (data.sources as FundingSourceRow[]).map(fundingSourceOf);
      return {
        ...head,
        data: transferResource(baseUrl, {
          transfer: transferOf(data.transfer as TransferRow),
          sources,
          preview: false,
        }),
      };
    }
    case 'paychecks': {
      const paycheck = data.paycheck as PaycheckFigures & { payout_return_reason?: string | null };
      // The paycheck resource has no field for a returned payout: the event says why beside it.
      const told =
        event.type === 'paycheck.payout_returned'
          ? { payout_return_reason: paycheck.payout_return_reason ?? null }
          : { previous_status: data.previous_status };
      return { ...head, ...told, data: paycheckResource(baseUrl, paycheckOf(paycheck)) };
    }
    case 'accounts': {
      const balance = data.balance_minor;
      return {
        ...head,
        data: accountResource(baseUrl, data.account as AccountRow, {
          balanceMinor: balance === null || balance === undefined ? undefined : Number(balance),
          feeSchedule: (data.fee_schedule as FeeSchedule | null) ?? undefined,
          // Absent from events written before the snapshot carried it: their balance shows as it did then.
          advanceOrigin: typeof data.advance_origin === 'boolean' ? data.advance_origin : undefined,
        }),
      };
    }
    case 'jobs':
      return { ...head, data: jobResource(baseUrl, data.job as JobRow) };
    default:
      // A test event carries its endpoint, as the webhook endpoint routes show it.
      return { ...head, data };
  }
}
