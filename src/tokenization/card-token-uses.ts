import type { Db } from '../db/database.ts';

/**
 * Marks a card token as spent; false when it already was. A token is spent by the first attempt that opens it,
 * whatever that attempt's outcome, so that one token cannot be replayed to probe the checks that follow. The row
 * is kept until the token would have expired anyway, then purged.
 */
export async function spendCardToken(db: Db, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
  await db.deleteFrom('card_token_uses').where('expires_at', '<', now).execute();
  const spent = await db
    .insertInto('card_token_uses')
    .values({ token_id: jti, used_at: now, expires_at: expiresAt })
    .onConflict((conflict) => conflict.column('token_id').doNothing())
    .returning('token_id')
    .executeTakeFirst();
  return spent !== undefined;
}
