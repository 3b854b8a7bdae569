import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../../db/transaction.ts';
import type { SystemAccounts } from '../../ledger/ledger-accounts.ts';
import { overpaymentRecorded, overpaymentRecovered, overpaymentWrittenOff } from '../../ledger/movements.ts';
import type { Movement } from '../../ledger/posting.ts';
import type { OverpaymentPolicyResolution } from '../../operator/organization-policy.ts';
import { installmentMinor, type OverpaymentRow, remainingMinor } from './overpayment.ts';
import { refreshOverpaymentMarkers } from './overpayment-marker.ts';

/** A paycheck being paid, as the overpayment rules need it. */
export interface ClosingPaycheck {
  id: string;
  job_id: string;
  person_id: string;
  organization_id: string;
  currency: string;
  pay_period_starts_at: Date;
  net_earnings_minor: number;
  total_debited_minor: number;
  overpayment_default_resolution: OverpaymentPolicyResolution;
  overpayment_installments: number;
  overpayment_write_off_after_periods: number;
  overpayment_write_off_delinquent: boolean;
}

export interface PaydayOverpayments {
  /** What each paycheck's payout gave back to earlier overpayments of its job. */
  recovered: Map<string, number>;
  movements: Movement[];
}

/**
 * The overpayment rules of payday, for paychecks being paid in one transaction that holds their people's locks:
 *
 * 1. each paycheck pays its job's overpayments found before this run, oldest first, from its payout (what net pay
 *    leaves after advances), by the resolution chosen: nothing while none is chosen; never more than is left of
 *    one, never more than the payout;
 * 2. each such overpayment counts the payday (periods_seen); once it has seen the policy's number of periods, what
 *    is left is written off (and the person becomes DELINQUENT if the policy says so);
 * 3. a paycheck whose advances exceed its net pay records the difference as a new overpayment, resolved at once by
 *    the employer's default resolution, if the policy has one.
 *
 * `payoutBefore` is each paycheck's payout before recovery (zero for a paycheck short of its advances).
 */
export async function applyOverpaymentsAtPayday(
  tx: Tx,
  paychecks: readonly ClosingPaycheck[],
  payoutBefore: ReadonlyMap<string, number>,
  system: (paycheck: ClosingPaycheck) => SystemAccounts,
  clearing: ReadonlyMap<string, string>,
  now: Date,
): Promise<PaydayOverpayments> {
  const result: PaydayOverpayments = { recovered: new Map(), movements: [] };
  const touchedPeople = new Set<string>();
  const delinquent = new Set<string>();
  const open = await openOverpaymentsOf(
    tx,
    paychecks.map((p) => p.job_id),
  );
  // Earlier periods pay first, so that the oldest overpayments are recovered from the next paycheck in time.
  const ordered = [...paychecks].sort(
    (a, b) => new Date(a.pay_period_starts_at).getTime() - new Date(b.pay_period_starts_at).getTime(),
  );
  const changed = new Map<string, OverpaymentRow>();
  for (const paycheck of ordered) {
    let payout = payoutBefore.get(paycheck.id) ?? 0;
    const accounts = system(paycheck);
    for (const overpayment of open.get(paycheck.job_id) ?? []) {
      if (overpayment.paycheck_id === paycheck.id || !isOpen(overpayment)) continue;
      overpayment.periods_seen += 1;
      changed.set(overpayment.id, overpayment);
      touchedPeople.add(overpayment.person_id);
      if (overpayment.status === 'RECOVERING' && payout > 0) {
        const take = installmentMinor(
          remainingMinor(overpayment),
          overpayment.installments_left ?? 1,
          payout,
        );
        if (take > 0) {
          payout -= take;
          overpayment.recovered_minor = Number(overpayment.recovered_minor) + take;
          overpayment.installments_left = Math.max(1, (overpayment.installments_left ?? 1) - 1);
          result.recovered.set(paycheck.id, (result.recovered.get(paycheck.id) ?? 0) + take);
          result.movements.push(
            overpaymentRecovered({
              paycheckId: paycheck.id,
              paycheckClearing: clearing.get(paycheck.id) ?? '',
              overpaymentId: overpayment.id,
              amountMinor: take,
              system: accounts,
              currency: paycheck.currency,
              at: now,
            }),
          );
        }
      }
      if (remainingMinor(overpayment) === 0) {
        close(overpayment, 'RECOVERED', now);
      } else if (overpayment.periods_seen >= paycheck.overpayment_write_off_after_periods) {
        result.movements.push(writeOffMovement(overpayment, paycheck.id, accounts, now));
        if (paycheck.overpayment_write_off_delinquent) delinquent.add(overpayment.person_id);
      }
    }
    const shortfall = paycheck.total_debited_minor - paycheck.net_earnings_minor;
    if (shortfall > 0) {
      const found = newOverpayment(paycheck, shortfall, now);
      changed.set(found.id, found);
      touchedPeople.add(paycheck.person_id);
      result.movements.push(
        overpaymentRecorded({
          paycheckId: paycheck.id,
          paycheckClearing: clearing.get(paycheck.id) ?? '',
          amountMinor: shortfall,
          system: accounts,
          currency: paycheck.currency,
          at: now,
        }),
      );
    }
  }
  await saveOverpayments(tx, [...changed.values()], now);
  if (delinquent.size > 0) await markDelinquent(tx, [...delinquent], now);
  await refreshOverpaymentMarkers(tx, [...touchedPeople]);
  return result;
}

function isOpen(row: OverpaymentRow): boolean {
  return row.status === 'RESOLUTION_REQUIRED' || row.status === 'RECOVERING';
}

function close(row: OverpaymentRow, status: 'RECOVERED' | 'WRITTEN_OFF', now: Date): void {
  row.status = status;
  row.closed_at = now;
  row.installments_left = row.installments_left === null ? null : 0;
}

