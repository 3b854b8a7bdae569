import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { CLIENT_SCOPES, isScope, scopesAllowedFor } from './scopes.ts';

/** A partner application registered out of band. Only a hash of its secret is kept. */
export interface OAuthClient {
  clientId: string;
  name: string;
  isPublic: boolean;
  redirectUris: string[];
  scopes: string[];
  organizationIds: string[];
  /** The partner whose app this is (NewClient.partner), or null. */
  partner: string | null;
  logoUri: string | null;
  policyUri: string | null;
  tosUri: string | null;
  jwksUri: string | null;
  jwks: { keys: unknown[] } | null;
  authMethod: ClientAuthMethod;
  createdAt: Date;
}

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number] | 'none';

export interface NewClient {
  name: string;
  isPublic: boolean;
  redirectUris: string[];
  scopes: string[];
  organizationIds: string[];
  /**
   * The partner whose app this is: its clients share what their users allowed any of them (a worker signed in to
   * its mobile app is the partner's user at its server's webhook endpoint too).
   */
  partner?: string | undefined;
  logoUri?: string | undefined;
  policyUri?: string | undefined;
  tosUri?: string | undefined;
  jwksUri?: string | undefined;
  jwks?: { keys: unknown[] } | undefined;
  /** For confidential clients; client_secret_basic (which also accepts client_secret_post) by default. */
  authMethod?: ClientAuthMethod | undefined;
  /** Fixed id and secret, for the sandbox's demo clients only. */
  clientId?: string;
  secret?: string;
}

const NAME_LENGTH_MAX = 100;
/** Longer than any token this server issues lives, so a revocation outlives what it revokes. */
export const REVOCATION_KEPT_MS = 30 * 86_400_000;
const REDIRECT_URIS_MAX = 10;

export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time check of a presented secret against the stored hash. */
export function clientSecretMatches(presented: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const actual = Buffer.from(hashClientSecret(presented), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

function checkUrl(
  flag: string,
  value: string,
  options: { allowLoopbackHttp: boolean; allowCustomScheme: boolean },
): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InputError(`${flag} must be an absolute URL (got "${value}").`);
  }
  if (url.hash) throw new InputError(`${flag} must not have a #fragment (got "${value}").`);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'https:') return value;
  if (url.protocol === 'http:' && loopback && options.allowLoopbackHttp) return value;
  // RFC 8252 §7.1: native apps use a private-use scheme named after a domain they own (com.example.app:/cb).
  if (options.allowCustomScheme && /^[a-z][a-z0-9+-]*\.[a-z0-9.+-]+:$/.test(url.protocol)) return value;
  throw new InputError(
    `${flag} must use https${options.allowLoopbackHttp ? ' (or http on localhost)' : ''}` +
      `${options.allowCustomScheme ? ', or a reverse-domain scheme such as com.example.app:/callback' : ''} (got "${value}").`,
  );
}

function validate(input: NewClient, sandbox: boolean): void {
  if (!input.name.trim() || input.name.length > NAME_LENGTH_MAX) {
    throw new InputError(`--name must be 1 to ${NAME_LENGTH_MAX} characters.`);
  }
  if (input.partner !== undefined && (!input.partner.trim() || input.partner.length > NAME_LENGTH_MAX)) {
    throw new InputError(`--partner must be 1 to ${NAME_LENGTH_MAX} characters.`);
  }
  if (input.redirectUris.length > REDIRECT_URIS_MAX)
    throw new InputError(`At most ${REDIRECT_URIS_MAX} --redirect-uri.`);
  for (const uri of input.redirectUris) {
    checkUrl('--redirect-uri', uri, { allowLoopbackHttp: sandbox, allowCustomScheme: input.isPublic });
  }
  const allowed = scopesAllowedFor(input.isPublic);
  for (const scope of input.scopes) {
    if (!isScope(scope) || !allowed.includes(scope)) {
      throw new InputError(
        `--scopes: "${scope}" is not allowed for a ${input.isPublic ? 'public' : 'confidential'} client; allowed: ${allowed.join(' ')}.`,
      );
    }
  }
  if (input.scopes.length === 0) throw new InputError('--scopes must name at least one scope.');
  const needsRedirect = input.scopes.some((scope) => !Object.hasOwn(CLIENT_SCOPES, scope));
  if (needsRedirect && input.redirectUris.length === 0) {
    throw new InputError(
      '--redirect-uri is required for a client that signs people in (user or OpenID scopes).',
    );
  }
  for (const [flag, value] of [
    ['--logo-uri', input.logoUri],
    ['--policy-uri', input.policyUri],
    ['--tos-uri', input.tosUri],
    ['--jwks-uri', input.jwksUri],
  ] as const) {
    if (value !== undefined) checkUrl(flag, value, { allowLoopbackHttp: sandbox, allowCustomScheme: false });
  }
  if (input.isPublic && (input.jwksUri || input.jwks)) {
    throw new InputError('A public client has no keys: --jwks-uri and --jwks are for confidential clients.');
  }
  if (input.isPublic && input.authMethod !== undefined && input.authMethod !== 'none') {
    throw new InputError('A public client authenticates with none (PKCE only): leave out --auth-method.');
  }
  if (input.authMethod === 'private_key_jwt' && !input.jwksUri && !input.jwks) {
    throw new InputError(
      "--auth-method private_key_jwt needs the client's public keys: --jwks-uri or --jwks.",
    );
  }
  if (input.jwks && (!Array.isArray(input.jwks.keys) || input.jwks.keys.length === 0)) {
    throw new InputError('--jwks must be a JSON Web Key Set: {"keys": [ ... ]}.');
  }
}

