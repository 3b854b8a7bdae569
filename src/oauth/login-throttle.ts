import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

const BACKOFF_BASE_SECONDS = 30;
const BACKOFF_MAX_SECONDS = 15 * 60;
/** An address is shared by many people (offices, carriers): it gets more tries than one account. */
export const ADDRESS_FACTOR = 4;

export const accountKey = (email: string) => `account:${email}`;
export const addressKey = (ip: string) => `ip:${ip}`;

/** Seconds to wait before another try on any of these keys; 0 when none is locked. */
export async function secondsUntilAllowed(db: Db, keys: string[], now: Date): Promise<number> {
  const rows = await db
    .selectFrom('login_throttle')
    .select('locked_until')
    .where('key', 'in', keys)
    .execute();
  const waits = rows.map((row) =>
    row.locked_until ? (row.locked_until.getTime() - now.getTime()) / 1000 : 0,
  );
  return Math.max(0, ...waits.map(Math.ceil));
}

/**
 * Counts a failure; from the `threshold`-th one on, each further failure locks the key for a backoff that doubles,
 * from 30 s up to 15 minutes. Shared through the database, so every process counts the same tries.
 */
export async function recordFailure(db: Db, key: string, threshold: number, now: Date): Promise<void> {
  await sql`
    insert into login_throttle (key, failures, locked_until, updated_at)
    values (${key}, 1, ${threshold <= 1 ? new Date(now.getTime() + BACKOFF_BASE_SECONDS * 1000) : null}, ${now})
    on conflict (key) do update set
      failures = login_throttle.failures + 1,
      updated_at = ${now},
      locked_until = case when login_throttle.failures + 1 >= ${threshold}
        then ${now}::timestamptz + make_interval(secs => least(${BACKOFF_MAX_SECONDS},
          ${BACKOFF_BASE_SECONDS} * power(2, login_throttle.failures + 1 - ${threshold})))
        else null end`.execute(db);
}

export async function recordSuccess(db: Db, key: string): Promise<void> {
  await db.deleteFrom('login_throttle').where('key', '=', key).execute();
}
