import { relationship, resourceObject } from '../../platform/serializer.ts';
import { type FeeSchedule, transferDestinations } from './capabilities.ts';
import type { AccountRow } from './store.ts';

/** What an account response needs beyond its row: its ledger balance and its person's fee schedule. */
export interface AccountContext {
  balanceMinor: number | undefined;
  feeSchedule: FeeSchedule | undefined;
}

export function accountResource(baseUrl: string, row: AccountRow, context: AccountContext) {
  const currency = row.currency.trim();
  // Only an earnings balance has a balance here; bank accounts and cards are held elsewhere.
  const balance = row.account_type === 'EARNINGS_BALANCE' ? Math.max(0, context.balanceMinor ?? 0) : null;
  return resourceObject(
    baseUrl,
    'accounts',
    row.id,
    {
      name: row.name,
      account_type: row.account_type,
      subtype: row.subtype,
      verification_status: row.verification_status,
      balances: { available: balance, current: balance, currency },
      capabilities: { transfer_destination: transferDestinations(row.account_type, context.feeSchedule) },
      details: row.details,
    },
    { person: relationship('people', row.person_id) },
  );
}
