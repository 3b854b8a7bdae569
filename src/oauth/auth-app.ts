import { hkdfSync } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { purgeExpiredPayloads } from './adapter.ts';
import { CsrfTokens } from './csrf.ts';
import { interactionRoutes } from './interactions.ts';
import { createProvider } from './provider.ts';

const PROVIDER_PATHS = [
  '/oauth2/*',
  '/userinfo',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/jwks.json',
];
const PURGE_EVERY_MS = 10 * 60_000;

export interface AuthAppOptions {
  config: Config;
  db: Db;
  now: () => Date;
}

/**
 * The authorization server listener: oidc-provider answers the protocol paths on the raw request (it reads its
 * own bodies, so its scope has no body parser), and our interaction pages handle sign-in and consent.
 */
export async function authApp(app: FastifyInstance, options: AuthAppOptions): Promise<void> {
  const { config, db, now } = options;
  const provider = await createProvider(config, { db, now });
  provider.on('server_error', (_ctx, error) => app.log.error({ err: error }, 'authorization server error'));

  const csrf = new CsrfTokens(Buffer.from(hkdfSync('sha256', config.masterKey, '', 'ewa csrf', 32)));
  await app.register(interactionRoutes, { provider, config, db, csrf, now });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const callback = provider.callback();
    const issuer = new URL(config.auth.publicUrl);
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      // The provider builds endpoint URLs from the request: make them the issuer's, whatever Host was used.
      request.raw.headers['x-forwarded-host'] = issuer.host;
      request.raw.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
      // Headers set on the Fastify reply are not sent once it is hijacked: set them on the raw response.
      reply.raw.setHeader('X-Request-Id', request.id);
      reply.hijack();
      await callback(request.raw, reply.raw);
    };
    for (const url of PROVIDER_PATHS) scope.all(url, handler);
  });

  const purge = setInterval(() => {
    purgeExpiredPayloads(db, now()).catch((error) =>
      app.log.warn({ err: error }, 'purging expired OAuth rows failed'),
    );
  }, PURGE_EVERY_MS);
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));
}
