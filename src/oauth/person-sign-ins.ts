import { sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';
import { REVOCATION_KEPT_MS } from './clients.ts';

/**
 * Ends every sign-in of a person, in the caller's transaction: their grants to every client are revoked (each API
 * process refuses the grants' access tokens within one poll of `oauth_revocations`; refresh tokens and codes are
 * deleted) and their browser sessions end. A password replaced because it was lost may have been found by
 * someone else, who must not keep what they signed in to with it.
 */
export async function endSignIns(tx: Tx, personId: string, now: Date): Promise<{ grants: number }> {
  // The same expression as the index on a person's grants (migration 0013).
  const ofPerson = sql<string>`payload->>'accountId'`;
  const grants = (
    await tx
      .selectFrom('oauth_payloads')
      .select('id')
      .where('model', '=', 'Grant')
      .where(ofPerson, '=', personId)
      .execute()
  ).map((grant) => grant.id);
  if (grants.length > 0) {
    await tx
      .insertInto('oauth_revocations')
      .values(
        grants.map((id) => ({
          kind: 'GRANT' as const,
          value: id,
          expires_at: new Date(now.getTime() + REVOCATION_KEPT_MS),
        })),
      )
      .onConflict((conflict) => conflict.columns(['kind', 'value']).doNothing())
      .execute();
    await tx.deleteFrom('oauth_payloads').where('grant_id', 'in', grants).execute();
    await tx.deleteFrom('oauth_payloads').where('model', '=', 'Grant').where('id', 'in', grants).execute();
  }
  await tx
    .deleteFrom('oauth_payloads')
    .where('model', '=', 'Session')
    .where(ofPerson, '=', personId)
    .execute();
  return { grants: grants.length };
}
