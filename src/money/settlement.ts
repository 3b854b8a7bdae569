import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import {
  ensureOwnedLedgerAccounts,
  type SystemAccounts,
  type SystemLedger,
} from '../ledger/ledger-accounts.ts';
import {
  type AdvanceFigures,
  advanceFailed,
  advanceReturned,
  advanceSettled,
  paycheckDeposited,
  paycheckReturned,
} from '../ledger/movements.ts';
import { type Movement, postMovements } from '../ledger/posting.ts';
import type { PaymentRail, PendingPayment, RailOutcome } from '../rails/payment-rail.ts';
import { returnableAdvances } from './sandbox-returns.ts';

export interface SettlementReport {
  settled: number;
  failed: number;
  deposited: number;
  /** Settled advances that came back (the sandbox's return amounts; ACH returns are counted with their files). */
  returned: number;
}

/** What the books learned from a rail about one advance. */
export interface AdvanceOutcome {
  reference: string;
  status: RailOutcome['status'];
  reason?: string;
}

/**
 * Asks the rail about every payment whose outcome is due by `now`, and applies what it answers: advances become
 * SETTLED (their estimated funding becomes final) or FAILED (amount and fee go back to the earnings balance by new
 * entries, and the paychecks that funded them get their share back); paychecks IN_TRANSIT become DEPOSITED, or their
 * payout comes back (owed to the worker again). The rail is asked outside any transaction; what it answers is
 * applied in batches, each its own transaction under the people's locks, and each payment resolves once however
 * many processes run this at once and however often the rail repeats itself. Last, a rail that returns settled
 * advances (the sandbox) is asked about them, and their returns are applied as ACH returns are.
 */
export async function settleDue(
  db: Db,
  ledger: SystemLedger,
  rail: PaymentRail,
  now: Date,
  batchSize = 200,
): Promise<SettlementReport> {
  const report: SettlementReport = { settled: 0, failed: 0, deposited: 0, returned: 0 };
  const at = now.toISOString();
  // Keyset pages by id over the partial indexes of what is pending (settle_after is read from the rows, so that
  // recording an acceptance updates a row in place).
  let afterId = FIRST_ID;
  for (;;) {
    const { rows } = await sql<{
      id: string;
      amount_minor: number;
      rail_reference: string;
      settle_after: Date;
    }>`select id, amount_minor, rail_reference, settle_after from transfers
      where status = 'PENDING' and settle_after <= ${at}::timestamptz and id > ${afterId}::uuid
      order by id limit ${batchSize}`.execute(db);
    if (rows.length === 0) break;
    const outcomes = await rail.outcomes(
      rows.map(
        (row): PendingPayment => ({
          reference: row.id,
          purpose: 'ADVANCE',
          railReference: row.rail_reference,
          requestedAmountMinor: Number(row.amount_minor),
          expectedSettleAt: new Date(row.settle_after),
        }),
      ),
      now,
    );
    if (outcomes.length > 0) {
      const resolved = await withTransaction(db, (tx) => resolveAdvances(tx, ledger, outcomes, now));
      report.settled += resolved.settled;
      report.failed += resolved.failed;
    }
    const last = rows.at(-1)!;
    afterId = last.id;
  }
  afterId = FIRST_ID;
  for (;;) {
    const { rows } = await sql<{
      id: string;
      payout_minor: number;
      payout_rail_reference: string;
      payout_settle_after: Date;
    }>`select id, payout_minor, payout_rail_reference, payout_settle_after from paychecks
      where status = 'IN_TRANSIT' and payout_settle_after <= ${at}::timestamptz and payout_returned_at is null
        and id > ${afterId}::uuid
      order by id limit ${batchSize * 5}`.execute(db);
    if (rows.length === 0) break;
    const outcomes = await rail.outcomes(
      rows.map(
        (row): PendingPayment => ({
          reference: row.id,
          purpose: 'PAYCHECK',
          railReference: row.payout_rail_reference,
          requestedAmountMinor: Number(row.payout_minor),
          expectedSettleAt: new Date(row.payout_settle_after),
        }),
      ),
      now,
    );
    const delivered = outcomes.filter((o) => o.status === 'SETTLED').map((o) => o.reference);
    const failed = outcomes.flatMap((o) =>
      o.status === 'SETTLED' ? [] : [{ reference: o.reference, reason: o.reason }],
    );
    if (delivered.length > 0)
      report.deposited += await withTransaction(db, (tx) => depositPaychecks(tx, ledger, delivered, now));
    if (failed.length > 0) await withTransaction(db, (tx) => failPaycheckPayouts(tx, ledger, failed, now));
    const last = rows.at(-1)!;
    afterId = last.id;
  }
  if (rail.returns) report.returned = await applyReturns(db, ledger, rail.returns.bind(rail), now, batchSize);
  return report;
}

