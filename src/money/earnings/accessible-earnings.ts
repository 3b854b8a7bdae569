import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Tx } from '../../db/transaction.ts';
import { ensureOwnedLedgerAccounts } from '../../ledger/ledger-accounts.ts';
import { earningsMadeAccessible, earningsWithdrawn } from '../../ledger/movements.ts';
import { postMovements } from '../../ledger/posting.ts';
import type { JobTerms } from './job-terms.ts';
import { accessibleShareMinor } from './paycheck-math.ts';
import type { PaycheckRow } from './paychecks.ts';

/** The ledger accounts of these earnings balances and paychecks (made on first use). */
async function ledgerAccountsOf(
  tx: Tx,
  moves: readonly { paycheck: PaycheckRow; accountId: string }[],
): Promise<{ balanceLedger: Map<string, string>; clearingLedger: Map<string, string> }> {
  const balanceLedger = await ensureOwnedLedgerAccounts(
    tx,
    'account',
    moves.map((m) => ({ id: m.accountId, currency: m.paycheck.currency })),
  );
  const clearingLedger = await ensureOwnedLedgerAccounts(
    tx,
    'paycheck',
    moves.map((m) => ({ id: m.paycheck.id, currency: m.paycheck.currency })),
  );
  return { balanceLedger, clearingLedger };
}

/**
 * Credits each open paycheck's newly accessible share to its job's earnings balance, as a paycheck-origin transfer
 * (origin = the paycheck, destination = the earnings balance, settled at once) with its ledger posting. The caller
 * holds the locks of the people concerned and passes the paycheck rows it locked. Returns the total credited.
 */
export async function creditAccessibleEarnings(
  tx: Tx,
  paychecks: readonly PaycheckRow[],
  termsByJob: ReadonlyMap<string, JobTerms>,
  now: Date,
): Promise<number> {
  const credits: { paycheck: PaycheckRow; accountId: string; amountMinor: number }[] = [];
  for (const paycheck of paychecks) {
    const terms = termsByJob.get(paycheck.job_id);
    if (!terms?.earningsBalanceAccountId || paycheck.status !== 'ESTIMATED') continue;
    const target = accessibleShareMinor(paycheck.net_earnings_minor, terms.policy.accessRateBp);
    const amountMinor = target - paycheck.accessible_minor;
    if (amountMinor > 0) credits.push({ paycheck, accountId: terms.earningsBalanceAccountId, amountMinor });
  }
  if (credits.length === 0) return 0;
  const { balanceLedger, clearingLedger } = await ledgerAccountsOf(tx, credits);
  const transfers = credits.map((c) => ({ ...c, transferId: randomUUID() }));
  const at = now.toISOString();
  await sql`insert into transfers (id, person_id, origin_paycheck_id, destination_account_id, amount_minor,
      fee_minor, currency, schedule, status, submitted_at, resolved_at)
    select t.id, t.person_id, t.paycheck_id, t.account_id, t.amount, 0, t.currency, 'WITHIN_THIRTY_MINUTES',
      'SETTLED', ${at}::timestamptz, ${at}::timestamptz
    from unnest(${transfers.map((t) => t.transferId)}::uuid[], ${transfers.map((t) => t.paycheck.person_id)}::uuid[],
      ${transfers.map((t) => t.paycheck.id)}::uuid[], ${transfers.map((t) => t.accountId)}::uuid[],
      ${transfers.map((t) => t.amountMinor)}::bigint[], ${transfers.map((t) => t.paycheck.currency)}::char(3)[])
      as t(id, person_id, paycheck_id, account_id, amount, currency)`.execute(tx);
  const movements = transfers.map((t) =>
    earningsMadeAccessible({
      transferId: t.transferId,
      paycheckId: t.paycheck.id,
      paycheckClearing: clearingLedger.get(t.paycheck.id) ?? '',
      earningsBalance: balanceLedger.get(t.accountId) ?? '',
      amountMinor: t.amountMinor,
      currency: t.paycheck.currency,
      at: now,
    }),
  );
  await postMovements(tx, movements);
  await sql`update paychecks p set accessible_minor = p.accessible_minor + c.amount, updated_at = ${at}::timestamptz
    from unnest(${transfers.map((t) => t.paycheck.id)}::uuid[], ${transfers.map((t) => t.amountMinor)}::bigint[])
      as c(id, amount)
    where p.id = c.id`.execute(tx);
  return transfers.reduce((sum, t) => sum + t.amountMinor, 0);
}

/**
 * After a correction lowered open paychecks' net pay: the part of each one's accessible share above its new share
 * goes back from the earnings balance to the paycheck, as far as advances have not taken it. What they took stays
 * taken (the balance never goes below zero); if the paycheck closes short of it, the difference is an overpayment.
 * The caller holds the people's locks. Returns the paychecks with their new accessible_minor, and the total withdrawn.
 */
export async function withdrawInaccessibleEarnings(
  tx: Tx,
  paychecks: readonly PaycheckRow[],
  termsByJob: ReadonlyMap<string, JobTerms>,
  now: Date,
): Promise<{ paychecks: PaycheckRow[]; withdrawnMinor: number }> {
  const withdrawals: { paycheck: PaycheckRow; accountId: string; amountMinor: number }[] = [];
  const result = paychecks.map((paycheck) => {
    const terms = termsByJob.get(paycheck.job_id);
    if (!terms?.earningsBalanceAccountId || paycheck.status !== 'ESTIMATED') return paycheck;
    const target = Math.max(0, accessibleShareMinor(paycheck.net_earnings_minor, terms.policy.accessRateBp));
    const amountMinor = Math.min(
      paycheck.accessible_minor - target,
      paycheck.accessible_minor - paycheck.total_debited_minor,
    );
    if (amountMinor <= 0) return paycheck;
    withdrawals.push({ paycheck, accountId: terms.earningsBalanceAccountId, amountMinor });
    return { ...paycheck, accessible_minor: paycheck.accessible_minor - amountMinor };
  });
  if (withdrawals.length === 0) return { paychecks: result, withdrawnMinor: 0 };
  const { balanceLedger, clearingLedger } = await ledgerAccountsOf(tx, withdrawals);
  await postMovements(
    tx,
    withdrawals.map((w) =>
      earningsWithdrawn({
        paycheckId: w.paycheck.id,
        paycheckClearing: clearingLedger.get(w.paycheck.id) ?? '',
        earningsBalance: balanceLedger.get(w.accountId) ?? '',
        amountMinor: w.amountMinor,
        currency: w.paycheck.currency,
        at: now,
      }),
    ),
  );
  await sql`update paychecks p set accessible_minor = p.accessible_minor - w.amount, updated_at = ${now.toISOString()}::timestamptz
    from unnest(${withdrawals.map((w) => w.paycheck.id)}::uuid[], ${withdrawals.map((w) => w.amountMinor)}::bigint[])
      as w(id, amount)
    where p.id = w.id`.execute(tx);
  return { paychecks: result, withdrawnMinor: withdrawals.reduce((sum, w) => sum + w.amountMinor, 0) };
}
