import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import {
  ensureOwnedLedgerAccounts,
  type SystemAccounts,
  type SystemLedger,
} from '../ledger/ledger-accounts.ts';
import { type Movement, postMovements } from '../ledger/posting.ts';
import type { PaymentRail, RailInstruction } from '../rails/payment-rail.ts';

export interface SettlementReport {
  settled: number;
  failed: number;
  deposited: number;
}

interface DueTransfer {
  id: string;
  person_id: string;
  origin_account_id: string;
  destination_type: 'DEPOSITORY' | 'CARD';
  amount_minor: number;
  fee_minor: number;
  currency: string;
  schedule: 'WITHIN_THIRTY_MINUTES' | 'NEXT_BUSINESS_DAY';
  submitted_at: Date;
  organization_id: string;
}

interface DuePaycheck {
  id: string;
  payout_minor: number;
  destination_type: 'DEPOSITORY' | 'CARD';
  currency: string;
  organization_id: string;
}

/**
 * Resolves what the rail has finished by `now`: advances become SETTLED (their estimated funding becomes final) or
 * FAILED (amount and fee go back to the earnings balance by new entries, and the paychecks that funded them get
 * their share back), and paychecks IN_TRANSIT become DEPOSITED. Works in batches, each its own transaction: an
 * advance batch first locks the people concerned (their balances change); a deposit batch changes no balance a
 * person may take and locks only its paychecks, skipping those another run holds. Any number of processes may run
 * it at once and each item resolves once.
 */
export async function settleDue(
  db: Db,
  ledger: SystemLedger,
  rail: PaymentRail,
  now: Date,
  batchSize = 200,
): Promise<SettlementReport> {
  const report: SettlementReport = { settled: 0, failed: 0, deposited: 0 };
  const at = now.toISOString();
  // Keyset pages over the partial indexes of what is due: each batch costs the same however many are left.
  let after = FIRST_KEY;
  for (;;) {
    const { rows } = await sql<
      DueTransfer & { settle_after: Date }
    >`select t.id, t.person_id, t.origin_account_id,
        d.account_type as destination_type, t.amount_minor, t.fee_minor, trim(t.currency) as currency, t.schedule,
        t.submitted_at, t.settle_after, j.organization_id
      from (select id from transfers
          where status = 'PENDING' and settle_after <= ${at}::timestamptz
            and (settle_after, id) > (${after.at}::timestamptz, ${after.id}::uuid)
          order by settle_after, id limit ${batchSize}) due
        join transfers t on t.id = due.id
        join accounts d on d.id = t.destination_account_id
        join jobs j on j.earnings_balance_account_id = t.origin_account_id
      order by t.settle_after, t.id`.execute(db);
    if (rows.length === 0) break;
    const system = await systemAccountsOf(ledger, rows);
    const resolved = await withTransaction(db, (tx) => resolveTransfers(tx, rows, system, rail, now));
    report.settled += resolved.settled;
    report.failed += resolved.failed;
    const last = rows.at(-1)!;
    after = { at: new Date(last.settle_after).toISOString(), id: last.id };
  }
  after = FIRST_KEY;
  for (;;) {
    const { rows } = await sql<DuePaycheck & { payout_settle_after: Date }>`select p.id,
        p.payout_minor, a.account_type as destination_type, trim(p.currency) as currency, j.organization_id,
        p.payout_settle_after
      from (select id from paychecks
          where status = 'IN_TRANSIT' and payout_settle_after <= ${at}::timestamptz
            and (payout_settle_after, id) > (${after.at}::timestamptz, ${after.id}::uuid)
          order by payout_settle_after, id limit ${batchSize * 5}) due
        join paychecks p on p.id = due.id
        join accounts a on a.id = p.payout_account_id
        join jobs j on j.id = p.job_id
      order by p.payout_settle_after, p.id`.execute(db);
    if (rows.length === 0) break;
    const system = await systemAccountsOf(ledger, rows);
    report.deposited += await withTransaction(db, (tx) => depositPaychecks(tx, rows, system, now));
    const last = rows.at(-1)!;
    after = { at: new Date(last.payout_settle_after).toISOString(), id: last.id };
  }
  return report;
}