/** Asks the rail about the settled advances it may return, and applies its returns as ACH returns are applied. */
async function applyReturns(
  db: Db,
  ledger: SystemLedger,
  returns: NonNullable<PaymentRail['returns']>,
  now: Date,
  batchSize: number,
): Promise<number> {
  let returned = 0;
  let afterId = FIRST_ID;
  for (;;) {
    const settled = await returnableAdvances(db, afterId, batchSize);
    if (settled.length === 0) break;
    const outcomes = await returns(settled, now);
    if (outcomes.length > 0)
      returned += (await withTransaction(db, (tx) => resolveAdvances(tx, ledger, outcomes, now))).returned;
    afterId = settled.at(-1)!.reference;
  }
  return returned;
}

/** Before every key of a keyset page. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

interface AdvanceRow {
  id: string;
  person_id: string;
  status: 'PENDING' | 'SETTLED' | 'FAILED';
  returned_at: Date | null;
  origin_account_id: string;
  destination_type: 'DEPOSITORY' | 'CARD';
  amount_minor: number;
  fee_minor: number;
  currency: string;
  organization_id: string;
  /** Every paycheck that funded it is still ESTIMATED or PROCESSING. */
  funding_open: boolean;
}

/**
 * Applies rail outcomes to advances, in the caller's transaction, under their people's locks. Only a change of
 * state moves money, so an outcome told twice is applied once:
 * - PENDING → SETTLED, or PENDING → FAILED (a failure, or a return before the books counted it settled);
 * - SETTLED → FAILED by a return: the money comes back to the earnings balance when every paycheck that funded it
 *   is still open, else to RETURNS_PAYABLE.
 */
