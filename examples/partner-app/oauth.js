/**
 * The OAuth 2.0 / OpenID Connect client side: endpoints from discovery, PKCE (S256), the code exchange, refresh,
 * and the client_credentials token of the confidential client.
 */
import { createHash, randomBytes } from 'node:crypto';

export const USER_SCOPES = 'openid offline_access user:read user:read_write';

/** A token is refreshed this long before it expires, so that a request never leaves with a dying token. */
const EXPIRY_MARGIN_MS = 30_000;

export class OAuthClient {
  #config;
  #metadata;

  constructor(config) {
    this.#config = config;
  }

  /** The authorization server's endpoints, read once from its discovery document. */
  async metadata() {
    if (!this.#metadata) {
      const response = await fetch(`${this.#config.authUrl}/.well-known/openid-configuration`);
      if (!response.ok) throw new Error(`discovery answered ${response.status}`);
      this.#metadata = await response.json();
    }
    return this.#metadata;
  }

  get redirectUri() {
    return `${this.#config.appUrl}/callback`;
  }

  /** Where to send the browser, and what to keep until it comes back: the state and the PKCE verifier. */
  async startSignIn() {
    const { authorization_endpoint: endpoint } = await this.metadata();
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const url = new URL(endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.#config.clientId,
      redirect_uri: this.redirectUri,
      scope: USER_SCOPES,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.href, pending: { state, verifier } };
  }

  /**
   * The callback's query, checked against what startSignIn kept: the state (this browser started this sign-in)
   * and the issuer (RFC 9207: the code comes from the server we sent the person to). Then the code is exchanged.
   */
  async finishSignIn(query, pending) {
    const metadata = await this.metadata();
    if (!pending || query.get('state') !== pending.state)
      throw new Error('The sign-in does not match this browser.');
    if (query.has('iss') && query.get('iss') !== metadata.issuer)
      throw new Error('The code comes from another issuer.');
    if (query.has('error')) throw new Error(query.get('error_description') ?? query.get('error'));
    return this.#tokenRequest({
      grant_type: 'authorization_code',
      code: query.get('code') ?? '',
      redirect_uri: this.redirectUri,
      code_verifier: pending.verifier,
      client_id: this.#config.clientId,
    });
  }

  /** A fresh access token for a session whose token is about to expire (refresh tokens rotate). */
  async refresh(tokens) {
    if (Date.now() < tokens.expiresAt - EXPIRY_MARGIN_MS) return tokens;
    if (!tokens.refreshToken) throw new Error('The session has expired: sign in again.');
    return this.#tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
      client_id: this.#config.clientId,
    });
  }

  /** The person's id (`sub`) from the userinfo endpoint. */
  async subject(accessToken) {
    const { userinfo_endpoint: endpoint } = await this.metadata();
    const response = await fetch(endpoint, { headers: { authorization: `Bearer ${accessToken}` } });
    if (!response.ok) throw new Error(`userinfo answered ${response.status}`);
    return (await response.json()).sub;
  }

  /** A token of the confidential client itself (client_credentials), for the webhook endpoint API. */
  async clientToken(scope) {
    const tokens = await this.#tokenRequest({
      grant_type: 'client_credentials',
      scope,
      client_id: this.#config.serverClientId,
      client_secret: this.#config.serverClientSecret,
    });
    return tokens.accessToken;
  }

  async #tokenRequest(form) {
    const { token_endpoint: endpoint } = await this.metadata();
    const response = await fetch(endpoint, { method: 'POST', body: new URLSearchParams(form) });
    const body = await response.json().catch(() => ({}));
    if (!response.ok)
      throw new Error(`token endpoint: ${body.error_description ?? body.error ?? response.status}`);
    return {
      accessToken: body.access_token,
      // Refresh tokens rotate: keep the new one, or the one just used when none came back.
      refreshToken: body.refresh_token ?? form.refresh_token,
      expiresAt: Date.now() + body.expires_in * 1000,
    };
  }
}
