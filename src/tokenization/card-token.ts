import { createECDH, randomUUID } from 'node:crypto';
import { EncryptJWT, importJWK, type JWK, jwtDecrypt } from 'jose';
import type { KeyEntry } from '../config.ts';

/** What a card token carries: the card as the cardholder typed it. The CVV is never put in a token. */
export interface CardData {
  card_number: string;
  expiration_month: string;
  expiration_year: string;
  first_name: string;
  last_name: string;
  address_line_one: string;
  address_line_two?: string | undefined;
  address_city: string;
  address_state: string;
  address_zip_code: string;
  address_country: string;
}

export interface OpenedCardToken {
  jti: string;
  expiresAt: Date;
  card: CardData;
}

/** Any token that cannot be used: tampered with, expired, of another key or malformed. The reason is for logs. */
export class CardTokenError extends Error {
  override name = 'CardTokenError';
}

const ALG = 'ECDH-ES+A256KW';
const ENC = 'A256GCM';
const TOKEN_LENGTH_MAX = 4096;

type CryptoKeyLike = Awaited<ReturnType<typeof importJWK>>;

/**
 * Card tokens are compact JWEs (ECDH-ES+A256KW on P-256, A256GCM) with an id, an issue time and an expiry. They
 * are encrypted to a public key, so the tokenization side could run without any means to read them; only the
 * vault's side, with the private key, opens them. Keys rotate by `kid`: the first key of the list encrypts, every
 * key decrypts.
 */
export class CardTokenKeys {
  readonly #current: { kid: string; publicKey: CryptoKeyLike };
  readonly #privateKeys: Map<string, CryptoKeyLike>;

  private constructor(
    current: { kid: string; publicKey: CryptoKeyLike },
    privateKeys: Map<string, CryptoKeyLike>,
  ) {
    this.#current = current;
    this.#privateKeys = privateKeys;
  }

  static async fromConfig(keys: readonly KeyEntry[]): Promise<CardTokenKeys> {
    const privateKeys = new Map<string, CryptoKeyLike>();
    let current: { kid: string; publicKey: CryptoKeyLike } | undefined;
    for (const { kid, key } of keys) {
      const jwk = p256Jwk(key);
      privateKeys.set(kid, await importJWK({ ...jwk, alg: ALG }, ALG));
      if (!current) {
        const { d: _private, ...publicJwk } = jwk;
        current = { kid, publicKey: await importJWK({ ...publicJwk, alg: ALG }, ALG) };
      }
    }
    if (!current) throw new Error('no card token key');
    return new CardTokenKeys(current, privateKeys);
  }

  async issue(
    card: CardData,
    now: Date,
    ttlSeconds: number,
  ): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const jti = randomUUID();
    const issuedAt = Math.floor(now.getTime() / 1000);
    const token = await new EncryptJWT({ card })
      .setProtectedHeader({ alg: ALG, enc: ENC, kid: this.#current.kid, typ: 'card+jwt' })
      .setJti(jti)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .encrypt(this.#current.publicKey);
    return { token, jti, expiresAt: new Date((issuedAt + ttlSeconds) * 1000) };
  }

  async open(token: string, now: Date): Promise<OpenedCardToken> {
    if (typeof token !== 'string' || token.length === 0 || token.length > TOKEN_LENGTH_MAX) {
      throw new CardTokenError('not a card token');
    }
    try {
      const { payload } = await jwtDecrypt(
        token,
        async (header) => {
          const key = header.kid === undefined ? undefined : this.#privateKeys.get(header.kid);
          if (!key) throw new CardTokenError(`unknown key id ${String(header.kid)}`);
          return key;
        },
        {
          currentDate: now,
          keyManagementAlgorithms: [ALG],
          contentEncryptionAlgorithms: [ENC],
          typ: 'card+jwt',
          requiredClaims: ['jti', 'exp', 'iat'],
        },
      );
      const card = payload.card as CardData | undefined;
      if (!card || typeof card.card_number !== 'string') throw new CardTokenError('no card in the token');
      return { jti: payload.jti!, expiresAt: new Date(payload.exp! * 1000), card };
    } catch (error) {
      if (error instanceof CardTokenError) throw error;
      throw new CardTokenError((error as Error).message);
    }
  }
}

/** A P-256 key pair as a JWK from a 32-byte private scalar; Node computes the public point. */
function p256Jwk(scalar: Buffer): JWK {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(scalar);
  const point = ecdh.getPublicKey();
  return {
    kty: 'EC',
    crv: 'P-256',
    d: scalar.toString('base64url'),
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
}
