import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import {
  ensureOwnedLedgerAccounts,
  type SystemAccounts,
  type SystemLedger,
} from '../ledger/ledger-accounts.ts';
import { employerPayday, payday } from '../ledger/movements.ts';
import { type Movement, postMovements } from '../ledger/posting.ts';
import type { PaydayPayout } from '../operator/organization-policy.ts';
import { enqueue, type OutboxMessage } from '../outbox/outbox-message.ts';
import { applyOverpaymentsAtPayday, type ClosingPaycheck } from './overpayments/overpayment-payday.ts';
import { railPaymentMessage } from './rail-payments.ts';

export interface PayrollReport {
  /** Paychecks whose period ended and that moved from ESTIMATED to PROCESSING in this run. */
  closed: number;
  /**
   * Paychecks paid out: the remainder sent (IN_TRANSIT), or nothing left to send (DEPOSITED), or, for an employer
   * that runs payroll itself, settled by its remittance (DEPOSITED).
   */
  paid: number;
  /** Paychecks that wait: no default account to pay into (when this server pays), or advances still PENDING. */
  held: number;
}

export type PayrollProgress = (done: number, total: number) => void;

/** Payroll batches in flight at once. */
export const BATCHES_AT_ONCE = 2;

/** Why a paycheck waits; an operator reads these in `payout_held_reason`. */
export const HELD_NO_ACCOUNT = 'NO_DEFAULT_ACCOUNT';
export const HELD_PENDING_ADVANCES = 'PENDING_ADVANCES';

interface Candidate {
  id: string;
  person_id: string;
  organization_id: string;
  currency: string;
}

interface PayrollRow extends ClosingPaycheck {
  accessible_minor: number;
  deposit_expected_at: Date;
  earnings_balance_account_id: string | null;
  payout_account_id: string | null;
  payout_type: 'DEPOSITORY' | 'CARD' | null;
  has_pending_advances: boolean;
  payday_payout: PaydayPayout;
}

/**
 * Payday. Closes every pay period that has ended (ESTIMATED → PROCESSING, closeEndedPeriods), then pays each
 * PROCESSING paycheck: the share of it still in the earnings balance leaves the balance (which returns to zero for
 * that period), the employer funds the net pay, earlier overpayments of the job take their installment and a
 * paycheck short of its advances records a new one (applyOverpaymentsAtPayday), and what is left of
 * net pay − total_debited goes to the job's default depository
 * (the default card when there is none) through the rail: an instruction written to the outbox with the batch, sent
 * after it commits; IN_TRANSIT until the rail delivers, then DEPOSITED (settlement job).
 *
 * An employer whose policy says `payday_payout` EMPLOYER runs payroll itself: it pays its workers that remainder
 * directly and remits the deductions (what advances took, up to net pay, and any overpayment installment) to the
 * provider. Its paychecks are settled in the same batch by that remittance (employerPayday): no payout, no rail
 * instruction, no default account needed, and DEPOSITED at once, as a paycheck with nothing left to send is: nothing
 * of it is left for this server to do.
 *
 * Idempotent and resumable: each batch is one transaction that moves its paychecks out of PROCESSING together with
 * their postings, so a second run, or a run after a crash, finds only what is left and never pays twice. A failed
 * batch stops the run once the batches in flight have ended; what they paid stays paid.
 */
