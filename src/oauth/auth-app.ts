import { hkdfSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { shownText, textProblem } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import { RETRY_AFTER_SECONDS } from '../errors/service-unavailable.ts';
import type { ConnectionAnswer } from '../platform/framework-errors.ts';
import { ClientCredentialsTokens } from './client-credentials-tokens.ts';
import { CsrfTokens } from './csrf.ts';
import { purgeExpiredPayloads } from './expired-payloads.ts';
import { interactionRoutes } from './interactions.ts';
import { renderStatusErrorPage } from './pages/pages.ts';
import { loadProviderKeys, providerClients } from './provider-setup.ts';
import {
  checkCharset,
  checkedBody,
  checkRequestText,
  decodeUtf8,
  formObject,
  parseUrlEncoded,
  RefusedInput,
} from './request-text.ts';

const TOKEN_PATH = '/oauth2/token';
const PROVIDER_PATHS = [
  '/oauth2/*',
  '/userinfo',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/jwks.json',
];
/**
 * The methods oidc-provider answers on each of its paths (OPTIONS where it answers CORS preflights). The provider
 * answers anything else with a bare text 404; we answer 405 with `Allow`, or 404, in the shape of where it went.
 */
const PROVIDER_METHODS = new Map<string, readonly string[]>([
  // POST on the browser endpoints needs oidc-provider's enableHttpPostMethods, which asks for SameSite=None cookies.
  ['/oauth2/auth', ['GET', 'HEAD']],
  ['/oauth2/token', ['POST', 'OPTIONS']],
  ['/oauth2/revoke', ['POST', 'OPTIONS']],
  ['/oauth2/introspect', ['POST', 'OPTIONS']],
  ['/oauth2/sessions/logout', ['GET', 'HEAD']],
  ['/oauth2/sessions/logout/confirm', ['POST']],
  ['/oauth2/sessions/logout/success', ['GET', 'HEAD']],
  ['/userinfo', ['GET', 'HEAD', 'POST', 'OPTIONS']],
  ['/.well-known/openid-configuration', ['GET', 'HEAD', 'OPTIONS']],
  ['/.well-known/oauth-authorization-server', ['GET', 'HEAD', 'OPTIONS']],
  ['/.well-known/jwks.json', ['GET', 'HEAD', 'OPTIONS']],
]);
/** Where the provider resumes an authorization after our pages (`/oauth2/auth/{uid}`). */
const AUTHORIZATION_RESUME = /^\/oauth2\/auth\/[^/]+$/;
/** Endpoints a browser is sent to, and our pages: their errors are pages, as oidc-provider's own errors there are. */
const BROWSER_PATHS = ['/oauth2/auth', '/oauth2/sessions/logout', '/interaction/'];
/** oidc-provider reads at most 56 KiB of a body; a larger one is refused here, before it is read. */
const PROVIDER_BODY_MAX = 56 * 1024;
const PURGE_EVERY_MS = 10 * 60_000;

/** What the post-processing above uses of oidc-provider's Koa context. */
interface ProviderContext {
  req: IncomingMessage;
  path: string;
  status: number;
  type: string;
  body: unknown;
  set(name: string, value: string): void;
}

export interface AuthAppOptions {
  config: Config;
  db: Db;
  now: () => Date;
}

/** What a failed request is told: its status, and a description that holds nothing internal. */
function publicError(error: FastifyError | RefusedInput): { status: number; description: string } {
  if (isDatabaseUnavailable(error)) return { status: 503, description: UNAVAILABLE_DESCRIPTION };
  // A refusal by a hook every listener shares (one-host.ts) says why, as the API's error document does.
  if (error instanceof AppError && error.status < 500)
    return { status: error.status, description: error.detail };
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (error instanceof RefusedInput) return { status, description: error.message };
  const descriptions: Record<number, string> = {
    413: 'The request body is too large.',
    415: 'Send the body as application/x-www-form-urlencoded in UTF-8.',
    500: 'Something failed on our side. Try again in a moment.',
  };
  return { status, description: descriptions[status] ?? 'The request could not be read.' };
}

const UNAVAILABLE_DESCRIPTION =
  'The service is busy or cannot reach its database, so nothing was done. Try again in a moment.';

/** Logged with its cause and the request's id when it is ours (5xx); a refused request is the access line alone. */
function logIfUnexpected(request: FastifyRequest, error: Error, status: number): void {
  if (status >= 500) request.log.error({ err: error }, 'unexpected error on the authorization server');
}

/** The HTML error page of the authorization server, with the request id to quote. */
function sendErrorPage(request: FastifyRequest, reply: FastifyReply, status: number, description: string) {
  if (status === 503) reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      renderStatusErrorPage({
        status,
        code: errorCodeOf(status),
        detail: description,
        requestId: request.id,
      }),
    );
}

