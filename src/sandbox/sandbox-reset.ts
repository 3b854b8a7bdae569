import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { claimDemoDataIn, DEMO, DEMO_SETTING, type DemoSeedOutcome, seedDemoDataOnce } from '../seed/demo.ts';
import type { SandboxClock } from './sandbox-clock.ts';
import { SANDBOX_OFFSET_SETTING, SANDBOX_RESET_SETTING } from './sandbox-clock.ts';
import { SandboxLease } from './sandbox-lease.ts';

/**
 * The tables whose rows the demo data and what partners did with it are made of: employers, people, jobs, accounts
 * and cards, earnings, paychecks, transfers, the ledger, the answers kept under idempotency keys, the scheduled runs
 * (an advanced clock leaves runs of days still to come, which would keep the jobs from running on them again) and
 * the ACH entries and returns of those accounts. Named one by one: a table not listed is never emptied, and one
 * added later that refers to these makes the reset fail (TRUNCATE refuses it) rather than lose its rows quietly.
 * `oauth_client_organizations` refers to organizations: the links of clients to the demo employers are put back.
 */
const DEMO_TABLES = [
  'ledger_entries',
  'ledger_postings',
  'ledger_accounts',
  'funding_sources',
  // The sandbox's own made-up records: the two-year retention of transfer_disclosures is for real ones.
  'transfer_disclosures',
  'disclosure_acceptances',
  // Complaints of the demo's people and employers (test/e2e or a partner trying the operator API) are made up too.
  'complaints',
  // What the operator recorded paid of the demo's returns.
  'returns_repaid',
  'transfers',
  'overpayments',
  'earnings',
  'paychecks',
  'ach_returns',
  // Notifications of change about the demo's entries; the return files themselves, and returns that matched none
  // of ours, are the operator's records and stay.
  'ach_change_notifications',
  'ach_entries',
  'jobs',
  'accounts',
  'card_vault',
  // Codes issued to the demo's people: their passwords go with them.
  'invitations',
  'people',
  'organization_policies',
  'organizations',
  'oauth_client_organizations',
  'idempotency_keys',
  'scheduled_runs',
] as const;

export interface ResetOptions {
  db: Db;
  config: Config;
  clock: SandboxClock;
  soleProcess: boolean;
}

export interface ResetReport {
  /** BEING_MADE: another process is making the money history (it was there to make it first). */
  demo: Extract<DemoSeedOutcome, 'SEEDED' | 'BEING_MADE'>;
  /** The sandbox's time after the reset: real time. */
  now: Date;
}

/**
 * Puts the sandbox back to its demo data as a first start leaves it, as of now, with the clock at real time. One
 * transaction empties DEMO_TABLES and the rail instructions still in the outbox, and writes the demo employers,
 * people, jobs and accounts again with the demo data's claim; the money history is then made as `ewa seed` makes
 * it (each step its own transaction, finished by the next start or seed if this process dies meanwhile). Kept:
 * OAuth clients (and their links to the demo employers), signing keys, tokens, webhook endpoints and their events
 * and deliveries, ACH files already exchanged, and every table not listed. Holds the sandbox lease, so it never
 * runs beside an advance.
 */
export async function resetSandbox(options: ResetOptions): Promise<ResetReport> {
  const { db, config, clock } = options;
  const lease = await SandboxLease.take(db, {
    realNow: clock.realNow,
    soleProcess: options.soleProcess,
    what: 'reset',
  });
  try {
    const now = clock.realNow();
    await withTransaction(db, async (tx) => {
      const demoOrganizations = Object.values(DEMO.organizations).map((organization) => organization.id);
      const links = await tx
        .selectFrom('oauth_client_organizations')
        .selectAll()
        .where('organization_id', 'in', demoOrganizations)
        .execute();
      await sql`delete from outbox where topic = 'rail.payment'`.execute(tx);
      await sql`truncate ${sql.join(DEMO_TABLES.map((table) => sql.table(table)))}`.execute(tx);
      await tx
        .deleteFrom('app_settings')
        .where('key', 'in', [DEMO_SETTING, SANDBOX_OFFSET_SETTING])
        .execute();
      await claimDemoDataIn(tx, now, config);
      // Every process on the database notices this and forgets the records it replaced (SandboxClock.onReset).
      const mark = JSON.stringify(`${now.toISOString()} ${randomUUID()}`);
      await tx
        .insertInto('app_settings')
        .values({ key: SANDBOX_RESET_SETTING, value: mark })
        .onConflict((conflict) => conflict.column('key').doUpdateSet({ value: mark, updated_at: now }))
        .execute();
      if (links.length > 0)
        await tx
          .insertInto('oauth_client_organizations')
          .values(links)
          .onConflict((conflict) => conflict.doNothing())
          .execute();
    });
    clock.release(0);
    // This process notices its own reset at once (the others within a refresh).
    await clock.refresh();
    // The claim was made above, so seeding finishes the history; another process may have made it meanwhile.
    const made = await seedDemoDataOnce(db, now, config, { soleProcess: options.soleProcess });
    return { demo: made === 'BEING_MADE' ? made : 'SEEDED', now };
  } finally {
    await lease.release();
  }
}
