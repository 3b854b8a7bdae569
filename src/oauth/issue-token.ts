import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { findClient } from './clients.ts';
import { createProvider } from './provider.ts';
import { USER_SCOPES } from './scopes.ts';
import { ACCESS_TOKEN_ALG, ensureSigningKey } from './signing-keys.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  created_at: number;
}

/**
 * Mints a user access token as if the person had signed in and allowed `scopes` for the client: a real grant
 * and a real token of the provider, for sandbox scripts and tests. Refused outside the sandbox.
 */
export async function issueUserToken(
  config: Config,
  db: Db,
  input: { personId: string; clientId: string; scopes: string[]; now?: () => Date },
): Promise<TokenResponse> {
  if (config.env !== 'uat')
    throw new InputRefusedError('Minting tokens is for the sandbox only (EWA_ENV=uat).');
  const person = await db
    .selectFrom('people')
    .select('id')
    .where('id', '=', input.personId)
    .executeTakeFirst();
  if (!person) throw new InputRefusedError(`No person ${input.personId}.`, { field: 'person' });
  const client = await findClient(db, input.clientId);
  if (!client) throw new InputRefusedError(`No client ${input.clientId}.`, { field: 'client' });
  for (const scope of input.scopes) {
    if (!Object.hasOwn(USER_SCOPES, scope))
      throw new InputError(
        `--scopes: ${scope} is not a user scope (${Object.keys(USER_SCOPES).join(', ')}).`,
      );
    if (!client.scopes.includes(scope))
      throw new InputRefusedError(`--scopes: ${scope} is not registered for client ${client.clientId}.`);
  }
  if (input.scopes.length === 0) throw new InputError('--scopes must name at least one user scope.');
  const now = input.now ?? (() => new Date());
  await ensureSigningKey(db, config.masterKey);
  const provider = await createProvider(config, { db, now });
  const resource = config.api.publicUrl;
  const scope = input.scopes.join(' ');
  const grant = new provider.Grant({ accountId: person.id, clientId: client.clientId });
  grant.addOIDCScope('openid');
  grant.addResourceScope(resource, scope);
  const grantId = await grant.save();
  const resourceServer = new provider.ResourceServer(resource, {
    audience: resource,
    scope,
    accessTokenTTL: config.oauth.accessTokenTtlSeconds,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: ACCESS_TOKEN_ALG } },
  });
  const token = new provider.AccessToken({
    accountId: person.id,
    client: await provider.Client.find(client.clientId),
    grantId,
    gty: 'authorization_code',
    scope,
    resourceServer,
  });
  const value = await token.save();
  return {
    access_token: value,
    token_type: 'Bearer',
    expires_in: config.oauth.accessTokenTtlSeconds,
    scope,
    created_at: Math.floor(now().getTime() / 1000),
  };
}
