import type { OAuthClient } from './clients.ts';
import { CLIENT_SCOPES } from './scopes.ts';
import { ID_TOKEN_ALG } from './signing-keys.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether oidc-provider takes this redirect URI for a client of this type (native: loopback http or claimed https). */
function fitsApplicationType(uri: string, applicationType: string): boolean {
  const url = URL.parse(uri);
  if (!url) return false;
  if (applicationType !== 'native') return url.protocol === 'https:' || url.protocol === 'http:';
  return LOOPBACK_HOSTS.has(url.hostname) === (url.protocol === 'http:');
}

/**
 * A registered client as oidc-provider reads it (snake_case client metadata). `client_secret` holds the hash of
 * the secret: `compareClientSecret` is overridden in provider.ts to compare hashes. `extraRedirectUris` are
 * redirect URIs the server adds (the sandbox's reference page for the demo clients), each only where the client's
 * type allows it, so that one cannot make the client invalid.
 */
export function clientMetadata(
  client: OAuthClient,
  secretHash: string | null,
  extraRedirectUris: readonly string[] = [],
): Record<string, unknown> {
  const applicationType =
    client.isPublic && client.redirectUris.some((uri) => !uri.startsWith('http')) ? 'native' : 'web';
  const redirectUris =
    client.redirectUris.length > 0
      ? [
          ...client.redirectUris,
          ...extraRedirectUris.filter(
            (uri) => !client.redirectUris.includes(uri) && fitsApplicationType(uri, applicationType),
          ),
        ]
      : [];
  const signsPeopleIn = client.redirectUris.length > 0;
  const usesClientCredentials =
    !client.isPublic && client.scopes.some((scope) => Object.hasOwn(CLIENT_SCOPES, scope));
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(secretHash ? { client_secret: secretHash } : {}),
    token_endpoint_auth_method: client.authMethod,
    grant_types: [
      ...(signsPeopleIn ? ['authorization_code', 'refresh_token'] : []),
      ...(usesClientCredentials ? ['client_credentials'] : []),
    ],
    response_types: signsPeopleIn ? ['code'] : [],
    redirect_uris: redirectUris,
    post_logout_redirect_uris: client.redirectUris,
    scope: client.scopes.join(' '),
    ...(client.logoUri ? { logo_uri: client.logoUri } : {}),
    ...(client.policyUri ? { policy_uri: client.policyUri } : {}),
    ...(client.tosUri ? { tos_uri: client.tosUri } : {}),
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}),
    ...(client.jwks ? { jwks: client.jwks } : {}),
    id_token_signed_response_alg: ID_TOKEN_ALG,
    ...(client.isPublic ? { application_type: applicationType } : {}),
  };
}
