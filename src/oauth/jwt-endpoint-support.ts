import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { claimsForScopes, claimsOf, findPerson } from './accounts.ts';
import { USERINFO_SCOPE_CLAIM } from './scopes.ts';
import { ACCESS_TOKEN_ALG, publicJwk, type SigningKey } from './signing-keys.ts';

interface Options {
  config: Config;
  db: Db;
  keys: SigningKey[];
}

type Body = Record<string, unknown>;

/**
 * Provider middleware for what the published contract adds to the token response (`created_at`, and
 * `error_code` beside every `error`), and for the JWT access tokens the REST API takes: oidc-provider does not
 * store JWT access tokens, so its revocation, introspection and userinfo endpoints refuse them. After the
 * provider has authenticated the client, this answers for our own JWTs: revocation records the token's id for the
 * API processes, introspection describes it to the client that owns it, userinfo gives the claims of its OpenID scopes.
 */
export function jwtEndpointSupport({ config, db, keys }: Options) {
  const jwks = createLocalJWKSet({ keys: keys.map((key) => publicJwk(key.jwk)) });
  const verify = async (token: unknown): Promise<JWTPayload | undefined> => {
    if (typeof token !== 'string') return undefined;
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: config.auth.publicUrl,
        typ: 'at+jwt',
        algorithms: [ACCESS_TOKEN_ALG],
      });
      return payload;
    } catch {
      return undefined;
    }
  };
  const isRevoked = async (payload: JWTPayload) => {
    const values = [payload.jti, payload.grant_id, payload.client_id].filter(
      (value): value is string => typeof value === 'string',
    );
    const row = await db
      .selectFrom('oauth_revocations')
      .select('kind')
      .where('value', 'in', values)
      .executeTakeFirst();
    return row !== undefined;
  };

  return async function middleware(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    await next();
    try {
      await answer(ctx);
    } catch (error) {
      // Outside the provider's own error handling: answer as it answers its own failures, and report the same way.
      ctx.status = 500;
      ctx.body = {
        error: 'server_error',
        error_description: 'oops! something went wrong',
        error_code: 'server_error',
      };
      (ctx as unknown as { app: { emit(event: string, ...args: unknown[]): void } }).app.emit(
        'server_error',
        ctx,
        error,
      );
    }
  };

  async function answer(ctx: KoaContextWithOIDC): Promise<void> {
    const route = ctx.oidc?.route;
    const body = ctx.body as Body | undefined;
    const unsupportedJwt = ctx.status === 400 && body?.error === 'unsupported_token_type' && ctx.oidc?.client;
    if (route === 'revocation' && unsupportedJwt) {
      const payload = await verify(ctx.oidc?.params?.token);
      if (payload?.client_id === ctx.oidc?.client?.clientId && payload?.jti && payload.exp) {
        await db
          .insertInto('oauth_revocations')
          .values({ kind: 'TOKEN', value: payload.jti, expires_at: new Date(payload.exp * 1000) })
          .onConflict((conflict) => conflict.columns(['kind', 'value']).doNothing())
          .execute();
      }
      // RFC 7009 §2.2: an unknown or foreign token is answered like a revoked one.
      ctx.status = 200;
      ctx.body = '';
      return;
    }
    if (route === 'introspection' && unsupportedJwt) {
      const payload = await verify(ctx.oidc?.params?.token);
      const own =
        payload &&
        payload.client_id === ctx.oidc?.client?.clientId &&
        ctx.oidc?.client?.clientAuthMethod !== 'none';
      ctx.status = 200;
      ctx.body =
        own && !(await isRevoked(payload))
          ? {
              active: true,
              token_type: 'Bearer',
              ...pick(payload, ['scope', 'client_id', 'sub', 'exp', 'iat', 'iss', 'aud', 'jti']),
            }
          : { active: false };
      return;
    }
    if (route === 'userinfo' && ctx.status === 401) {
      const header = ctx.headers.authorization;
      const token =
        typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7).trim() : undefined;
      const payload = await verify(token);
      const provider = (ctx as unknown as { oidc: { provider: Provider } }).oidc.provider;
      const grant =
        typeof payload?.grant_id === 'string' ? await provider.Grant.find(payload.grant_id) : undefined;
      const granted = new Set(grant?.getOIDCScope().split(' '));
      if (payload && granted.has('openid') && !(await isRevoked(payload))) {
        // The claims of the OpenID scopes this token was issued with that the grant still holds; a token issued
        // without the claim (`ewa tokens issue`, or before there was one) gives the subject alone.
        const issuedWith = payload[USERINFO_SCOPE_CLAIM];
        const scopes = (typeof issuedWith === 'string' ? issuedWith.split(' ') : ['openid']).filter((scope) =>
          granted.has(scope),
        );
        const person = typeof payload.sub === 'string' ? await findPerson(db, payload.sub) : undefined;
        ctx.status = 200;
        ctx.body = person ? claimsForScopes(claimsOf(person), scopes) : { sub: payload.sub };
        (ctx as unknown as { remove(name: string): void }).remove('WWW-Authenticate');
        return;
      }
    }
    if (route === 'token' && ctx.status === 200 && typeof body?.access_token === 'string') {
      body.created_at = Math.floor(Date.now() / 1000);
    }
    if (ctx.status >= 400 && body && typeof body === 'object' && typeof body.error === 'string')
      body.error_code = body.error;
  }
}

function pick(payload: JWTPayload, names: string[]): Body {
  return Object.fromEntries(
    names.filter((name) => payload[name] !== undefined).map((name) => [name, payload[name]]),
  );
}
