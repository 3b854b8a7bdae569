import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';

const BACKOFF_BASE_SECONDS = 30;
const BACKOFF_MAX_SECONDS = 15 * 60;
/** A key with no try for this long starts counting again from zero (unless it is locked right now). */
export const FAILURES_FORGOTTEN_AFTER_SECONDS = 60 * 60;

/** One counter a sign-in try is counted on, and how many tries it allows before each further one must wait. */
export interface ThrottleKey {
  key: string;
  threshold: number;
}

/** The tries of one account from one address: a locked account stays open from every other address. */
export const accountAtAddressKey = (email: string, ip: string) => `account:${ip} ${email}`;
/** Every try from one address, whatever the account: a ceiling for an attacker who tries many accounts. */
export const addressKey = (ip: string) => `address:${ip}`;

/** Admitted, with the count each key reached by this try (`recordSuccess` tells its own lock by it). */
export type Admission =
  | { admitted: true; counts: ReadonlyMap<string, number> }
  | { admitted: false; retryAfterSeconds: number };

/**
 * Counts a try on every key before its password is checked, in one transaction that holds the keys' rows
 * (`FOR UPDATE`): either no key is locked and the try is counted on all of them, or it is refused and counted
 * on none. Parallel tries queue on the row lock, so however many arrive at once, at most `threshold` of them are
 * checked before the key locks; this holds across processes, which share nothing but the database. From the
 * `threshold`-th counted try on, each further one locks its key for a backoff that doubles, from 30 s up to
 * 15 minutes. A try that then succeeds gives its count back (`recordSuccess`).
 */
export async function admitAttempt(db: Db, keys: readonly ThrottleKey[], now: Date): Promise<Admission> {
  const ordered = [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return withTransaction(db, async (tx) => {
    // In key order, as the lock below: two tries never wait on each other's rows the other way round.
    await tx
      .insertInto('login_throttle')
      .values(ordered.map(({ key }) => ({ key, failures: 0, locked_until: null, updated_at: now })))
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute();
    const rows = await tx
      .selectFrom('login_throttle')
      .select(['key', 'failures', 'locked_until', 'updated_at'])
      .where(
        'key',
        'in',
        ordered.map(({ key }) => key),
      )
      .orderBy('key')
      .forUpdate()
      .execute();
    const waits = rows
      .filter((row) => row.locked_until && row.locked_until > now)
      .map((row) => Math.ceil((row.locked_until!.getTime() - now.getTime()) / 1000));
    if (waits.length > 0) return { admitted: false, retryAfterSeconds: Math.max(1, ...waits) };
    const forgottenBefore = now.getTime() - FAILURES_FORGOTTEN_AFTER_SECONDS * 1000;
    const counts = new Map<string, number>();
    for (const { key, threshold } of ordered) {
      const row = rows.find((candidate) => candidate.key === key)!;
      const updatedAt = new Date(row.updated_at);
      const count = (updatedAt.getTime() < forgottenBefore ? 0 : row.failures) + 1;
      await tx
        .updateTable('login_throttle')
        .set({ failures: count, locked_until: lockedUntil(count, threshold, now), updated_at: now })
        .where('key', '=', key)
        .execute();
      counts.set(key, count);
    }
    return { admitted: true, counts };
  });
}

function lockedUntil(count: number, threshold: number, now: Date): Date | null {
  if (count < threshold) return null;
  const seconds = Math.min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.min(count - threshold, 20));
  return new Date(now.getTime() + seconds * 1000);
}

/**
 * A counted try that succeeded (`admission` is its own). `reset` keys start again from nothing (the person proved
 * the password of that account); the others only get this try back, and a success never leaves a key more locked
 * than it was: the key was open when this try was admitted, so a lock there now is this try's own (its count
 * still the one it reached: it goes), unless later tries were counted since and the count given back still
 * reaches the threshold (their lock stays, unchanged). One statement per key: processes share the row.
 */
export async function recordSuccess(
  db: Db,
  admission: Extract<Admission, { admitted: true }>,
  outcome: { reset: readonly ThrottleKey[]; giveBack: readonly ThrottleKey[] },
): Promise<void> {
  const reset = outcome.reset.map(({ key }) => key);
  if (reset.length > 0) await db.deleteFrom('login_throttle').where('key', 'in', reset).execute();
  for (const { key, threshold } of outcome.giveBack) {
    const counted = admission.counts.get(key);
    if (counted === undefined) throw new Error(`recordSuccess: ${key} was not counted by this admission`);
    await sql`
      update login_throttle set
        failures = greatest(failures - 1, 0),
        locked_until = case when failures > ${counted} and failures - 1 >= ${threshold} then locked_until else null end
      where key = ${key}`.execute(db);
  }
}
