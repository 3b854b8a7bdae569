import { relationship, resourceObject } from '../../platform/serializer.ts';
import { type FeeSchedule, transferDestinations } from './capabilities.ts';
import type { AccountRow } from './store.ts';

/** What an account response needs beyond its row: its ledger balance and its person's fee schedule. */
export interface AccountContext {
  balanceMinor: number | undefined;
  feeSchedule: FeeSchedule | undefined;
  /**
   * False for an earnings balance whose job is not ACTIVATED: an advance from it is refused (INELIGIBLE_ORIGIN), so
   * none of its balance is available to withdraw, though all of it is still current. Undefined where not read.
   */
  advanceOrigin?: boolean;
}

export function accountResource(baseUrl: string, row: AccountRow, context: AccountContext) {
  const currency = row.currency.trim();
  // Only an earnings balance has a balance here; bank accounts and cards are held elsewhere.
  const balance = row.account_type === 'EARNINGS_BALANCE' ? (context.balanceMinor ?? 0) : null;
  return resourceObject(
    baseUrl,
    'accounts',
    row.id,
    {
      name: row.name,
      account_type: row.account_type,
      subtype: row.subtype,
      verification_status: row.verification_status,
      balances: {
        available: balance !== null && context.advanceOrigin === false ? 0 : balance,
        current: balance,
        currency,
      },
      capabilities: { transfer_destination: transferDestinations(row.account_type, context.feeSchedule) },
      details: orderedDetails(row.details),
    },
    { person: relationship('people', row.person_id) },
  );
}

/** The order the description lists detail fields in; the database keeps JSON keys in an order of its own. */
const DETAIL_ORDER = ['first_name', 'last_name', 'routing_number', 'account_number', 'last_four', 'issuer'];

function orderedDetails(details: Record<string, string>): Record<string, string> {
  const rank = (key: string) =>
    DETAIL_ORDER.includes(key) ? DETAIL_ORDER.indexOf(key) : DETAIL_ORDER.length;
  return Object.fromEntries(
    Object.entries(details).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)),
  );
}