export async function runPayroll(
  db: Db,
  ledger: SystemLedger,
  now: Date,
  options: {
    batchSize?: number;
    onProgress?: PayrollProgress;
    /** The kinds of account a rail of this server pays (all when absent): a default of another kind is no default. */
    payableDestinations?: readonly string[] | undefined;
  } = {},
): Promise<PayrollReport> {
  const batchSize = options.batchSize ?? 1000;
  const payableKinds = options.payableDestinations ?? ['DEPOSITORY', 'CARD'];
  const report: PayrollReport = { closed: await closeEndedPeriods(db, now, batchSize), paid: 0, held: 0 };
  const { rows: count } = await sql<{ n: number }>`select count(*)::integer as n from paychecks
    where status = 'PROCESSING'`.execute(db);
  const total = Number(count[0]?.n ?? 0);
  let after = '00000000-0000-0000-0000-000000000000';
  let done = 0;
  options.onProgress?.(0, total);
  // Batches are paid BATCHES_AT_ONCE at a time: one batch's transaction keeps the database on one core, waiting on
  // this process between its statements. Batches that share a person queue on that person's lock (each takes its
  // people in id order), and otherwise touch different rows.
  const paying = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for (;;) {
    if (failure) break;
    const { rows: batch } = await sql<Candidate>`select p.id, p.person_id, j.organization_id,
        trim(p.currency) as currency
      from (select id from paychecks where status = 'PROCESSING' and id > ${after}::uuid
          order by id limit ${batchSize}) page
        join paychecks p on p.id = page.id join jobs j on j.id = p.job_id
      order by p.id`.execute(db);
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;
    // The employers' system accounts are made (if new) outside the batch's transaction.
    const system = await ledger.accountsForMany(
      batch.map((c) => ({ organizationId: c.organization_id, currency: c.currency })),
    );
    const payment: Promise<void> = withTransaction(db, (tx) =>
      payBatch(tx, batch, system, now, payableKinds),
    ).then(
      (outcome) => {
        report.paid += outcome.paid;
        report.held += outcome.held;
        done += batch.length;
        options.onProgress?.(Math.min(done, total), total);
      },
      (error: unknown) => {
        failure ??= { error };
      },
    );
    paying.add(payment);
    void payment.finally(() => paying.delete(payment));
    if (paying.size >= BATCHES_AT_ONCE) await Promise.race(paying);
  }
  await Promise.all(paying);
  if (failure) throw failure.error;
  return report;
}

/**
 * Moves every paycheck whose pay period has ended from ESTIMATED to PROCESSING, a page at a time, each page in one
 * transaction that first locks its people in id order, as advances and imports do. A single UPDATE over all of
 * them would lock paychecks in scan order, and could deadlock with an advance that debits two paychecks, or an
 * import that touches several, while holding the lock of one. Returns how many it closed.
 *
 * A page is any ended ESTIMATED paychecks, in no order: a closed paycheck leaves that set, so the loop ends when it
 * is empty. Asking for an order by id made PostgreSQL, without statistics, read and sort every ESTIMATED paycheck
 * for each page.
 */
async function closeEndedPeriods(db: Db, now: Date, batchSize: number): Promise<number> {
  const at = now.toISOString();
  let closed = 0;
  for (;;) {
    // pay_period_ends_at is the last day's local midnight (the wire's meaning); the period ends a local day later,
    // so it has ended only if pay_period_ends_at is past too: a plain comparison that an index can serve.
    const { rows: page } = await sql<{ id: string; person_id: string }>`select p.id, p.person_id
      from paychecks p join jobs j on j.id = p.job_id
        join organization_policies o on o.organization_id = j.organization_id
      where p.status = 'ESTIMATED' and p.pay_period_ends_at <= ${at}::timestamptz
        and ((p.pay_period_ends_at at time zone o.time_zone) + interval '1 day') at time zone o.time_zone
          <= ${at}::timestamptz
      limit ${batchSize}`.execute(db);
    if (page.length === 0) return closed;
    closed += await withTransaction(db, async (tx) => {
      await lockPeople(
        tx,
        page.map((row) => row.person_id),
      );
      // Under the locks, and only what is still ESTIMATED: another run may have closed some meanwhile.
      const result = await sql`update paychecks p set status = 'PROCESSING', updated_at = ${at}::timestamptz
        where p.id = any(${page.map((row) => row.id)}::uuid[]) and p.status = 'ESTIMATED'`.execute(tx);
      return Number(result.numAffectedRows ?? 0);
    });
  }
}

