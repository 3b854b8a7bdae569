import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Tx } from '../db/transaction.ts';

export const SYSTEM_KINDS = [
  'EMPLOYER_PAYROLL_CLEARING',
  'PROVIDER_FUNDING',
  'FEE_REVENUE',
  'EXTERNAL_BANK',
  'EXTERNAL_CARD',
  'RETURNS_PAYABLE',
  'OVERPAYMENT_RECEIVABLE',
  'OVERPAYMENT_WRITE_OFF',
] as const;
export type SystemKind = (typeof SYSTEM_KINDS)[number];

/** The one system account with a kept balance (migration 0031): owed back to workers, posted to by returns alone. */
const KEPT_SYSTEM_KIND: SystemKind = 'RETURNS_PAYABLE';

/** The system's ledger accounts for one organization and currency. */
export type SystemAccounts = Readonly<Record<SystemKind, string>>;

/**
 * System ledger accounts are created once, in a transaction of their own that commits before any money moves, so
 * they can be remembered for the life of the process: a remembered id always names a committed row.
 */
export class SystemLedger {
  readonly #db: Db;
  readonly #known = new Map<string, SystemAccounts>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Forgets what it remembered: the sandbox's reset replaced the rows (SandboxClock.onReset). */
  forget(): void {
    this.#known.clear();
  }

  /** Call outside any open transaction (the embedded database has one connection). */
  async accountsFor(organizationId: string, currency: string): Promise<SystemAccounts> {
    const known = await this.existingIn(this.#db, organizationId, currency);
    if (known) return known;
    // No kept balance (null): every advance posts to these, and updating one row each would queue them all. But
    // RETURNS_PAYABLE, which only returns post to, keeps one: what is owed back is read without summing the ledger.
    await sql`insert into ledger_accounts (id, kind, currency, organization_id, balance_minor)
      select gen_random_uuid(), kind, ${currency}, ${organizationId}::uuid,
        case when kind = ${KEPT_SYSTEM_KIND} then 0 end
      from unnest(${[...SYSTEM_KINDS]}::text[]) as k(kind)
      on conflict (kind, currency, organization_id) where account_id is null and paycheck_id is null
      do nothing`.execute(this.#db);
    const made = await this.existingIn(this.#db, organizationId, currency);
    if (!made) throw new Error(`system ledger accounts missing for ${organizationId}/${currency}`);
    return made;
  }

  /**
   * The accounts if they exist, read in any transaction; never creates them. Only `accountsFor` creates them, and
   * it commits before it returns, so what this finds is committed and may be remembered.
   */
  async existingIn(
    runner: Db | Tx,
    organizationId: string,
    currency: string,
  ): Promise<SystemAccounts | undefined> {
    const cacheKey = `${organizationId}/${currency}`;
    const known = this.#known.get(cacheKey);
    if (known) return known;
    const { rows } = await sql<{ id: string; kind: SystemKind }>`select id, kind from ledger_accounts
      where organization_id = ${organizationId}::uuid and currency = ${currency}
        and account_id is null and paycheck_id is null`.execute(runner);
    const accounts = Object.fromEntries(rows.map((row) => [row.kind, row.id])) as SystemAccounts;
    if (SYSTEM_KINDS.some((kind) => !accounts[kind])) return undefined;
    this.#known.set(cacheKey, accounts);
    return accounts;
  }

  async accountsForMany(
    pairs: readonly { organizationId: string; currency: string }[],
  ): Promise<Map<string, SystemAccounts>> {
    const result = new Map<string, SystemAccounts>();
    for (const pair of pairs) {
      const key = `${pair.organizationId}/${pair.currency}`;
      if (!result.has(key)) result.set(key, await this.accountsFor(pair.organizationId, pair.currency));
    }
    return result;
  }
}

/**
 * Ledger accounts of people's earnings balances and of paychecks, created on first use inside the caller's
 * transaction (they roll back with it). Returns owner id → ledger account id.
 */
export async function ensureOwnedLedgerAccounts(
  tx: Tx,
  owner: 'account' | 'paycheck',
  owners: readonly { id: string; currency: string }[],
): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  if (owners.length === 0) return result;
  const column = owner === 'account' ? sql.ref('account_id') : sql.ref('paycheck_id');
  const kind = owner === 'account' ? 'EARNINGS_BALANCE' : 'PAYCHECK_CLEARING';
  const ids = owners.map((o) => o.id);
  const existing = await sql<{ id: string; owner_id: string }>`select id, ${column} as owner_id
    from ledger_accounts where ${column} = any(${ids}::uuid[])`.execute(tx);
  for (const row of existing.rows) result.set(row.owner_id, row.id);
  const missing = owners.filter((o) => !result.has(o.id));
  if (missing.length === 0) return result;
  const created = missing.map((o) => ({ ...o, ledgerId: randomUUID() }));
  await sql`insert into ledger_accounts (id, kind, currency, ${column})
    select * from unnest(${created.map((c) => c.ledgerId)}::uuid[], ${created.map(() => kind)}::text[],
      ${created.map((c) => c.currency)}::char(3)[], ${created.map((c) => c.id)}::uuid[])
    on conflict do nothing`.execute(tx);
  // A concurrent reader (a preview holds no lock) may have created one first; read back what won.
  const settled = await sql<{ id: string; owner_id: string }>`select id, ${column} as owner_id
    from ledger_accounts where ${column} = any(${created.map((c) => c.id)}::uuid[])`.execute(tx);
  for (const row of settled.rows) result.set(row.owner_id, row.id);
  return result;
}
