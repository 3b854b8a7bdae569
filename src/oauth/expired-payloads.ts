import type { Db } from '../db/database.ts';

/** Deletes artifacts that expired more than a minute ago, and revocations of tokens that are dead anyway. */
export async function purgeExpiredPayloads(db: Db, at: Date): Promise<number> {
  const cutoff = new Date(at.getTime() - 60_000);
  const payloads = await db.deleteFrom('oauth_payloads').where('expires_at', '<', cutoff).executeTakeFirst();
  await db.deleteFrom('oauth_revocations').where('expires_at', '<', cutoff).execute();
  return Number(payloads.numDeletedRows);
}