export async function resolveAdvances(
  tx: Tx,
  ledger: SystemLedger,
  outcomes: readonly AdvanceOutcome[],
  now: Date,
): Promise<{ settled: number; failed: number; returned: number }> {
  const ids = [...new Set(outcomes.map((o) => o.reference))];
  const { rows: owners } = await sql<{ person_id: string }>`select distinct person_id from transfers
    where id = any(${ids}::uuid[])`.execute(tx);
  await lockPeople(
    tx,
    owners.map((row) => row.person_id),
  );
  const { rows } =
    await sql<AdvanceRow>`select t.id, t.person_id, t.status, t.returned_at, t.origin_account_id,
      d.account_type as destination_type, t.amount_minor, t.fee_minor, trim(t.currency) as currency, j.organization_id,
      not exists (select 1 from funding_sources f join paychecks p on p.id = f.paycheck_id
        where f.transfer_id = t.id and f.stage = 'ESTIMATED' and p.status not in ('ESTIMATED', 'PROCESSING'))
        as funding_open
    from transfers t
      join accounts d on d.id = t.destination_account_id
      join jobs j on j.earnings_balance_account_id = t.origin_account_id
    where t.id = any(${ids}::uuid[]) and t.origin_account_id is not null`.execute(tx);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const system = await systemAccountsOf(tx, ledger, rows);
  const balances = await ensureOwnedLedgerAccounts(
    tx,
    'account',
    rows.map((t) => ({ id: t.origin_account_id, currency: t.currency })),
  );
  const movements: Movement[] = [];
  const settled: string[] = [];
  const failed: { id: string; reason: string }[] = [];
  const returned: { id: string; reason: string; to: 'EARNINGS_BALANCE' | 'RETURNS_PAYABLE' }[] = [];
  const seen = new Set<string>();
  for (const outcome of outcomes) {
    const t = byId.get(outcome.reference);
    if (!t || seen.has(t.id)) continue;
    seen.add(t.id);
    const accounts = systemOf(system, t);
    const figures: AdvanceFigures = {
      transferId: t.id,
      earningsBalance: balances.get(t.origin_account_id) ?? '',
      destination: t.destination_type,
      amountMinor: Number(t.amount_minor),
      feeMinor: Number(t.fee_minor),
      currency: t.currency,
    };
    const reason = outcome.reason ?? 'RAIL_FAILED';
    if (t.status === 'PENDING' && outcome.status === 'SETTLED') {
      settled.push(t.id);
      movements.push(advanceSettled(figures, accounts, now));
    } else if (t.status === 'PENDING') {
      failed.push({ id: t.id, reason });
      movements.push(advanceFailed(figures, accounts, reason, now));
    } else if (t.status === 'SETTLED' && outcome.status === 'RETURNED') {
      const to = t.funding_open ? 'EARNINGS_BALANCE' : 'RETURNS_PAYABLE';
      returned.push({ id: t.id, reason, to });
      const amount = figures.amountMinor;
      movements.push(
        advanceReturned(
          figures,
          accounts,
          {
            toBalanceMinor: to === 'EARNINGS_BALANCE' ? amount : 0,
            toPayableMinor: to === 'RETURNS_PAYABLE' ? amount : 0,
          },
          reason,
          now,
        ),
      );
    }
  }
  await postMovements(tx, movements);
  const at = now.toISOString();
  if (settled.length > 0) {
    // The final funding first: the transfer.settled event (migration 0013) shows the transfer with it.
    await sql`insert into funding_sources (transfer_id, paycheck_id, stage, amount_minor, currency)
      select transfer_id, paycheck_id, 'FINAL', amount_minor, currency from funding_sources
      where transfer_id = any(${settled}::uuid[]) and stage = 'ESTIMATED' order by id`.execute(tx);
    await sql`update transfers set status = 'SETTLED', resolved_at = ${at}::timestamptz
      where id = any(${settled}::uuid[])`.execute(tx);
  }
  const undone = [...failed, ...returned.filter((r) => r.to === 'EARNINGS_BALANCE')];
  if (failed.length > 0)
    await sql`update transfers t set status = 'FAILED', failure_reason = o.reason, resolved_at = ${at}::timestamptz
      from unnest(${failed.map((o) => o.id)}::uuid[], ${failed.map((o) => o.reason)}::text[]) as o(id, reason)
      where t.id = o.id`.execute(tx);
  if (returned.length > 0)
    await sql`update transfers t set status = 'FAILED', failure_reason = o.reason, resolved_at = ${at}::timestamptz,
        returned_at = ${at}::timestamptz, returned_to = o.returned_to
      from unnest(${returned.map((o) => o.id)}::uuid[], ${returned.map((o) => o.reason)}::text[],
        ${returned.map((o) => o.to)}::text[]) as o(id, reason, returned_to)
      where t.id = o.id`.execute(tx);
  // The paychecks that funded what came back to the earnings balance make that share accessible again.
  if (undone.length > 0)
    await sql`update paychecks p set total_debited_minor = p.total_debited_minor - f.amount, updated_at = ${at}::timestamptz
      from (select paycheck_id, sum(amount_minor) as amount from funding_sources
        where transfer_id = any(${undone.map((o) => o.id)}::uuid[]) and stage = 'ESTIMATED' group by paycheck_id) f
      where p.id = f.paycheck_id`.execute(tx);
  return { settled: settled.length, failed: failed.length, returned: returned.length };
}

interface PayoutRow {
  id: string;
  status: string;
  payout_minor: number;
  destination_type: 'DEPOSITORY' | 'CARD';
  currency: string;
  organization_id: string;
}

async function payoutsOf(tx: Tx, ids: readonly string[], lock: 'skip locked' | 'wait'): Promise<PayoutRow[]> {
  const { rows } =
    await sql<PayoutRow>`select p.id, p.status, p.payout_minor, a.account_type as destination_type,
      trim(p.currency) as currency, j.organization_id
    from paychecks p join accounts a on a.id = p.payout_account_id join jobs j on j.id = p.job_id
    where p.id = any(${ids}::uuid[]) and p.payout_returned_at is null and p.payout_minor > 0
    order by p.id for update of p ${lock === 'skip locked' ? sql`skip locked` : sql``}`.execute(tx);
  return rows;
}