async function loadPayrollRows(
  db: Db | Tx,
  batch: readonly Candidate[],
  payableKinds: readonly string[],
): Promise<PayrollRow[]> {
  const { rows } = await sql<PayrollRow>`select p.id, p.job_id, p.person_id, j.organization_id,
      trim(p.currency) as currency, p.net_earnings_minor, p.total_debited_minor, p.accessible_minor,
      p.pay_period_starts_at, p.deposit_expected_at, j.earnings_balance_account_id,
      op.overpayment_default_resolution, op.overpayment_installments, op.overpayment_write_off_after_periods,
      op.overpayment_write_off_delinquent, op.payday_payout,
      coalesce(dep.id, card.id) as payout_account_id, coalesce(dep.account_type, card.account_type) as payout_type,
      exists (select 1 from funding_sources f join transfers t on t.id = f.transfer_id
        where f.paycheck_id = p.id and f.stage = 'ESTIMATED' and t.status = 'PENDING') as has_pending_advances
    from paychecks p join jobs j on j.id = p.job_id
      join organization_policies op on op.organization_id = j.organization_id
      left join accounts dep on dep.id = j.direct_deposit_default_depository_id and dep.deleted_at is null
        and ${payableKinds.includes('DEPOSITORY')}::boolean
      left join accounts card on card.id = j.direct_deposit_default_card_id and card.deleted_at is null
        and ${payableKinds.includes('CARD')}::boolean
    where p.id = any(${batch.map((c) => c.id)}::uuid[]) and p.status = 'PROCESSING'
    order by p.id`.execute(db);
  return rows;
}

