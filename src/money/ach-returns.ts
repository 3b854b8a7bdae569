import type { Tx } from '../db/transaction.ts';
import type { SystemLedger } from '../ledger/ledger-accounts.ts';
import type { MatchedReturn } from '../rails/ach/ach-rail.ts';
import { failPaycheckPayouts, resolveAdvances } from './settlement.ts';

/**
 * Applies ACH returns in the transaction that records their file: an advance not yet settled fails, one settled is
 * returned (the money comes back by new entries); a paycheck's payout is owed to the worker again. Each once.
 */
export async function applyAchReturns(
  tx: Tx,
  ledger: SystemLedger,
  returns: readonly MatchedReturn[],
  now: Date,
): Promise<void> {
  const advances = returns.filter((r) => r.purpose === 'ADVANCE');
  const paychecks = returns.filter((r) => r.purpose === 'PAYCHECK');
  if (advances.length > 0)
    await resolveAdvances(
      tx,
      ledger,
      advances.map((r) => ({ reference: r.reference, status: 'RETURNED', reason: r.returnCode })),
      now,
    );
  if (paychecks.length > 0)
    await failPaycheckPayouts(
      tx,
      ledger,
      paychecks.map((r) => ({ reference: r.reference, reason: r.returnCode })),
      now,
    );
}
