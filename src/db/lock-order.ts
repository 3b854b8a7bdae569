import { sql } from 'kysely';
import type { Tx } from './transaction.ts';

/**
 * Row locks: which transaction takes which, and in what order.
 *
 * A check and the write that relies on it (an advance checks the destination, then writes a transfer to it) are
 * sound only if nothing can change what was checked before the write commits. So a transaction that checks takes a
 * lock before it reads what it checks, and holds it to commit; every writer of what it checks takes the same lock
 * (or a conflicting mode of it) before it reads and writes. And the check reads in a statement that begins after
 * the lock was granted: under READ COMMITTED, a statement that waited for a row lock still reads the other tables
 * as they were when it began. docs/design/concurrency.md lists each pair and its lock.
 *
 * Every transaction takes the locks it waits for in this order, so no two wait for each other in a cycle:
 *   1. organizations, in id order: FOR UPDATE to change a policy (operator/organizations.ts), FOR NO KEY UPDATE by
 *      a roster import batch (operator/roster-store.ts), FOR KEY SHARE by advances, for the policy they read. KEY
 *      SHARE conflicts only with FOR UPDATE, so advances and imports never wait for each other here; and a policy
 *      change locks nothing else, so a KEY SHARE taken later (a foreign key check does) cannot close a cycle.
 *   2. people, in id order, FOR UPDATE (lockPeople below): every transaction that moves a person's money
 *      (advances, earnings credits, payroll, settlement) and every writer of what an advance or a sign-up reads
 *      about a person: their jobs (PATCH /rest/jobs, operator activation, roster import), their accounts (DELETE
 *      /rest/accounts/{id}; adding one), their details (PATCH /rest/people, roster import), their acceptance of a
 *      disclosure (POST /rest/people/{id}/disclosure_acceptances), their password and invitation codes (sign-up,
 *      `ewa people invite`).
 *   3. then that person's own rows the transaction changes (jobs, accounts, paychecks, transfers, and the ledger
 *      accounts of their earnings balances and paychecks, whose kept balance each posting updates: ledger/posting.ts),
 *      and the card number's advisory lock of a card being added. Jobs and accounts are locked only under their
 *      person's lock. The system's ledger accounts, which every advance posts to, keep no balance and take no lock
 *      but the foreign key's KEY SHARE, so advances of different people never wait for each other there.
 * A transaction that needs no lock of a level skips it. The idempotency keys' advisory locks are only tried, never
 * waited for, and stand outside the order.
 */

/** Locks people in id order (level 2), so that any two transactions over overlapping people cannot deadlock. */
export async function lockPeople(tx: Tx, personIds: readonly string[]): Promise<void> {
  const ids = [...new Set(personIds)].sort();
  if (ids.length === 0) return;
  await sql`select id from people where id = any(${ids}::uuid[]) order by id for update`.execute(tx);
}