/** Before every key of a keyset page. */
const FIRST_KEY = { at: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

async function systemAccountsOf(
  ledger: SystemLedger,
  rows: readonly { organization_id: string; currency: string }[],
): Promise<Map<string, SystemAccounts>> {
  return ledger.accountsForMany(
    rows.map((row) => ({ organizationId: row.organization_id, currency: row.currency })),
  );
}

function systemOf(
  system: ReadonlyMap<string, SystemAccounts>,
  row: { organization_id: string; currency: string },
) {
  const accounts = system.get(`${row.organization_id}/${row.currency}`);
  if (!accounts) throw new Error(`no system accounts for ${row.organization_id}/${row.currency}`);
  return accounts;
}

async function resolveTransfers(
  tx: Tx,
  due: readonly DueTransfer[],
  system: ReadonlyMap<string, SystemAccounts>,
  rail: PaymentRail,
  now: Date,
): Promise<{ settled: number; failed: number }> {
  await lockPeople(
    tx,
    due.map((t) => t.person_id),
  );
  const { rows: still } = await sql<{ id: string }>`select id from transfers
    where id = any(${due.map((t) => t.id)}::uuid[]) and status = 'PENDING'`.execute(tx);
  const pending = new Set(still.map((row) => row.id));
  const transfers = due.filter((t) => pending.has(t.id));
  if (transfers.length === 0) return { settled: 0, failed: 0 };
  const balances = await ensureOwnedLedgerAccounts(
    tx,
    'account',
    transfers.map((t) => ({ id: t.origin_account_id, currency: t.currency })),
  );
  const movements: Movement[] = [];
  const outcomes: { id: string; status: 'SETTLED' | 'FAILED'; reason: string | null }[] = [];
  for (const t of transfers) {
    const accounts = systemOf(system, t);
    const external = t.destination_type === 'CARD' ? accounts.EXTERNAL_CARD : accounts.EXTERNAL_BANK;
    const delivered = t.amount_minor - t.fee_minor;
    const instruction: RailInstruction = {
      reference: t.id,
      purpose: 'ADVANCE',
      requestedAmountMinor: t.amount_minor,
      deliveredAmountMinor: delivered,
      currency: t.currency,
      schedule: t.schedule,
      destinationKind: t.destination_type,
      submittedAt: t.submitted_at,
    };
    const outcome = rail.outcome(instruction);
    const c = t.currency;
    if (outcome.status === 'SETTLED') {
      outcomes.push({ id: t.id, status: 'SETTLED', reason: null });
      movements.push({
        kind: 'ADVANCE_SETTLED',
        transferId: t.id,
        postedAt: now,
        lines: [
          { ledgerAccountId: external, direction: 'DEBIT', amountMinor: delivered, currency: c },
          {
            ledgerAccountId: accounts.PROVIDER_FUNDING,
            direction: 'CREDIT',
            amountMinor: delivered,
            currency: c,
          },
        ],
      });
    } else {
      outcomes.push({ id: t.id, status: 'FAILED', reason: outcome.reason });
      movements.push({
        kind: 'ADVANCE_FAILED',
        transferId: t.id,
        postedAt: now,
        memo: outcome.reason,
        lines: [
          { ledgerAccountId: external, direction: 'DEBIT', amountMinor: delivered, currency: c },
          {
            ledgerAccountId: accounts.FEE_REVENUE,
            direction: 'DEBIT',
            amountMinor: t.fee_minor,
            currency: c,
          },
          {
            ledgerAccountId: balances.get(t.origin_account_id) ?? '',
            direction: 'CREDIT',
            amountMinor: t.amount_minor,
            currency: c,
          },
        ],
      });
    }
  }
  await postMovements(tx, movements);
  const at = now.toISOString();
  await sql`update transfers t set status = o.status, failure_reason = o.reason, resolved_at = ${at}::timestamptz
    from unnest(${outcomes.map((o) => o.id)}::uuid[], ${outcomes.map((o) => o.status)}::text[],
      ${outcomes.map((o) => o.reason)}::text[]) as o(id, status, reason)
    where t.id = o.id`.execute(tx);
  const settledIds = outcomes.filter((o) => o.status === 'SETTLED').map((o) => o.id);
  const failedIds = outcomes.filter((o) => o.status === 'FAILED').map((o) => o.id);
  if (settledIds.length > 0)
    await sql`insert into funding_sources (transfer_id, paycheck_id, stage, amount_minor, currency)
      select transfer_id, paycheck_id, 'FINAL', amount_minor, currency from funding_sources
      where transfer_id = any(${settledIds}::uuid[]) and stage = 'ESTIMATED' order by id`.execute(tx);
  if (failedIds.length > 0)
    await sql`update paychecks p set total_debited_minor = p.total_debited_minor - f.amount, updated_at = ${at}::timestamptz
      from (select paycheck_id, sum(amount_minor) as amount from funding_sources
        where transfer_id = any(${failedIds}::uuid[]) and stage = 'ESTIMATED' group by paycheck_id) f
      where p.id = f.paycheck_id`.execute(tx);
  return { settled: settledIds.length, failed: failedIds.length };
}

async function depositPaychecks(
  tx: Tx,
  due: readonly DuePaycheck[],
  system: ReadonlyMap<string, SystemAccounts>,
  now: Date,
): Promise<number> {
  const { rows: still } = await sql<{ id: string }>`select id from paychecks
    where id = any(${due.map((p) => p.id)}::uuid[]) and status = 'IN_TRANSIT'
    order by id for update skip locked`.execute(tx);
  const ready = new Set(still.map((row) => row.id));
  const paychecks = due.filter((p) => ready.has(p.id));
  if (paychecks.length === 0) return 0;
  await postMovements(
    tx,
    paychecks.map((p) => {
      const accounts = systemOf(system, p);
      return {
        kind: 'PAYCHECK_DEPOSITED',
        paycheckId: p.id,
        postedAt: now,
        lines: [
          {
            ledgerAccountId: p.destination_type === 'CARD' ? accounts.EXTERNAL_CARD : accounts.EXTERNAL_BANK,
            direction: 'DEBIT',
            amountMinor: p.payout_minor,
            currency: p.currency,
          },
          {
            ledgerAccountId: accounts.PROVIDER_FUNDING,
            direction: 'CREDIT',
            amountMinor: p.payout_minor,
            currency: p.currency,
          },
        ],
      } satisfies Movement;
    }),
  );
  await sql`update paychecks set status = 'DEPOSITED', deposited_at = ${now.toISOString()}::timestamptz,
      updated_at = ${now.toISOString()}::timestamptz
    where id = any(${paychecks.map((p) => p.id)}::uuid[])`.execute(tx);
  return paychecks.length;
}