/** Registers a client; returns its secret (confidential clients), which is shown once and never stored. */
export async function createClient(
  db: Db,
  input: NewClient,
  options: { sandbox: boolean },
): Promise<{ client: OAuthClient; secret: string | null }> {
  const { clientId, secret } = await withTransaction(db, (tx) => insertClient(tx, input, options));
  const client = await findClient(db, clientId);
  return { client: client!, secret };
}

/** The insert of `createClient`, inside a transaction the caller holds (the demo seed adds clients with its data). */
export async function insertClient(
  tx: Tx,
  input: NewClient,
  options: { sandbox: boolean },
): Promise<{ clientId: string; secret: string | null }> {
  validate(input, options.sandbox);
  const clientId = input.clientId ?? `ewa_${randomBytes(15).toString('base64url')}`;
  const authMethod: ClientAuthMethod = input.isPublic ? 'none' : (input.authMethod ?? 'client_secret_basic');
  const secret =
    authMethod === 'none' || authMethod === 'private_key_jwt' ? null : (input.secret ?? newSecret());
  await refuseUnknownOrganizations(tx, input.organizationIds);
  await tx
    .insertInto('oauth_clients')
    .values({
      client_id: clientId,
      name: input.name.trim(),
      secret_hash: secret ? hashClientSecret(secret) : null,
      is_public: input.isPublic,
      redirect_uris: input.redirectUris,
      scopes: input.scopes,
      logo_uri: input.logoUri ?? null,
      policy_uri: input.policyUri ?? null,
      tos_uri: input.tosUri ?? null,
      jwks_uri: input.jwksUri ?? null,
      jwks: input.jwks ? JSON.stringify(input.jwks) : null,
      auth_method: authMethod,
      partner: input.partner?.trim() || null,
    })
    .execute();
  if (input.organizationIds.length > 0) {
    await tx
      .insertInto('oauth_client_organizations')
      .values(
        input.organizationIds.map((organizationId) => ({
          client_id: clientId,
          organization_id: organizationId,
        })),
      )
      .execute();
  }
  return { clientId, secret };
}

/** Refuses, naming them, the organizations of the list that do not exist. */
async function refuseUnknownOrganizations(tx: Tx, organizationIds: readonly string[]): Promise<void> {
  if (organizationIds.length === 0) return;
  const found = await tx
    .selectFrom('organizations')
    .select('id')
    .where('id', 'in', organizationIds)
    .execute();
  const missing = organizationIds.filter((id) => !found.some((row) => row.id === id));
  if (missing.length > 0)
    throw new InputRefusedError(`No organization ${missing.join(', ')}.`, { field: 'organizations' });
}

/**
 * Links a client to organizations, or unlinks it: what its client tokens see (the people with a job at a linked
 * organization, their jobs and earnings balances) and which events its webhook endpoints may receive follow at once,
 * since every read joins the links. Linking one already linked, or unlinking one that is not, changes nothing. The
 * client's row is held meanwhile, so a deletion of the client at the same time comes wholly before or after.
 */
