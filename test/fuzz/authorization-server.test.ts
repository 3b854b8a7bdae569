import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Shape } from './answer-shapes.ts';
import { authCase, authRequestOf, listedAuthClasses } from './auth-cases.ts';
import { type AuthOperation, type AuthWorld, buildAuthWorld } from './auth-world.ts';
import { sendChecked } from './fuzz-request.ts';
import { fuzzParameters, selected } from './fuzz-settings.ts';
import { hostileUrlPart, urlPartText } from './hostile-values.ts';

/**
 * Fuzzing of the authorization server: every endpoint its discovery document names (authorization, token,
 * revocation, introspection, userinfo, keys, logout) and the discovery documents themselves, the logout
 * confirmation, and every sign-in, sign-up and consent page of its router, each on a live interaction. The
 * protocol endpoints answer failures in the OAuth error JSON, the pages in HTML; nothing is a 5xx, slow, or a
 * change in the database (beyond the sign-in throttle's counts).
 */

/**
 * The shape a failure must have. Our interaction pages are HTML whatever the client accepts. oidc-provider
 * negotiates its errors: a page for a client that asks for text/html (or text/*), the OAuth error JSON
 * otherwise; so a protocol endpoint is JSON unless HTML was asked for, and the provider's pages
 * (authorization, logout) are HTML when it was.
 */
function shapeFor(operation: AuthOperation, accept: string | undefined): Shape {
  const wantsHtml = /text\/(html|\*)/.test(accept ?? '');
  if (operation.interaction) return 'html';
  if (operation.shape === 'oauth-json') return wantsHtml ? 'oauth-json-or-html' : 'oauth-json';
  return wantsHtml ? 'html' : 'oauth-json-or-html';
}

async function fuzzAuthOperation(world: AuthWorld, operation: AuthOperation): Promise<void> {
  await fc.assert(
    fc.asyncProperty(authCase(operation), async (c) => {
      const { request } = await authRequestOf(world, operation, c);
      // Starting an interaction stores it: read the database again before the request under test.
      if (operation.interaction) world.watch.forget();
      const shape = shapeFor(operation, request.headers.accept);
      await sendChecked(world.app.auth, world.watch, request, shape, operation.name);
    }),
    fuzzParameters(
      operation.name,
      listedAuthClasses(operation).map((c) => [c] as [typeof c]),
    ),
  );
}

test('fuzz: every endpoint and page of the authorization server', async (t) => {
  const world = await buildAuthWorld(t);
  const names = world.operations.map((operation) => operation.name);
  for (const name of [
    'POST /oauth2/token',
    'POST /oauth2/revoke',
    'POST /oauth2/introspect',
    'GET /oauth2/auth',
    'GET /userinfo',
    'POST /interaction/{uid}/login',
    'POST /interaction/{uid}/signup',
    'POST /interaction/{uid}/consent',
  ])
    assert.ok(names.includes(name), `${name} not among ${names}`);
  for (const operation of world.operations) {
    if (selected(operation.name)) await t.test(operation.name, () => fuzzAuthOperation(world, operation));
  }
  // Paths nobody serves: the listener's own 404, in the OAuth error JSON like every other failure there.
  const other = 'auth: paths nobody serves';
  if (selected(other)) {
    await t.test(other, () =>
      fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'DELETE'),
          fc.constantFrom(
            '/',
            '/oauth2/',
            '/oauth2/nothing',
            '/.well-known/',
            '/nothing',
            '/interaction',
            '/rest/health',
          ),
          hostileUrlPart,
          async (method, prefix, part) => {
            const request = { method, url: `${prefix}${urlPartText(part)}`, headers: {} };
            await sendChecked(world.app.auth, world.watch, request, 'oauth-json', other);
          },
        ),
        fuzzParameters(other),
      ),
    );
  }
});
