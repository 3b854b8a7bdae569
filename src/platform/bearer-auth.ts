import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors/app-error.ts';
import type { AccessTokenVerifier, Caller } from './access-tokens.ts';
import { isJsonApiPath } from './json-api.ts';
import './route-config.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every route that declares `security`. */
    caller?: Caller;
  }
}

export interface BearerAuthOptions {
  verifier: AccessTokenVerifier;
  /** Off only to measure what the check costs (benchmarks). */
  enabled?: boolean;
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i;

function authorizationHeaders(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.length === 13 && rawHeaders[index]!.toLowerCase() === 'authorization') count++;
  return count;
}

/** The caller, when one requirement of the route is met: its kind of token and all of its scopes. */
export function satisfies(
  caller: Caller,
  requirements: NonNullable<FastifyRequest['routeOptions']['config']['security']>,
): boolean {
  return requirements.some(
    (requirement) =>
      requirement.kind === caller.kind && requirement.scopes.every((scope) => caller.scopes.has(scope)),
  );
}

/**
 * Every /rest and /admin route declares who may call it (user or client token) and with which scopes, as the
 * published description does; the check runs before validation. No token or a dead one is 401 INVALID_TOKEN; a live
 * token of the wrong kind or without the scopes is 403 FORBIDDEN.
 */
async function bearerAuth(app: FastifyInstance, options: BearerAuthOptions): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (!isJsonApiPath(route.url) || route.config?.negotiate === false || route.config?.public) return;
    if (!route.config?.security || route.config.security.length === 0) {
      throw new Error(
        `${route.method} ${route.url} declares no security; add config.security or config.public`,
      );
    }
  });

  app.addHook('onRequest', async (request) => {
    const requirements = request.routeOptions.config?.security;
    if (!requirements || options.enabled === false) return;
    const header = request.headers.authorization;
    // Node keeps the first of two Authorization headers; a proxy may have read the other. Neither is taken.
    if (header !== undefined && authorizationHeaders(request.raw.rawHeaders) > 1) {
      throw new AppError('INVALID_TOKEN', {
        detail: 'Send one Authorization header: this request has more than one.',
        source: { header: 'Authorization' },
      });
    }
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match) {
      throw new AppError('INVALID_TOKEN', {
        detail: 'Send an access token: Authorization: Bearer <token>.',
        source: { header: 'Authorization' },
      });
    }
    const caller = await options.verifier.verify(match[1]!);
    if (!caller) {
      throw new AppError('INVALID_TOKEN', {
        source: { header: 'Authorization' },
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    if (!satisfies(caller, requirements)) {
      throw new AppError('FORBIDDEN', {
        detail: tokensNeeded(requirements),
        headers: {
          'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${requirements.flatMap((r) => r.scopes).join(' ')}"`,
        },
      });
    }
    request.caller = caller;
  });
}

export const bearerAuthPlugin = fp(bearerAuth, {
  name: 'bearer-auth',
  fastify: '5.x',
  dependencies: ['json-api'],
});

/**
 * What a 403 says an operation takes: one requirement's scopes are all needed (OpenAPI's rule), so two of them
 * read "both … and …", never a list a reader could take for a choice.
 */
export function tokensNeeded(requirements: readonly { kind: string; scopes: readonly string[] }[]): string {
  const each = requirements.map(({ kind, scopes }) => {
    const listed =
      scopes.length < 2
        ? scopes.join('')
        : `${scopes.length === 2 ? 'both' : 'all of'} ${scopes.slice(0, -1).join(', ')} and ${scopes.at(-1)}`;
    return `${kind} token with ${listed}`;
  });
  return `This operation needs a ${each.join(', or a ')}.`;
}