/** Writes off what is left of an overpayment (in memory; saveOverpayments writes it) and composes the movement. */
export function writeOffMovement(
  row: OverpaymentRow,
  paycheckId: string,
  system: SystemAccounts,
  now: Date,
): Movement {
  const left = remainingMinor(row);
  row.written_off_minor = Number(row.written_off_minor) + left;
  close(row, 'WRITTEN_OFF', now);
  return overpaymentWrittenOff({
    paycheckId,
    overpaymentId: row.id,
    amountMinor: left,
    system,
    currency: row.currency.trim(),
    at: now,
  });
}

function newOverpayment(paycheck: ClosingPaycheck, amountMinor: number, now: Date): OverpaymentRow {
  // Installments over one paycheck are the next paycheck: recorded as such, as `resolve --next-paycheck` records it,
  // since a resolution of INSTALLMENTS takes 2 to 12.
  const policy =
    paycheck.overpayment_default_resolution === 'INSTALLMENTS' && paycheck.overpayment_installments === 1
      ? 'NEXT_PAYCHECK'
      : paycheck.overpayment_default_resolution;
  const installments =
    policy === 'NONE' ? null : policy === 'NEXT_PAYCHECK' ? 1 : paycheck.overpayment_installments;
  return {
    id: randomUUID(),
    person_id: paycheck.person_id,
    job_id: paycheck.job_id,
    paycheck_id: paycheck.id,
    organization_id: paycheck.organization_id,
    currency: paycheck.currency,
    amount_minor: amountMinor,
    recovered_minor: 0,
    written_off_minor: 0,
    status: policy === 'NONE' ? 'RESOLUTION_REQUIRED' : 'RECOVERING',
    resolution: policy === 'NONE' ? null : policy,
    installments,
    installments_left: installments,
    resolved_by: policy === 'NONE' ? null : 'EMPLOYER_POLICY',
    periods_seen: 0,
    detected_at: now,
    resolved_at: policy === 'NONE' ? null : now,
    closed_at: null,
    updated_at: now,
  };
}

/** The open overpayments of these jobs, oldest first, locked (the caller holds their people's locks). */
async function openOverpaymentsOf(tx: Tx, jobIds: readonly string[]): Promise<Map<string, OverpaymentRow[]>> {
  const byJob = new Map<string, OverpaymentRow[]>();
  if (jobIds.length === 0) return byJob;
  const { rows } = await sql<OverpaymentRow>`select * from overpayments
    where job_id = any(${[...new Set(jobIds)]}::uuid[]) and status in ('RESOLUTION_REQUIRED', 'RECOVERING')
    order by detected_at, id for update`.execute(tx);
  for (const row of rows) {
    const list = byJob.get(row.job_id) ?? [];
    list.push({
      ...row,
      amount_minor: Number(row.amount_minor),
      recovered_minor: Number(row.recovered_minor),
    });
    byJob.set(row.job_id, list);
  }
  return byJob;
}

/** Inserts new overpayments and updates changed ones, in one statement. */
export async function saveOverpayments(tx: Tx, rows: readonly OverpaymentRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(pick: (row: OverpaymentRow) => T) => rows.map(pick);
  const iso = (value: Date | null) => (value ? new Date(value).toISOString() : null);
  await sql`insert into overpayments (id, person_id, job_id, paycheck_id, organization_id, currency, amount_minor,
      recovered_minor, written_off_minor, status, resolution, installments, installments_left, resolved_by,
      periods_seen, detected_at, resolved_at, closed_at, updated_at)
    select o.*, ${now.toISOString()}::timestamptz from unnest(${col((r) => r.id)}::uuid[],
      ${col((r) => r.person_id)}::uuid[], ${col((r) => r.job_id)}::uuid[], ${col((r) => r.paycheck_id)}::uuid[],
      ${col((r) => r.organization_id)}::uuid[], ${col((r) => r.currency.trim())}::char(3)[],
      ${col((r) => r.amount_minor)}::bigint[], ${col((r) => r.recovered_minor)}::bigint[],
      ${col((r) => r.written_off_minor)}::bigint[], ${col((r) => r.status)}::text[],
      ${col((r) => r.resolution)}::text[], ${col((r) => r.installments)}::integer[],
      ${col((r) => r.installments_left)}::integer[], ${col((r) => r.resolved_by)}::text[],
      ${col((r) => r.periods_seen)}::integer[], ${col((r) => iso(r.detected_at))}::timestamptz[],
      ${col((r) => iso(r.resolved_at))}::timestamptz[], ${col((r) => iso(r.closed_at))}::timestamptz[])
      as o(id, person_id, job_id, paycheck_id, organization_id, currency, amount_minor, recovered_minor,
        written_off_minor, status, resolution, installments, installments_left, resolved_by, periods_seen,
        detected_at, resolved_at, closed_at)
    on conflict (id) do update set recovered_minor = excluded.recovered_minor,
      written_off_minor = excluded.written_off_minor, status = excluded.status, resolution = excluded.resolution,
      installments = excluded.installments, installments_left = excluded.installments_left,
      resolved_by = excluded.resolved_by, periods_seen = excluded.periods_seen, resolved_at = excluded.resolved_at,
      closed_at = excluded.closed_at, updated_at = excluded.updated_at`.execute(tx);
}

/** A write-off under a policy that says so makes the person DELINQUENT (unless another reason disallows them). */
export async function markDelinquent(tx: Tx, personIds: readonly string[], now: Date): Promise<void> {
  await sql`update people set disallow_reason = 'DELINQUENT', updated_at = ${now.toISOString()}::timestamptz
    where id = any(${personIds}::uuid[]) and disallow_reason is null`.execute(tx);
}