async function payBatch(
  tx: Tx,
  batch: readonly Candidate[],
  system: ReadonlyMap<string, SystemAccounts>,
  now: Date,
  payableKinds: readonly string[],
): Promise<{ paid: number; held: number }> {
  await lockPeople(
    tx,
    batch.map((c) => c.person_id),
  );
  // Read again under the locks: another run may have paid some, and advances may have moved the figures.
  const rows = await loadPayrollRows(tx, batch, payableKinds);
  // An employer that pays its workers itself needs no account of theirs here; pending advances hold every paycheck:
  // its deductions are not final until they resolve.
  const isHeld = (row: PayrollRow) =>
    row.has_pending_advances || (row.payday_payout === 'PROVIDER' && !row.payout_account_id);
  const held = rows.filter(isHeld);
  const payable = rows.filter((row) => !isHeld(row));
  const at = now.toISOString();
  if (held.length > 0)
    await sql`update paychecks p set payout_held_reason = h.reason, updated_at = ${at}::timestamptz
      from unnest(${held.map((row) => row.id)}::uuid[],
        ${held.map((row) => (row.has_pending_advances ? HELD_PENDING_ADVANCES : HELD_NO_ACCOUNT))}::text[])
        as h(id, reason)
      where p.id = h.id`.execute(tx);
  if (payable.length === 0) return { paid: 0, held: held.length };
  const clearing = await ensureOwnedLedgerAccounts(
    tx,
    'paycheck',
    payable.map((row) => ({ id: row.id, currency: row.currency })),
  );
  const balances = await ensureOwnedLedgerAccounts(
    tx,
    'account',
    payable.flatMap((row) =>
      row.earnings_balance_account_id
        ? [{ id: row.earnings_balance_account_id, currency: row.currency }]
        : [],
    ),
  );
  const accountsOf = (row: { id: string; organization_id: string; currency: string }) => {
    const accounts = system.get(`${row.organization_id}/${row.currency}`);
    if (!accounts) throw new Error(`no system accounts for ${row.organization_id}/${row.currency}`);
    return accounts;
  };
  // Net pay below what advances took pays nothing: the difference is an overpayment (applyOverpaymentsAtPayday).
  const payoutBefore = new Map(
    payable.map((row) => [row.id, Math.max(0, row.net_earnings_minor - row.total_debited_minor)]),
  );
  const overpayments = await applyOverpaymentsAtPayday(tx, payable, payoutBefore, accountsOf, clearing, now);
  const movements: Movement[] = [];
  /** byEmployer: the employer paid `payout` itself, so nothing goes to an account of the worker's. */
  const payouts: { id: string; payout: number; recovered: number; byEmployer: boolean }[] = [];
  const payments: OutboxMessage[] = [];
  for (const row of payable) {
    const accounts = accountsOf(row);
    const untaken = row.accessible_minor - row.total_debited_minor;
    const recovered = overpayments.recovered.get(row.id) ?? 0;
    const payout = (payoutBefore.get(row.id) ?? 0) - recovered;
    if (untaken < 0 || payout < 0) throw new Error(`paycheck ${row.id} took more than it made accessible`);
    // What both paydays move: the untaken share out of the earnings balance, through the paycheck's clearing.
    const paycheck = {
      paycheckId: row.id,
      earningsBalance: row.earnings_balance_account_id
        ? balances.get(row.earnings_balance_account_id)
        : undefined,
      paycheckClearing: clearing.get(row.id) ?? '',
      untakenMinor: untaken,
      system: accounts,
      currency: row.currency,
      at: now,
    };
    if (row.payday_payout === 'EMPLOYER') {
      movements.push(
        employerPayday({
          ...paycheck,
          paidByEmployerMinor: payout,
          // Advances up to net pay, and recovery: the remittance report's line (src/reports/remittance-report.ts).
          // Below zero only for net pay below zero, which carries no deduction: the employer is owed it back.
          remittedMinor: row.net_earnings_minor - payout,
        }),
      );
      payouts.push({ id: row.id, payout, recovered, byEmployer: true });
      continue;
    }
    const destination = row.payout_type ?? 'DEPOSITORY';
    movements.push(
      payday({ ...paycheck, payoutMinor: payout, netMinor: row.net_earnings_minor, destination }),
    );
    payouts.push({ id: row.id, payout, recovered, byEmployer: false });
    if (payout === 0) continue;
    payments.push(
      railPaymentMessage({
        reference: row.id,
        purpose: 'PAYCHECK',
        requestedAmountMinor: payout,
        deliveredAmountMinor: payout,
        currency: row.currency,
        schedule: 'NEXT_BUSINESS_DAY',
        destinationAccountId: row.payout_account_id ?? '',
        destinationKind: destination,
        submittedAt: now,
        notBefore: row.deposit_expected_at,
      }),
    );
  }
  await postMovements(tx, [...movements, ...overpayments.movements]);
  await enqueue(tx, payments);
  const accountOf = new Map(payable.map((row) => [row.id, row.payout_account_id]));
  const settledNow = (p: { payout: number; byEmployer: boolean }) => p.byEmployer || p.payout === 0;
  await sql`update paychecks p set
      status = case when o.settled then 'DEPOSITED' else 'IN_TRANSIT' end,
      deposited_at = case when o.settled then ${at}::timestamptz else null end,
      payout_account_id = o.account_id, payout_minor = o.payout, payout_rail_reference = null,
      payout_settle_after = null, payout_held_reason = null, overpayment_recovered_minor = o.recovered,
      updated_at = ${at}::timestamptz
    from unnest(${payouts.map((p) => p.id)}::uuid[],
      ${payouts.map((p) => (p.byEmployer ? null : (accountOf.get(p.id) ?? null)))}::uuid[],
      ${payouts.map((p) => p.payout)}::bigint[], ${payouts.map((p) => p.recovered)}::bigint[],
      ${payouts.map(settledNow)}::boolean[])
      as o(id, account_id, payout, recovered, settled)
    where p.id = o.id`.execute(tx);
  return { paid: payouts.length, held: held.length };
}
