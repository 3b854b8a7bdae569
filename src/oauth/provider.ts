import { hkdfSync } from 'node:crypto';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { allowsOrigin } from '../platform/cors-origins.ts';
import { databaseAdapter } from './adapter.ts';
import { clientSecretMatches } from './clients.ts';
import { jwtEndpointSupport } from './jwt-endpoint-support.ts';
import { renderErrorPage, renderLogoutPage, renderLogoutSuccessPage } from './pages/pages.ts';
import { referencePageSignIn } from './reference-page.ts';
import { ALL_SCOPES, apiScopesFor, CLIENT_SCOPES, OFFLINE_SCOPES } from './scopes.ts';
import { ACCESS_TOKEN_ALG, ID_TOKEN_ALG, loadSigningKeys } from './signing-keys.ts';

export const INTERACTION_PATH = '/interaction';
/**
 * The REST API's scopes this request may be granted, by the kind of grant (see `apiScopesFor`); a scope asked for
 * beyond them is invalid_scope, not silently dropped. A client_credentials request without `scope` is given
 * every client scope registered for the client (RFC 6749 §3.3 lets the server choose a default).
 */
function grantableScopes(ctx: KoaContextWithOIDC, registered: string[]): string[] {
  const params = ctx.oidc?.params as { grant_type?: unknown; scope?: unknown } | undefined;
  const grant = params?.grant_type === 'client_credentials' ? 'client' : 'user';
  const allowed = apiScopesFor(grant, registered);
  const requested = typeof params?.scope === 'string' ? params.scope.split(' ').filter(Boolean) : [];
  for (const scope of requested) {
    // A person's sign-in may also ask for OpenID scopes, and unknown ones are ignored as OpenID Connect says;
    // what it may not get is a scope of the other kind.
    const refused = grant === 'client' ? !allowed.includes(scope) : Object.hasOwn(CLIENT_SCOPES, scope);
    if (refused) {
      throw new errors.InvalidScope(
        grant === 'client'
          ? `a client_credentials token carries only client scopes registered for the client (${allowed.join(' ')})`
          : "a client scope is for client_credentials, not for a person's sign-in",
        scope,
      );
    }
  }
  // The grant reads the requested scopes after this: a request without any asks for the default.
  if (grant === 'client' && requested.length === 0 && params) params.scope = allowed.join(' ');
  return allowed;
}

/** The longest a token signed with a key can live, so retired keys stay in the JWKS that long. */
export function longestSignedTokenLifetimeSeconds(config: Config): number {
  return config.oauth.accessTokenTtlSeconds;
}

/** The parts of Koa's context that read and remove headers. */
interface KoaHeaders {
  get(name: string): string;
  remove(name: string): void;
  response: { headers: Record<string, unknown> };
}

export interface ProviderDeps {
  db: Db;
  now: () => Date;
}

/**
 * oidc-provider configured for this server: our storage, our clients and keys, PKCE S256 for every client, JWT
 * access tokens for the REST API (audience EWA_BASE_URL), refresh tokens only with offline_access and rotated on
 * every use. The protocol is the library's; this file only chooses its options.
 */