/** A failed request answered in the shape of where it went: the OAuth error JSON from an endpoint, else a page. */
function sendError(request: FastifyRequest, reply: FastifyReply, status: number, description: string) {
  const path = (request.raw.url ?? '/').split('?')[0]!;
  if (BROWSER_PATHS.some((page) => path.startsWith(page)))
    return sendErrorPage(request, reply, status, description);
  const code = errorCodeOf(status);
  if (status === 503) reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .send({ error: code, error_code: code, error_description: description });
}

function errorCodeOf(status: number): string {
  if (status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return status === 404 ? 'not_found' : 'invalid_request';
}

/**
 * What the authorization server answers when Node's HTTP parser refused a request (malformed framing, headers over
 * the limit): a page when the target was one of our pages or a browser endpoint, else the OAuth error JSON.
 */
export function authConnectionAnswer(
  error: AppError,
  requestId: string,
  target: string | undefined,
): ConnectionAnswer {
  if (target !== undefined && BROWSER_PATHS.some((page) => target.startsWith(page))) {
    return {
      mediaType: 'text/html; charset=utf-8',
      body: renderStatusErrorPage({
        status: error.status,
        code: errorCodeOf(error.status),
        detail: error.detail,
        requestId,
      }),
    };
  }
  return {
    mediaType: 'application/json',
    body: JSON.stringify({
      error: 'invalid_request',
      error_code: 'invalid_request',
      error_description: error.detail,
    }),
  };
}

/**
 * The authorization server's answer to a failed request outside its pages (the provider's endpoints, a probe, a
 * hook every listener shares): a page under our pages, else the OAuth error JSON.
 */
export function authListenerErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { status, description } = publicError(error);
  logIfUnexpected(request, error, status);
  if (error instanceof AppError && error.headers) reply.headers(error.headers);
  return sendError(request, reply, status, description);
}

/** A path nobody serves on the authorization server: a page under our pages, else the OAuth error JSON. */
export function authNotFound(request: FastifyRequest, reply: FastifyReply) {
  const path = (request.raw.url ?? '/').split('?')[0]!;
  return sendError(request, reply, 404, `Nothing is served at ${shownPath(path)} with ${request.method}.`);
}

const shownPath = (path: string) => (textProblem(path) ? shownText(path) : path);

/**
 * For the auth listener's `frameworkErrors` (a Fastify server option, set where the listener is built): a URL that
 * cannot be routed (bad percent-encoding, a path parameter over the length limit) is answered in the shape of
 * where it was sent, with the request id, instead of Fastify's own JSON.
 */
export function authFrameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  return sendError(request, reply, status, 'The address of this request is malformed or too long.');
}

/**
 * The raw request as oidc-provider reads it: its body, already read from the connection and checked, is read again
 * from these bytes, as the provider reads a body (`readable`, then `iterator`). Given the consumed request, the
 * provider would fall back to `req.body`, with a warning on the console. Own properties on the request shadow the
 * stream's: a Proxy would cost every property Koa reads on the request.
 */
function withBodyToRead(raw: IncomingMessage, body: Buffer | undefined): IncomingMessage {
  if (body === undefined) return raw;
  Object.defineProperties(raw, {
    readable: { value: true, configurable: true },
    readableEncoding: { value: null, configurable: true },
    iterator: {
      value: async function* replay() {
        yield body;
      },
      configurable: true,
    },
  });
  return raw;
}

/**
 * What `make` resolves to, made once by the first call: a failure is that call's, and the next call tries again.
 */
function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/**
 * The authorization server listener: oidc-provider answers the protocol paths on the raw request, and our
 * interaction pages handle sign-in and consent. Every string a request carries is checked here first
 * (request-text.ts); a refused request is answered in the shape of where it went (the OAuth error JSON from an
 * endpoint, an HTML page from a page), and an unexpected error is a generic page or JSON, logged with its cause.
 */
