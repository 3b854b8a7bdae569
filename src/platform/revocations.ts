import type { Db } from '../db/database.ts';

/**
 * What every API process knows of revoked access tokens, refreshed from `oauth_revocations` in the background
 * so that checking a token never waits for the database. A revocation reaches every process within one poll.
 */
export class RevocationList {
  readonly #db: Db;
  readonly #pollMs: number;
  readonly #tokens = new Map<string, number>();
  readonly #grants = new Map<string, number>();
  /** Client id → when it was revoked: tokens issued before then are dead. */
  readonly #clients = new Map<string, number>();
  #since = new Date(0);
  #timer: NodeJS.Timeout | undefined;
  #loaded: Promise<void> | undefined;

  constructor(db: Db, pollMs: number) {
    this.#db = db;
    this.#pollMs = pollMs;
  }

  /** Loads what is revoked now and keeps polling until `stop`. */
  start(): Promise<void> {
    this.#loaded ??= this.refresh().then(() => {
      this.#timer = setInterval(() => {
        this.refresh().catch(() => {}); // a failed poll is retried at the next tick
      }, this.#pollMs);
      this.#timer.unref();
    });
    return this.#loaded;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async refresh(): Promise<void> {
    // Rows committed late can carry an older revoked_at: look back a little further than the last row seen.
    const from = new Date(this.#since.getTime() - 10_000);
    const rows = await this.#db
      .selectFrom('oauth_revocations')
      .select(['kind', 'value', 'revoked_at', 'expires_at'])
      .where('revoked_at', '>=', from)
      .orderBy('revoked_at')
      .limit(100_000)
      .execute();
    const now = Date.now();
    for (const row of rows) {
      const until = row.expires_at.getTime();
      if (until < now) continue;
      if (row.kind === 'TOKEN') this.#tokens.set(row.value, until);
      else if (row.kind === 'GRANT') this.#grants.set(row.value, until);
      else this.#clients.set(row.value, row.revoked_at.getTime());
      if (row.revoked_at > this.#since) this.#since = row.revoked_at;
    }
    for (const map of [this.#tokens, this.#grants]) {
      for (const [key, until] of map) if (until < now) map.delete(key);
    }
  }

  isRevoked(token: {
    jti?: string | undefined;
    grantId?: string | undefined;
    clientId?: string | undefined;
    issuedAtMs: number;
  }): boolean {
    if (token.jti && this.#tokens.has(token.jti)) return true;
    if (token.grantId && this.#grants.has(token.grantId)) return true;
    const clientRevokedAt = token.clientId ? this.#clients.get(token.clientId) : undefined;
    return clientRevokedAt !== undefined && token.issuedAtMs <= clientRevokedAt;
  }
}
