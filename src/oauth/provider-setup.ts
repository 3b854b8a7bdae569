import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { ClientCache } from './client-cache.ts';
import { referencePageSignIn } from './reference-page.ts';
import { loadSigningKeys, type SigningKey } from './signing-keys.ts';

// What the authorization server needs of its provider's setup before the provider itself (provider.ts), which is
// imported only when a request first needs it: oidc-provider's code is a few MB of each process's memory that a
// process serving only the API never uses. Nothing here may import oidc-provider.

/** Where our sign-in and consent pages live. */
export const INTERACTION_PATH = '/interaction';

/** The longest a token signed with a key can live, so retired keys stay in the JWKS that long. */
export function longestSignedTokenLifetimeSeconds(config: Config): number {
  return config.oauth.accessTokenTtlSeconds;
}

export interface ProviderDeps {
  db: Db;
  now: () => Date;
  /** The signing keys, when the caller loaded them (loadProviderKeys) to sign with them too. */
  keys?: SigningKey[];
  /** The clients' cache, when the caller reads clients through it too (providerClients). */
  clients?: ClientCache;
}

/** The registered clients as the provider reads them, with the sandbox reference page's redirect URI added. */
export function providerClients(config: Config, db: Db): ClientCache {
  const page = referencePageSignIn(config);
  return new ClientCache(db, (clientId) => (page?.clientIds.includes(clientId) ? [page.redirectUri] : []));
}

/** The keys the provider signs with and publishes, newest active first. */
export async function loadProviderKeys(config: Config, deps: ProviderDeps): Promise<SigningKey[]> {
  const keys = await loadSigningKeys(
    deps.db,
    config.masterKey,
    deps.now(),
    longestSignedTokenLifetimeSeconds(config),
  );
  // Without keys oidc-provider would sign with its public development keys.
  if (keys.length === 0) throw new Error('no signing key: call ensureSigningKey first');
  return keys;
}
