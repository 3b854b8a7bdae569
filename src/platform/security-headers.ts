import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';
import type { Config } from '../config.ts';
import { DOCS_PREFIX } from './json-api.ts';

export type Listener = 'api' | 'auth' | 'payments';

export interface SecurityHeadersOptions {
  config: Config;
  listener: Listener;
}

/** A year, as browsers' preload lists ask; HSTS is sent in production only, where every listener is behind HTTPS. */
const HSTS_MAX_AGE_SECONDS = 31_536_000;

/**
 * Response headers that tell browsers what they may do with an answer, set by helmet on every listener:
 * `X-Content-Type-Options: nosniff`; a Content-Security-Policy whose `frame-ancestors 'none'` (with
 * `X-Frame-Options: DENY`) keeps every page, above all the sign-in, sign-up and consent pages, out of another
 * site's frames, so that nobody can trick a click on Allow; HSTS in production. On the REST and payments listeners,
 * every answer but the documentation (when it is served) is `Cache-Control: no-store`, since it may carry personal
 * data or a token.
 * Helmet writes on the raw response, so the authorization server's answers (the provider answers on the raw
 * response) carry them too.
 *
 * Helmet's middleware is built once per listener and run on each request. (@fastify/helmet builds it again on
 * every request, parsing the policy each time: a measurable share of a token request.)
 */
async function securityHeaders(app: FastifyInstance, options: SecurityHeadersOptions): Promise<void> {
  const setHeaders = helmet(helmetOptions(options.config, options.listener));
  app.addHook('onRequest', (request, reply, done) =>
    setHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined)),
  );
  if (options.listener === 'auth') return; // its pages and the provider's answers say no-store themselves
  app.addHook('onSend', async (request, reply, payload) => {
    // An error is about one request (its request id), even on a documentation page.
    if (reply.statusCode >= 400 || !isDocumentation(request)) reply.header('Cache-Control', 'no-store');
    return payload;
  });
}

/** The reference page and its assets, the error catalog page and the OpenAPI document: the same for everyone. */
function isDocumentation(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route === undefined) return false;
  return route === '/rest/errors' || route === '/rest/openapi.json' || route.startsWith(DOCS_PREFIX);
}

export function helmetOptions(config: Config, listener: Listener): HelmetOptions {
  const production = config.env === 'production';
  return {
    contentSecurityPolicy: { useDefaults: false, directives: directivesOf(config, listener) },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: production ? { maxAge: HSTS_MAX_AGE_SECONDS } : false,
    // Sign-in by a popup (the reference page's "Authorize", a partner's web app) needs the popup to keep its
    // opener across the authorization server and back; these listeners serve no document that needs isolating.
    crossOriginOpenerPolicy: listener === 'payments',
  };
}

function directivesOf(config: Config, listener: Listener): Record<string, string[] | null> {
  const upgrade = config.env === 'production' ? [] : null;
  if (listener === 'payments') {
    // JSON only: nothing to load, nothing to frame.
    return { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] };
  }
  const common = {
    'default-src': ["'self'"],
    'base-uri': ["'self'"],
    'frame-ancestors': ["'none'"],
    'object-src': ["'none'"],
    'script-src': ["'self'"],
    'script-src-attr': ["'none'"],
    'upgrade-insecure-requests': upgrade,
  };
  if (listener === 'api') {
    // The reference page (swagger-ui) loads its scripts, styles and images from here, sets inline styles, and
    // calls the API and, to sign in, the authorization server's token endpoint.
    return {
      ...common,
      'connect-src': ["'self'", new URL(config.api.publicUrl).origin, new URL(config.auth.publicUrl).origin],
      'font-src': ["'self'", 'data:'],
      'img-src': ["'self'", 'data:'],
      'style-src': ["'self'", "'unsafe-inline'"],
      'form-action': ["'self'"],
    };
  }
  // The sign-in, sign-up and consent pages: one inline style sheet, the client's logo from wherever it is hosted,
  // and no form-action, since a form's answer redirects to the client's redirect URI (browsers hold redirects
  // after a form to form-action). oidc-provider adds the hash of the one script it writes (form_post).
  return {
    ...common,
    'img-src': ["'self'", 'data:', 'https:', ...(config.env === 'production' ? [] : ['http:'])],
    'style-src': ["'self'", "'unsafe-inline'"],
  };
}

export const securityHeadersPlugin = fp(securityHeaders, { name: 'security-headers', fastify: '5.x' });
