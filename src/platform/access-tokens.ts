import { createLocalJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import type { Db } from '../db/database.ts';
import { effectiveScopes } from '../oauth/scopes.ts';
import { ACCESS_TOKEN_ALG, loadSigningKeys, publicJwk } from '../oauth/signing-keys.ts';
import type { RevocationList } from './revocations.ts';

/** Who called: a person through a partner app (user token), or a partner app itself (client token). */
export type Caller =
  | { kind: 'user'; personId: string; clientId: string; scopes: Set<string> }
  | { kind: 'client'; clientId: string; scopes: Set<string> };

interface Verified {
  caller: Caller;
  jti: string | undefined;
  grantId: string | undefined;
  issuedAtMs: number;
  expiresAtMs: number;
}

export interface AccessTokenVerifierOptions {
  db: Db;
  masterKey: Buffer;
  issuer: string;
  audience: string;
  revocations: RevocationList;
  cacheMax: number;
  longestTokenLifetimeSeconds: number;
  now?: () => Date;
}

/**
 * Checks bearer tokens without a database round trip: the signature is verified once per token against the keys
 * loaded from the database, and the result is remembered until the token expires; revocation comes from the
 * background-refreshed RevocationList. An unknown key id reloads the keys, at most every few seconds.
 */
export class AccessTokenVerifier {
  readonly #options: AccessTokenVerifierOptions;
  readonly #cache = new Map<string, Verified>();
  #jwks: ReturnType<typeof createLocalJWKSet> | undefined;
  #keysLoadedAt = 0;

  constructor(options: AccessTokenVerifierOptions) {
    this.#options = options;
  }

  #now(): number {
    return (this.#options.now?.() ?? new Date()).getTime();
  }

  /** Loads the verification keys, so that the first request does not wait for them. */
  init(): Promise<void> {
    return this.#loadKeys();
  }

  async #loadKeys(): Promise<void> {
    const keys = await loadSigningKeys(
      this.#options.db,
      this.#options.masterKey,
      new Date(this.#now()),
      this.#options.longestTokenLifetimeSeconds,
    );
    this.#jwks = createLocalJWKSet({ keys: keys.map((key) => publicJwk(key.jwk)) });
    this.#keysLoadedAt = Date.now();
  }

  /** The caller a token stands for, or undefined when it is not a live access token of this server. */
  async verify(token: string): Promise<Caller | undefined> {
    const now = this.#now();
    let verified = this.#cache.get(token);
    if (verified && verified.expiresAtMs <= now) {
      this.#cache.delete(token);
      verified = undefined;
    }
    if (!verified) {
      verified = await this.#verifySignature(token);
      if (!verified) return undefined;
      if (this.#cache.size >= this.#options.cacheMax) {
        // Maps iterate in insertion order: dropping the first entry drops the oldest.
        this.#cache.delete(this.#cache.keys().next().value!);
      }
      this.#cache.set(token, verified);
    }
    const { jti, grantId, issuedAtMs } = verified;
    if (this.#options.revocations.isRevoked({ jti, grantId, clientId: verified.caller.clientId, issuedAtMs }))
      return undefined;
    return verified.caller;
  }

  async #verifySignature(token: string): Promise<Verified | undefined> {
    if (!isCanonicalCompactJws(token)) return undefined;
    if (!this.#jwks) await this.#loadKeys();
    let payload: JWTPayload;
    try {
      payload = await this.#jwtVerify(token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || Date.now() - this.#keysLoadedAt < 5_000)
        return undefined;
      await this.#loadKeys(); // a key made by `ewa keys rotate` since we loaded ours
      try {
        payload = await this.#jwtVerify(token);
      } catch {
        return undefined;
      }
    }
    return toVerified(payload);
  }

  #jwtVerify(token: string): Promise<JWTPayload> {
    return jwtVerify(token, this.#jwks!, {
      issuer: this.#options.issuer,
      audience: this.#options.audience,
      algorithms: [ACCESS_TOKEN_ALG],
      typ: 'at+jwt',
      currentDate: new Date(this.#now()),
    }).then((result) => result.payload);
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Three parts in base64url as its encoder writes them: no padding, no spare bits set in a part's last character.
 * A decoder reads a token padded, or with those bits changed, as the same one; each such spelling would be its
 * own entry in the cache of verified tokens, so one holder of a token could push the others' tokens out of it.
 * (An ECDSA signature has one other valid form, s replaced by n − s: at most two entries a token.)
 */
function isCanonicalCompactJws(token: string): boolean {
  const parts = token.split('.');
  return (
    parts.length === 3 &&
    parts.every(
      (part) => BASE64URL.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part,
    )
  );
}

function toVerified(payload: JWTPayload): Verified | undefined {
  const clientId = typeof payload.client_id === 'string' ? payload.client_id : undefined;
  if (!clientId || typeof payload.exp !== 'number' || typeof payload.iat !== 'number') return undefined;
  const scopes = effectiveScopes(typeof payload.scope === 'string' ? payload.scope : '');
  const caller: Caller =
    typeof payload.sub === 'string' && payload.sub !== clientId
      ? { kind: 'user', personId: payload.sub, clientId, scopes }
      : { kind: 'client', clientId, scopes };
  return {
    caller,
    jti: payload.jti,
    grantId: typeof payload.grant_id === 'string' ? payload.grant_id : undefined,
    issuedAtMs: payload.iat * 1000,
    expiresAtMs: payload.exp * 1000,
  };
}
