import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import { open, seal } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';

/**
 * Access tokens are signed ES256: about six times faster to sign than RS256 here, and each API process verifies a
 * token only once. ID tokens keep RS256, the algorithm every OpenID Connect client accepts.
 */
export const ACCESS_TOKEN_ALG = 'ES256';
export const ID_TOKEN_ALG = 'RS256';
const ALGORITHMS = [ACCESS_TOKEN_ALG, ID_TOKEN_ALG] as const;
const PURPOSE = 'OAUTH_SIGNING';

export interface SigningKey {
  kid: string;
  alg: string;
  createdAt: Date;
  retiredAt: Date | null;
  /** Private JWK with kid, alg and use. */
  jwk: JWK;
}

const context = (kid: string) => `signing-key:${kid}`;

function newKey(masterKey: Buffer, alg: (typeof ALGORITHMS)[number]): { kid: string; sealed: Buffer } {
  const { privateKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(12).toString('base64url');
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  return { kid, sealed: seal(masterKey, JSON.stringify(jwk), context(kid)) };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

/**
 * Makes sure each algorithm has one active signing key, generating them on the first start. Processes starting
 * together race on a unique index; the loser finds the winner's key.
 */
export async function ensureSigningKey(db: Db, masterKey: Buffer): Promise<void> {
  const active = await db
    .selectFrom('signing_keys')
    .select('alg')
    .where('purpose', '=', PURPOSE)
    .where('retired_at', 'is', null)
    .execute();
  for (const alg of ALGORITHMS) {
    if (active.some((row) => row.alg === alg)) continue;
    const { kid, sealed } = newKey(masterKey, alg);
    try {
      await db
        .insertInto('signing_keys')
        .values({ kid, purpose: PURPOSE, alg, private_key_enc: sealed })
        .execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
}

/** Retires the active keys and makes new ones; the old ones verify until `loadSigningKeys` drops them. */
export async function rotateSigningKey(db: Db, masterKey: Buffer, now: Date): Promise<string[]> {
  const fresh = ALGORITHMS.map((alg) => ({ alg, ...newKey(masterKey, alg) }));
  await withTransaction(db, async (tx) => {
    await tx
      .updateTable('signing_keys')
      .set({ retired_at: now })
      .where('purpose', '=', PURPOSE)
      .where('retired_at', 'is', null)
      .execute();
    await tx
      .insertInto('signing_keys')
      .values(fresh.map(({ kid, alg, sealed }) => ({ kid, purpose: PURPOSE, alg, private_key_enc: sealed })))
      .execute();
  });
  return fresh.map((key) => key.kid);
}

/**
 * The keys that sign or verify now: active ones first (the first key of an algorithm signs), then retired ones
 * whose tokens may still be alive, newest first. A key retired longer ago than the longest token lifetime
 * verifies nothing and is left out.
 */
export async function loadSigningKeys(
  db: Db,
  masterKey: Buffer,
  now: Date,
  longestTokenLifetimeSeconds: number,
): Promise<SigningKey[]> {
  const oldest = new Date(now.getTime() - longestTokenLifetimeSeconds * 1000);
  const rows = await db
    .selectFrom('signing_keys')
    .selectAll()
    .where('purpose', '=', PURPOSE)
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', oldest)]))
    .execute();
  rows.sort((a, b) => {
    if ((a.retired_at === null) !== (b.retired_at === null)) return a.retired_at === null ? -1 : 1;
    return b.created_at.getTime() - a.created_at.getTime();
  });
  return rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    createdAt: row.created_at,
    retiredAt: row.retired_at,
    jwk: JSON.parse(open(masterKey, row.private_key_enc, context(row.kid)).toString('utf8')) as JWK,
  }));
}

/** The public half of a private JWK, for verifiers and the JWKS endpoint. */
export function publicJwk(jwk: JWK): JWK {
  const { kty, n, e, crv, x, y, kid, alg, use } = jwk;
  return Object.fromEntries(
    Object.entries({ kty, n, e, crv, x, y, kid, alg, use }).filter(([, v]) => v !== undefined),
  ) as JWK;
}