export async function createProvider(config: Config, deps: ProviderDeps): Promise<Provider> {
  const keys = await loadSigningKeys(
    deps.db,
    config.masterKey,
    deps.now(),
    longestSignedTokenLifetimeSeconds(config),
  );
  // Without keys oidc-provider would sign with its public development keys.
  if (keys.length === 0) throw new Error('no signing key: call ensureSigningKey first');
  const resource = config.api.publicUrl;
  const ttl = config.oauth;
  const page = referencePageSignIn(config);
  // The sandbox's reference page may always call here, whatever EWA_CORS_ORIGINS says.
  const corsOrigins = page ? [...config.corsOrigins, page.origin] : config.corsOrigins;
  const provider = new Provider(config.auth.publicUrl, {
    adapter: databaseAdapter(deps.db, deps.now, (clientId) =>
      page?.clientIds.includes(clientId) ? [page.redirectUri] : [],
    ),
    clients: [],
    jwks: { keys: keys.map((key) => key.jwk) },
    cookies: {
      keys: [
        Buffer.from(hkdfSync('sha256', config.masterKey, '', 'ewa oauth cookies', 32)).toString('base64url'),
      ],
      long: { httpOnly: true, sameSite: 'lax', secure: config.env === 'production' },
      short: { httpOnly: true, sameSite: 'lax', secure: config.env === 'production' },
    },
    routes: {
      authorization: '/oauth2/auth',
      token: '/oauth2/token',
      revocation: '/oauth2/revoke',
      introspection: '/oauth2/introspect',
      userinfo: '/userinfo',
      jwks: '/.well-known/jwks.json',
      end_session: '/oauth2/sessions/logout',
    },
    responseTypes: ['code'],
    scopes: Object.keys(ALL_SCOPES),
    claims: { openid: ['sub'] },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: ID_TOKEN_ALG,
      token_endpoint_auth_method: 'client_secret_basic',
    },
    // Secrets are stored hashed, so nothing may use them as HMAC keys.
    enabledJWA: {
      clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requestObjectSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      idTokenSigningAlgValues: [ID_TOKEN_ALG],
    },
    // A browser may call the token, userinfo, revocation and introspection endpoints only from EWA_CORS_ORIGINS, and
    // there only for a public client whose redirect URI is on that origin (the library's own rule). In the sandbox
    // the reference page may also use the confidential demo client (client credentials), whose secret is published.
    clientBasedCORS: (
      ctx: KoaContextWithOIDC,
      origin: string,
      client: { clientId: string; clientAuthMethod: string; redirectUris: string[] },
    ) =>
      (page !== undefined && origin === page.origin && page.clientIds.includes(client.clientId)) ||
      (allowsOrigin(corsOrigins, origin) &&
        (ctx.oidc?.route === 'userinfo' || client.clientAuthMethod === 'none') &&
        client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin)),
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    features: {
      devInteractions: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId: string }) =>
          token.clientId === client.clientId,
      },
      introspection: {
        enabled: true,
        allowedPolicy: async (
          _ctx: unknown,
          client: { clientId: string; clientAuthMethod: string },
          token: { clientId: string },
        ) => client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
      requestObjects: { enabled: true, requireSignedRequestObject: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          ctx.type = 'html';
          ctx.body = renderLogoutPage(form);
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          ctx.type = 'html';
          ctx.body = renderLogoutSuccessPage();
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (
          ctx: KoaContextWithOIDC,
          indicator: string,
          client: { scope?: string },
        ) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: grantableScopes(ctx, (client.scope ?? '').split(' ')).join(' '),
            audience: resource,
            accessTokenTTL: ttl.accessTokenTtlSeconds,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: ACCESS_TOKEN_ALG } },
          };
        },
      },
    },
    ttl: {
      AccessToken: ttl.accessTokenTtlSeconds,
      ClientCredentials: ttl.accessTokenTtlSeconds,
      AuthorizationCode: ttl.authorizationCodeTtlSeconds,
      IdToken: ttl.accessTokenTtlSeconds,
      RefreshToken: ttl.refreshTokenTtlSeconds,
      Grant: ttl.refreshTokenTtlSeconds,
      Session: ttl.sessionTtlSeconds,
      Interaction: ttl.interactionTtlSeconds,
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (
      _ctx: unknown,
      client: { grantTypeAllowed(type: string): boolean },
      code: { scopes: Set<string> },
    ) => client.grantTypeAllowed('refresh_token') && OFFLINE_SCOPES.some((scope) => code.scopes.has(scope)),
    // grant_id lets every API process refuse the access tokens of a revoked grant (see RevocationList).
    extraTokenClaims: async (_ctx: unknown, token: { grantId?: string }) =>
      token.grantId ? { grant_id: token.grantId } : undefined,
    findAccount: async (_ctx: unknown, sub: string) => {
      const person = await deps.db.selectFrom('people').select('id').where('id', '=', sub).executeTakeFirst();
      return person ? { accountId: person.id, claims: async () => ({ sub: person.id }) } : undefined;
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`,
    },
    renderError: async (ctx: KoaContextWithOIDC, out: Record<string, string>) => {
      ctx.type = 'html';
      ctx.body = renderErrorPage(
        out.error ?? 'error',
        out.error_description ?? 'The request could not be completed.',
        (ctx.response as { get(name: string): string }).get('X-Request-Id') || undefined,
      );
    },
  });
  provider.proxy = true;
  // Secrets are stored as hashes: compare the hash of what the client sent.
  provider.Client.prototype.compareClientSecret = async function compareClientSecret(
    this: { clientSecret?: string },
    actual: string,
  ) {
    return clientSecretMatches(actual, this.clientSecret ?? null);
  };
  provider.use(jwtEndpointSupport({ config, db: deps.db, keys }));
  provider.use(async (ctx, next) => {
    await next();
    // The library allows any origin on preflights and on discovery and the key set: only EWA_CORS_ORIGINS may read.
    const origin = (ctx as unknown as KoaHeaders).get('Origin');
    if (!origin || allowsOrigin(corsOrigins, origin)) return;
    for (const name of Object.keys((ctx as unknown as KoaHeaders).response.headers)) {
      if (name.startsWith('access-control-')) (ctx as unknown as KoaHeaders).remove(name);
    }
  });
  return provider;
}
