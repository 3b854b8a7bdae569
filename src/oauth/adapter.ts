import { errors } from 'oidc-provider';
import type { Db } from '../db/database.ts';
import { ClientCache, namesNothing } from './client-cache.ts';
import { REVOCATION_KEPT_MS } from './clients.ts';

/** What oidc-provider hands its adapter and expects back (see its docs: "Adapter"). */
export type Payload = Record<string, unknown> & {
  grantId?: string;
  userCode?: string;
  uid?: string;
  consumed?: number;
};

/**
 * oidc-provider's storage on our database, one row per artifact in `oauth_payloads`, so sessions, grants and
 * tokens survive restarts and are shared by every process. Expired rows read as absent and are purged by
 * `purgeExpiredPayloads` (expired-payloads.ts). Revoking a grant also records it in `oauth_revocations`, which is how API processes
 * learn that access tokens they verify on their own are dead. Clients are read through `clients`, a cache the
 * caller may share with what else reads them (the plain client_credentials path).
 */
export function databaseAdapter(db: Db, now: () => Date, clients = new ClientCache(db, () => [])) {
  return class DatabaseAdapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const expiresAt = expiresIn ? new Date(now().getTime() + expiresIn * 1000) : null;
      const row = {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        expires_at: expiresAt,
      };
      await db
        .insertInto('oauth_payloads')
        .values(row)
        .onConflict((conflict) =>
          conflict.columns(['model', 'id']).doUpdateSet({
            payload: row.payload,
            grant_id: row.grant_id,
            user_code: row.user_code,
            uid: row.uid,
            expires_at: row.expires_at,
          }),
        )
        .execute();
    }

    async #findWhere(column: 'id' | 'uid' | 'user_code', value: string): Promise<Payload | undefined> {
      if (namesNothing(value)) return undefined;
      const row = await db
        .selectFrom('oauth_payloads')
        .select(['payload', 'consumed_at', 'expires_at'])
        .where('model', '=', this.model)
        .where(column, '=', value)
        .executeTakeFirst();
      if (!row || (row.expires_at && row.expires_at <= now())) return undefined;
      const payload = row.payload as Payload;
      return row.consumed_at
        ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) }
        : payload;
    }

    async find(id: string) {
      // Clients are registered out of band in their own table (see ClientCache for how fresh).
      if (this.model === 'Client') return clients.get(id);
      return this.#findWhere('id', id);
    }

    findByUid(uid: string) {
      return this.#findWhere('uid', uid);
    }

    findByUserCode(userCode: string) {
      return this.#findWhere('user_code', userCode);
    }

    /**
     * The provider reads an artifact, sees it unused, then consumes it: two requests racing with one code or
     * refresh token would both pass that check. So the claim is one conditional update, and the request that
     * loses it is a replay, answered as the provider answers one that comes later: invalid_grant, and the whole
     * grant revoked, tokens issued to the winner included.
     */
    async consume(id: string): Promise<void> {
      const replayed = SINGLE_USE[this.model];
      const claimed = await db
        .updateTable('oauth_payloads')
        .set({ consumed_at: now() })
        .where('model', '=', this.model)
        .where('id', '=', id)
        .$if(replayed !== undefined, (update) => update.where('consumed_at', 'is', null))
        .executeTakeFirst();
      if (claimed.numUpdatedRows > 0n || replayed === undefined) return;
      const row = await db
        .selectFrom('oauth_payloads')
        .select('grant_id')
        .where('model', '=', this.model)
        .where('id', '=', id)
        .executeTakeFirst();
      if (row?.grant_id) await this.revokeByGrantId(row.grant_id, { grantToo: true });
      throw new errors.InvalidGrant(replayed);
    }

    async destroy(id: string): Promise<void> {
      await db.deleteFrom('oauth_payloads').where('model', '=', this.model).where('id', '=', id).execute();
    }

    async revokeByGrantId(grantId: string, options: { grantToo?: boolean } = {}): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('oauth_revocations')
          .values({
            kind: 'GRANT',
            value: grantId,
            expires_at: new Date(now().getTime() + REVOCATION_KEPT_MS),
          })
          .onConflict((conflict) => conflict.columns(['kind', 'value']).doNothing())
          .execute();
        await tx.deleteFrom('oauth_payloads').where('grant_id', '=', grantId).execute();
        // The provider destroys the grant itself after revoking its tokens; a replay found here has no provider to.
        if (options.grantToo)
          await tx
            .deleteFrom('oauth_payloads')
            .where('model', '=', 'Grant')
            .where('id', '=', grantId)
            .execute();
      });
    }
  };
}

/** The artifacts a grant is redeemed with, each once, and what the provider says when one is used again. */
const SINGLE_USE: Record<string, string> = {
  AuthorizationCode: 'authorization code already consumed',
  RefreshToken: 'refresh token already used',
  DeviceCode: 'device code already consumed',
  BackchannelAuthenticationRequest: 'backchannel authentication request already consumed',
};