export async function changeClientOrganizations(
  db: Db,
  clientId: string,
  change: { link?: readonly string[]; unlink?: readonly string[] },
): Promise<OAuthClient> {
  const link = [...new Set(change.link ?? [])];
  const unlink = [...new Set(change.unlink ?? [])];
  await withTransaction(db, async (tx) => {
    const held = await tx
      .selectFrom('oauth_clients')
      .select('client_id')
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (!held) throw new InputRefusedError(`No client ${clientId.slice(0, 64)}.`);
    await refuseUnknownOrganizations(tx, link);
    if (link.length > 0)
      await tx
        .insertInto('oauth_client_organizations')
        .values(link.map((organizationId) => ({ client_id: clientId, organization_id: organizationId })))
        .onConflict((conflict) => conflict.columns(['client_id', 'organization_id']).doNothing())
        .execute();
    if (unlink.length > 0)
      await tx
        .deleteFrom('oauth_client_organizations')
        .where('client_id', '=', clientId)
        .where('organization_id', 'in', unlink)
        .execute();
  });
  return (await findClient(db, clientId))!;
}

export async function findClient(db: Db, clientId: string): Promise<OAuthClient | undefined> {
  const [client] = await listClients(db, clientId);
  return client;
}

/** Registered clients that are not deleted; with `clientId`, that one only. */
export async function listClients(db: Db, clientId?: string): Promise<OAuthClient[]> {
  let query = db
    .selectFrom('oauth_clients')
    .selectAll()
    .select((eb) =>
      eb
        .selectFrom('oauth_client_organizations as co')
        .select((inner) =>
          inner.fn
            .coalesce(inner.fn.agg<string[]>('array_agg', ['co.organization_id']), inner.val([] as string[]))
            .as('ids'),
        )
        .whereRef('co.client_id', '=', 'oauth_clients.client_id')
        .as('organization_ids'),
    )
    .where('deleted_at', 'is', null)
    .orderBy('created_at');
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  const rows = await query.execute();
  return rows.map((row) => ({
    clientId: row.client_id,
    name: row.name,
    isPublic: row.is_public,
    redirectUris: row.redirect_uris,
    scopes: row.scopes,
    organizationIds: ((row.organization_ids as string[] | null) ?? []).sort(),
    partner: row.partner,
    logoUri: row.logo_uri,
    policyUri: row.policy_uri,
    tosUri: row.tos_uri,
    jwksUri: row.jwks_uri,
    jwks: row.jwks as OAuthClient['jwks'],
    authMethod: row.auth_method as ClientAuthMethod,
    createdAt: row.created_at,
  }));
}

export async function findClientSecretHash(db: Db, clientId: string): Promise<string | null> {
  const row = await db
    .selectFrom('oauth_clients')
    .select('secret_hash')
    .where('client_id', '=', clientId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.secret_hash ?? null;
}

export async function rotateClientSecret(db: Db, clientId: string): Promise<string> {
  const client = await findClient(db, clientId);
  if (!client) throw new InputRefusedError(`No client ${clientId}.`);
  if (client.authMethod === 'none' || client.authMethod === 'private_key_jwt') {
    throw new InputRefusedError(`${clientId} authenticates with ${client.authMethod}: it has no secret.`);
  }
  const secret = newSecret();
  await db
    .updateTable('oauth_clients')
    .set({ secret_hash: hashClientSecret(secret) })
    .where('client_id', '=', clientId)
    .execute();
  return secret;
}

/** Deletes a client and revokes everything issued to it. */
export async function deleteClient(db: Db, clientId: string, now: Date): Promise<void> {
  await withTransaction(db, async (tx) => {
    const updated = await tx
      .updateTable('oauth_clients')
      .set({ deleted_at: now })
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw new InputRefusedError(`No client ${clientId}.`);
    // Tokens already handed out are JWTs the API verifies alone: the revocation tells every API process.
    await tx
      .insertInto('oauth_revocations')
      .values({ kind: 'CLIENT', value: clientId, expires_at: new Date(now.getTime() + REVOCATION_KEPT_MS) })
      .onConflict((conflict) => conflict.columns(['kind', 'value']).doNothing())
      .execute();
    await tx.deleteFrom('oauth_payloads').where(sql<string>`payload->>'clientId'`, '=', clientId).execute();
  });
}