export async function authApp(app: FastifyInstance, options: AuthAppOptions): Promise<void> {
  const { config, db, now } = options;
  const keys = await loadProviderKeys(config, { db, now });
  // One cache of clients for the provider and the plain client_credentials path, which read the same metadata.
  const clients = providerClients(config, db);
  const clientTokens = new ClientCredentialsTokens({
    issuer: config.auth.publicUrl,
    resource: config.api.publicUrl,
    ttlSeconds: config.oauth.accessTokenTtlSeconds,
    keys,
    clients,
  });
  // The Fastify request of each raw request handed to the provider, so that its errors are logged with the id.
  const requests = new WeakMap<IncomingMessage, FastifyRequest>();
  const logOf = (ctx: unknown) => requests.get((ctx as { req: IncomingMessage }).req)?.log ?? app.log;
  // oidc-provider is imported and made on the first request that needs it (a protocol path or one of our pages): a
  // process that serves only the API, or only client_credentials tokens (answered above it), never loads its code.
  const provider = onFirstUse(async () => {
    const { createProvider } = await import('./provider.ts');
    const made = await createProvider(config, { db, now, keys, clients });
    // The provider answers any failure of ours 500 server_error; one caused by the database being unavailable for
    // now is answered 503 temporarily_unavailable with Retry-After instead (below), as on the REST listener.
    const unavailable = new WeakSet<object>();
    made.on('server_error', (ctx, error) => {
      if (isDatabaseUnavailable(error)) unavailable.add(ctx as object);
      logOf(ctx).error({ err: error }, 'unexpected error on the authorization server');
    });
    made.use(async (ctx, next) => {
      await next();
      if (!unavailable.has(ctx as object)) return;
      const koa = ctx as unknown as ProviderContext;
      koa.status = 503;
      koa.set('Retry-After', String(RETRY_AFTER_SECONDS));
      const request = requests.get(koa.req);
      if (BROWSER_PATHS.some((page) => koa.path.startsWith(page))) {
        koa.type = 'text/html; charset=utf-8';
        koa.body = renderStatusErrorPage({
          status: 503,
          code: 'temporarily_unavailable',
          detail: UNAVAILABLE_DESCRIPTION,
          requestId: request?.id,
        });
      } else {
        koa.type = 'application/json';
        koa.body = {
          error: 'temporarily_unavailable',
          error_code: 'temporarily_unavailable',
          error_description: UNAVAILABLE_DESCRIPTION,
        };
      }
    });
    // Koa's own report of an error nothing else caught (it would print it on the console).
    made.on('error', (error, ctx) =>
      logOf(ctx).error({ err: error }, 'unexpected error on the authorization server'),
    );
    return { provider: made, callback: made.callback() };
  });

  app.addHook('preHandler', async (request) => checkRequestText(request));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { status, description } = publicError(error);
    logIfUnexpected(request, error, status);
    return sendErrorPage(request, reply, status, description);
  });

  const csrf = new CsrfTokens(Buffer.from(hkdfSync('sha256', config.masterKey, '', 'ewa csrf', 32)));
  await app.register(interactionRoutes, {
    provider: async () => (await provider()).provider,
    config,
    db,
    csrf,
    now,
  });

  await app.register(async (scope) => {
    scope.setErrorHandler(authListenerErrors);
    // Bodies the provider reads are read and checked here first; the provider then reads the same bytes again
    // (withBodyToRead). Other media types are left unread for the provider to refuse.
    scope.removeAllContentTypeParsers();
    const bodies = new WeakMap<FastifyRequest, Buffer>();
    const hand = (request: FastifyRequest, body: Buffer) => {
      checkCharset(request.headers['content-type']);
      bodies.set(request, body);
      return decodeUtf8(body, 'body');
    };
    const limits = { parseAs: 'buffer' as const, bodyLimit: PROVIDER_BODY_MAX };
    scope.addContentTypeParser('application/x-www-form-urlencoded', limits, (request, body: Buffer, done) => {
      try {
        const pairs = parseUrlEncoded(hand(request, body), 'body');
        (request as FastifyRequest & { [checkedBody]?: unknown })[checkedBody] = pairs;
        done(null, formObject(pairs));
      } catch (error) {
        done(error as Error);
      }
    });
    scope.addContentTypeParser('application/json', limits, (request, body: Buffer, done) => {
      try {
        const text = hand(request, body);
        try {
          done(null, JSON.parse(text));
        } catch {
          throw new RefusedInput('The body is not valid JSON.');
        }
      } catch (error) {
        done(error as Error);
      }
    });
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const issuer = new URL(config.auth.publicUrl);
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const path = (request.raw.url ?? '/').split('?')[0]!;
      const methods =
        PROVIDER_METHODS.get(path) ?? (AUTHORIZATION_RESUME.test(path) ? ['GET', 'HEAD'] : undefined);
      if (!methods) return authNotFound(request, reply);
      if (!methods.includes(request.method)) {
        reply.header('Allow', methods.join(', '));
        return sendError(
          request,
          reply,
          405,
          `${shownPath(path)} accepts ${methods.join(', ')}, not ${request.method}.`,
        );
      }
      if (path === TOKEN_PATH && request.method === 'POST') {
        const pairs = (request as FastifyRequest & { [checkedBody]?: [string, string][] })[checkedBody];
        const issued = pairs && (await clientTokens.issue(request.headers, pairs));
        // The headers the provider's token endpoint sends with a token (no-store, and its CORS answer).
        if (issued)
          return reply
            .header('Cache-Control', 'no-store')
            .header('Vary', 'Origin')
            .header('Access-Control-Allow-Origin', '*')
            .header('Access-Control-Expose-Headers', 'WWW-Authenticate')
            .send(issued);
      }
      // The provider builds endpoint URLs from the request: make them the issuer's, whatever Host was used.
      request.raw.headers['x-forwarded-host'] = issuer.host;
      request.raw.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
      // Headers set on the Fastify reply are not sent once it is hijacked: set them on the raw response.
      reply.raw.setHeader('X-Request-Id', request.id);
      const raw = withBodyToRead(request.raw, bodies.get(request));
      requests.set(raw, request);
      const { callback } = await provider();
      reply.hijack();
      await callback(raw, reply.raw);
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
