import { createPrivateKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ClientCache } from './client-cache.ts';
import { clientSecretMatches } from './clients.ts';
import { apiScopesFor } from './scopes.ts';
import { ACCESS_TOKEN_ALG, type SigningKey } from './signing-keys.ts';

/** The only parameters a request of the plain case carries; any other (resource, authorization_details …) is the provider's. */
const PLAIN_PARAMETERS = new Set(['grant_type', 'scope', 'client_id', 'client_secret']);
/** Headers that ask for more than a bearer token for a known client: the provider handles them. */
const PROVIDER_HEADERS = ['origin', 'dpop', 'oauth-client-attestation', 'oauth-client-attestation-pop'];
const SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post']);
const SCOPE_LIST = /^[^ ]+( [^ ]+)*$/;

export interface IssuedToken {
  access_token: string;
  expires_in: number;
  scope: string;
  token_type: 'Bearer';
  created_at: number;
}

interface Options {
  issuer: string;
  /** The REST API: the token's audience. */
  resource: string;
  ttlSeconds: number;
  /** The keys oidc-provider signs with, in its order: the first active ES256 key is the one it picks. */
  keys: readonly SigningKey[];
  clients: ClientCache;
  /** Real time, as oidc-provider's. */
  nowSeconds?: () => number;
}

/**
 * The client_credentials grant in its plain case, answered without oidc-provider's Koa stack: a confidential client
 * with a secret (in the body or by HTTP Basic), asking for some of its client scopes, no resource indicator, no
 * DPoP, no browser origin. The token is the one the provider would issue for the same request (same claims, key,
 * header and lifetime; test/oauth/client-credentials-tokens.test.ts compares them), at a fraction of the work: a
 * token for a server-to-server partner is the authorization server's hottest request.
 *
 * It only ever answers a success. Anything else — an unknown client, a wrong secret, a scope not allowed, a
 * parameter or header it does not know — is `undefined`, and the request goes on to oidc-provider, which answers it
 * with its own errors. So a request this refuses to handle is judged exactly as before.
 */
export class ClientCredentialsTokens {
  readonly #options: Options;
  readonly #kid: string | undefined;
  readonly #key: KeyObject | undefined;
  readonly #nowSeconds: () => number;

  constructor(options: Options) {
    this.#options = options;
    const key = options.keys.find((each) => each.alg === ACCESS_TOKEN_ALG && each.retiredAt === null);
    this.#kid = key?.kid;
    this.#key = key ? createPrivateKey({ key: key.jwk as never, format: 'jwk' }) : undefined;
    this.#nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  }

  /** The answer to a plain client_credentials request, or undefined for the provider to answer. */
  async issue(
    headers: IncomingHttpHeaders,
    pairs: readonly [string, string][],
  ): Promise<IssuedToken | undefined> {
    if (!this.#key || PROVIDER_HEADERS.some((name) => headers[name] !== undefined)) return undefined;
    const form = new Map<string, string>();
    for (const [name, value] of pairs) {
      if (form.has(name) || !PLAIN_PARAMETERS.has(name)) return undefined;
      form.set(name, value);
    }
    if (form.get('grant_type') !== 'client_credentials') return undefined;
    const credentials = this.#credentials(headers.authorization, form);
    if (!credentials) return undefined;
    const client = await this.#options.clients.get(credentials.clientId);
    if (
      !client ||
      !SECRET_METHODS.has(String(client.token_endpoint_auth_method)) ||
      !(client.grant_types as string[] | undefined)?.includes('client_credentials') ||
      !clientSecretMatches(credentials.secret, (client.client_secret as string | undefined) ?? null)
    )
      return undefined;
    const scope = grantedScope(form.get('scope'), String(client.scope ?? ''));
    if (scope === undefined) return undefined;
    const iat = this.#nowSeconds();
    const payload = {
      jti: randomBytes(32).toString('base64url'),
      sub: credentials.clientId,
      iat,
      exp: iat + this.#options.ttlSeconds,
      scope,
      client_id: credentials.clientId,
      iss: this.#options.issuer,
      aud: this.#options.resource,
    };
    return {
      access_token: await this.#sign(payload),
      expires_in: this.#options.ttlSeconds,
      scope,
      token_type: 'Bearer',
      created_at: iat,
    };
  }

  /** The client's id and secret, given one way only, as the provider requires; undefined for anything else. */
  #credentials(
    authorization: string | undefined,
    form: Map<string, string>,
  ): { clientId: string; secret: string } | undefined {
    const bodyId = form.get('client_id');
    const bodySecret = form.get('client_secret');
    if (authorization === undefined) {
      return bodyId && bodySecret ? { clientId: bodyId, secret: bodySecret } : undefined;
    }
    if (bodySecret !== undefined) return undefined;
    const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/.exec(authorization);
    if (!match) return undefined;
    const basic = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = basic.indexOf(':');
    if (colon < 1) return undefined;
    // RFC 6749 §2.3.1: both halves are form-encoded; a value this does not decode plainly is the provider's.
    const clientId = basic.slice(0, colon);
    const secret = basic.slice(colon + 1);
    if (!secret || /[%+]/.test(basic)) return undefined;
    if (bodyId !== undefined && bodyId !== clientId) return undefined;
    return { clientId, secret };
  }

  /** Signed on libuv's thread pool (the callback form), as WebCrypto signs for the provider: not on the event loop. */
  async #sign(payload: Record<string, unknown>): Promise<string> {
    const header = { alg: ACCESS_TOKEN_ALG, typ: 'at+jwt', kid: this.#kid };
    const input = `${base64url(header)}.${base64url(payload)}`;
    const signature = await new Promise<Buffer>((resolve, reject) =>
      sign('sha256', Buffer.from(input), { key: this.#key!, dsaEncoding: 'ieee-p1363' }, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
    return `${input}.${signature.toString('base64url')}`;
  }
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * The scope the provider grants (grantableScopes in provider.ts, then its client_credentials grant): the requested
 * scopes in their order, each one a client scope registered for the client; without `scope`, every such scope.
 * Undefined when the provider would refuse or change the request (a scope not allowed, a repeated or empty one).
 */
function grantedScope(requested: string | undefined, registered: string): string | undefined {
  const allowed = apiScopesFor('client', registered.split(' ').filter(Boolean));
  if (allowed.length === 0) return undefined;
  if (requested === undefined) return allowed.join(' ');
  if (!SCOPE_LIST.test(requested)) return undefined;
  const scopes = requested.split(' ');
  if (new Set(scopes).size !== scopes.length || scopes.some((scope) => !allowed.includes(scope)))
    return undefined;
  return requested;
}
