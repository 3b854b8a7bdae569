import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import { open, seal } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';

export const SIGNING_ALG = 'RS256';
const PURPOSE = 'OAUTH_SIGNING';

export interface SigningKey {
  kid: string;
  createdAt: Date;
  retiredAt: Date | null;
  /** Private JWK with kid, alg and use. */
  jwk: JWK;
}

const context = (kid: string) => `signing-key:${kid}`;

function newKey(masterKey: Buffer): { kid: string; sealed: Buffer } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(12).toString('base64url');
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: SIGNING_ALG, use: 'sig' };
  return { kid, sealed: seal(masterKey, JSON.stringify(jwk), context(kid)) };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

/**
 * Makes sure there is one active signing key, generating it on the first start. Processes starting together race
 * on a unique index; the loser finds the winner's key.
 */
export async function ensureSigningKey(db: Db, masterKey: Buffer): Promise<void> {
  const active = await db
    .selectFrom('signing_keys')
    .select('kid')
    .where('purpose', '=', PURPOSE)
    .where('retired_at', 'is', null)
    .executeTakeFirst();
  if (active) return;
  const { kid, sealed } = newKey(masterKey);
  try {
    await db
      .insertInto('signing_keys')
      .values({ kid, purpose: PURPOSE, alg: SIGNING_ALG, private_key_enc: sealed })
      .execute();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
}

/** Retires the active key and makes a new one active; the old one still verifies until `loadSigningKeys` drops it. */
export async function rotateSigningKey(db: Db, masterKey: Buffer, now: Date): Promise<string> {
  const { kid, sealed } = newKey(masterKey);
  await withTransaction(db, async (tx) => {
    await tx
      .updateTable('signing_keys')
      .set({ retired_at: now })
      .where('purpose', '=', PURPOSE)
      .where('retired_at', 'is', null)
      .execute();
    await tx
      .insertInto('signing_keys')
      .values({ kid, purpose: PURPOSE, alg: SIGNING_ALG, private_key_enc: sealed })
      .execute();
  });
  return kid;
}

/**
 * The keys that sign or verify now: the active one first (it signs), then retired ones whose tokens may still be
 * alive, newest first. A key retired longer ago than the longest token lifetime verifies nothing and is left out.
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
