import type { Selectable } from 'kysely';
import type { OverpaymentsTable } from '../../db/schema.ts';
import { OVERPAYMENT_INSTALLMENTS_MAX } from '../../operator/organization-policy.ts';

/** An overpayment as the database keeps it (migration 0017). */
export type OverpaymentRow = Selectable<OverpaymentsTable>;

export type OverpaymentStatus = 'RESOLUTION_REQUIRED' | 'RECOVERING' | 'RECOVERED' | 'WRITTEN_OFF';
export const OVERPAYMENT_STATUSES = [
  'RESOLUTION_REQUIRED',
  'RECOVERING',
  'RECOVERED',
  'WRITTEN_OFF',
] as const;
export const OPEN_STATUSES: readonly OverpaymentStatus[] = ['RESOLUTION_REQUIRED', 'RECOVERING'];

/** How an overpayment is recovered: all from the job's next paycheck, or spread over its next N paychecks. */
export type Resolution = { kind: 'NEXT_PAYCHECK' } | { kind: 'INSTALLMENTS'; installments: number };
export const RESOLUTION_KINDS = ['NEXT_PAYCHECK', 'INSTALLMENTS'] as const;
export { OVERPAYMENT_INSTALLMENTS_MAX };

export function installmentsOf(resolution: Resolution): number {
  return resolution.kind === 'NEXT_PAYCHECK' ? 1 : resolution.installments;
}

export function remainingMinor(
  row: Pick<OverpaymentRow, 'amount_minor' | 'recovered_minor' | 'written_off_minor'>,
) {
  return Number(row.amount_minor) - Number(row.recovered_minor) - Number(row.written_off_minor);
}

/**
 * What a payday takes back for an overpayment: an equal share of what is left over the installments left (the last
 * takes the rest), never more than is left, never more than the payout has.
 */
export function installmentMinor(remaining: number, installmentsLeft: number, payoutMinor: number): number {
  const share = Math.ceil(remaining / Math.max(1, installmentsLeft));
  return Math.max(0, Math.min(remaining, share, payoutMinor));
}

/** The overpayment as the admin API, the CLI's --json and the REST extension show it. */
export function overpaymentAttributes(row: OverpaymentRow) {
  return {
    person_id: row.person_id,
    job_id: row.job_id,
    paycheck_id: row.paycheck_id,
    organization_id: row.organization_id,
    currency: row.currency.trim(),
    amount_minor: Number(row.amount_minor),
    recovered_minor: Number(row.recovered_minor),
    written_off_minor: Number(row.written_off_minor),
    remaining_minor: remainingMinor(row),
    status: row.status as OverpaymentStatus,
    resolution: row.resolution,
    installments: row.installments,
    installments_left: row.installments_left,
    resolved_by: row.resolved_by,
    periods_seen: row.periods_seen,
    detected_at: new Date(row.detected_at).toISOString(),
    resolved_at: row.resolved_at ? new Date(row.resolved_at).toISOString() : null,
    closed_at: row.closed_at ? new Date(row.closed_at).toISOString() : null,
  };
}