/** What the ledger movements of a payout need to know of it. */
function payoutFigures(p: PayoutRow, system: ReadonlyMap<string, SystemAccounts>, now: Date) {
  return {
    paycheckId: p.id,
    payoutMinor: Number(p.payout_minor),
    destination: p.destination_type,
    system: systemOf(system, p),
    currency: p.currency,
    at: now,
  };
}

/**
 * Paychecks whose payout the rail delivered become DEPOSITED. A deposit changes no balance a person may take, so
 * it locks only its paychecks, skipping those another run holds.
 */
async function depositPaychecks(
  tx: Tx,
  ledger: SystemLedger,
  ids: readonly string[],
  now: Date,
): Promise<number> {
  const paychecks = (await payoutsOf(tx, ids, 'skip locked')).filter((p) => p.status === 'IN_TRANSIT');
  if (paychecks.length === 0) return 0;
  const system = await systemAccountsOf(tx, ledger, paychecks);
  await postMovements(
    tx,
    paychecks.map((p) => paycheckDeposited(payoutFigures(p, system, now))),
  );
  await sql`update paychecks set status = 'DEPOSITED', deposited_at = ${now.toISOString()}::timestamptz,
      updated_at = ${now.toISOString()}::timestamptz
    where id = any(${paychecks.map((p) => p.id)}::uuid[])`.execute(tx);
  return paychecks.length;
}

/**
 * Payouts that never arrived or came back (a rail's refusal, an ACH return): the money is owed to the worker
 * again (RETURNS_PAYABLE), and the paycheck says why. Once per paycheck.
 */
export async function failPaycheckPayouts(
  tx: Tx,
  ledger: SystemLedger,
  failures: readonly { reference: string; reason: string }[],
  now: Date,
): Promise<number> {
  const reasonOf = new Map(failures.map((f) => [f.reference, f.reason]));
  const paychecks = (await payoutsOf(tx, [...reasonOf.keys()], 'wait')).filter(
    (p) => p.status === 'IN_TRANSIT' || p.status === 'DEPOSITED',
  );
  if (paychecks.length === 0) return 0;
  const system = await systemAccountsOf(tx, ledger, paychecks);
  await postMovements(
    tx,
    paychecks.map((p) =>
      paycheckReturned({
        ...payoutFigures(p, system, now),
        deliveredBefore: p.status === 'DEPOSITED',
        reason: reasonOf.get(p.id) ?? 'RAIL_FAILED',
      }),
    ),
  );
  await sql`update paychecks p set payout_returned_at = ${now.toISOString()}::timestamptz,
      payout_return_reason = r.reason, updated_at = ${now.toISOString()}::timestamptz
    from unnest(${paychecks.map((p) => p.id)}::uuid[], ${paychecks.map((p) => reasonOf.get(p.id) ?? 'RAIL_FAILED')}::text[])
      as r(id, reason)
    where p.id = r.id`.execute(tx);
  return paychecks.length;
}

/**
 * The employers' system accounts, read in the caller's transaction: money went out through them, so they exist
 * (and the embedded database's one session is the transaction's, so they cannot be made outside it here).
 */
async function systemAccountsOf(
  tx: Tx,
  ledger: SystemLedger,
  rows: readonly { organization_id: string; currency: string }[],
): Promise<Map<string, SystemAccounts>> {
  const found = new Map<string, SystemAccounts>();
  for (const row of rows) {
    const key = `${row.organization_id}/${row.currency}`;
    if (found.has(key)) continue;
    const accounts = await ledger.existingIn(tx, row.organization_id, row.currency);
    if (!accounts) throw new Error(`money moved for ${key}, which has no system ledger accounts`);
    found.set(key, accounts);
  }
  return found;
}

function systemOf(
  system: ReadonlyMap<string, SystemAccounts>,
  row: { organization_id: string; currency: string },
) {
  const accounts = system.get(`${row.organization_id}/${row.currency}`);
  if (!accounts) throw new Error(`no system accounts for ${row.organization_id}/${row.currency}`);
  return accounts;
}
