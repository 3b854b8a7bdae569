import { hkdfSync } from 'node:crypto';
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../config.ts';
import { allowsOrigin } from '../platform/cors-origins.ts';
import { claimsOf, findPerson } from './accounts.ts';
import { databaseAdapter } from './adapter.ts';
import { clientSecretMatches } from './clients.ts';
import { jwtEndpointSupport } from './jwt-endpoint-support.ts';
import { renderAuthorizationErrorPage, renderLogoutPage, renderLogoutSuccessPage } from './pages/pages.ts';
import { INTERACTION_PATH, loadProviderKeys, type ProviderDeps, providerClients } from './provider-setup.ts';
import { referencePageSignIn } from './reference-page.ts';
import {
  ALL_SCOPES,
  apiScopesFor,
  CLIENT_SCOPES,
  OFFLINE_SCOPES,
  SCOPE_CLAIMS,
  USERINFO_SCOPE_CLAIM,
} from './scopes.ts';
import { ACCESS_TOKEN_ALG, ID_TOKEN_ALG } from './signing-keys.ts';

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

/**
 * The OpenID scopes with claims (openid, profile, email) that the token being issued was granted: those of the
 * authorization code, or of the refresh token (or of the narrower `scope` a refresh asks for), that the grant still
 * holds. The REST API's JWT access tokens carry them, so that /userinfo gives only the claims of this token's
 * scopes, not of everything the person ever allowed the client (jwt-endpoint-support.ts).
 */
function userinfoScope(ctx: KoaContextWithOIDC | undefined): string | undefined {
  const oidc = ctx?.oidc;
  const entities = oidc?.entities as
    | {
        AuthorizationCode?: { scope?: string };
        RefreshToken?: { scope?: string };
        Grant?: { getOIDCScope(): string };
      }
    | undefined;
  if (oidc?.route !== 'token' || !entities?.Grant) return undefined;
  const params = oidc.params as { grant_type?: unknown; scope?: unknown } | undefined;
  const source =
    params?.grant_type === 'authorization_code'
      ? entities.AuthorizationCode?.scope
      : params?.grant_type === 'refresh_token'
        ? typeof params.scope === 'string' && params.scope
          ? params.scope
          : entities.RefreshToken?.scope
        : undefined;
  const granted = new Set(entities.Grant.getOIDCScope().split(' '));
  const scopes = (source ?? '')
    .split(' ')
    .filter((scope) => granted.has(scope) && Object.hasOwn(SCOPE_CLAIMS, scope));
  return scopes.includes('openid') ? [...new Set(scopes)].join(' ') : undefined;
}

/** The parts of Koa's context that read and remove headers. */
interface KoaHeaders {
  get(name: string): string;
  remove(name: string): void;
  response: { headers: Record<string, unknown> };
}

/**
 * oidc-provider configured for this server: our storage, our clients and keys, PKCE S256 for every client, JWT
 * access tokens for the REST API (audience EWA_BASE_URL), refresh tokens only with offline_access and rotated on
 * every use. The protocol is the library's; this file only chooses its options.
 */
export async function createProvider(config: Config, deps: ProviderDeps): Promise<Provider> {
  const keys = deps.keys ?? (await loadProviderKeys(config, deps));
  const resource = config.api.publicUrl;
  const ttl = config.oauth;
  const page = referencePageSignIn(config);
  // The sandbox's reference page may always call here, whatever EWA_CORS_ORIGINS says.
  const corsOrigins = page ? [...config.corsOrigins, page.origin] : config.corsOrigins;
  const provider = new Provider(config.auth.publicUrl, {
    adapter: databaseAdapter(deps.db, deps.now, deps.clients ?? providerClients(config, deps.db)),
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
    claims: Object.fromEntries(Object.entries(SCOPE_CLAIMS).map(([scope, names]) => [scope, [...names]])),
    // The ID token carries the claims of its scopes even when an access token is issued too: a client that asked
    // for profile or email reads them there, and at /userinfo (by default, only at /userinfo).
    conformIdTokenClaims: false,
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
    extraTokenClaims: async (ctx: KoaContextWithOIDC | undefined, token: { grantId?: string }) => {
      if (!token.grantId) return undefined;
      const scope = userinfoScope(ctx);
      return { grant_id: token.grantId, ...(scope ? { [USERINFO_SCOPE_CLAIM]: scope } : {}) };
    },
    // Every claim of the person; oidc-provider gives only those of the scopes granted (SCOPE_CLAIMS).
    findAccount: async (_ctx: unknown, sub: string) => {
      const person = await findPerson(deps.db, sub);
      return person ? { accountId: person.id, claims: async () => claimsOf(person) } : undefined;
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`,
    },
    // An error of the authorization or logout endpoint shown in the browser: plain words for the worker, the OAuth
    // code and description in small print for support (pages.ts). Its status is the provider's.
    renderError: async (ctx: KoaContextWithOIDC, out: Record<string, string>, error: unknown) => {
      ctx.type = 'html';
      const route = ctx.oidc?.route ?? '';
      ctx.body = renderAuthorizationErrorPage({
        code: out.error ?? 'invalid_request',
        detail: out.error_description,
        requestId: (ctx.response as { get(name: string): string }).get('X-Request-Id') || undefined,
        expired: (error as { name?: unknown } | undefined)?.name === 'SessionNotFound',
        signOut: route.startsWith('end_session'),
      });
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
