import assert from 'node:assert/strict';
import { registerHooks } from 'node:module';
import { test } from 'node:test';

// Every resolution of oidc-provider in this process, from here on: the test's own imports come after the hook, and
// none of them may name it (test/helpers/tokens.ts imports the provider only when it issues a user token).
const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'oidc-provider') resolved.push(context.parentURL ?? '');
    return next(specifier, context);
  },
});
const { buildTestApp } = await import('../helpers/build-test-app.ts');
const { clientCredentialsRequest, createTestClient } = await import('../helpers/tokens.ts');

test('oidc-provider is loaded by the first request that needs it, not by a server that answers only tokens and the API', async (t) => {
  const app = await buildTestApp(t);
  const client = await createTestClient(app, { scopes: ['health:read'] });
  const askToken = (extra: Record<string, string>) =>
    clientCredentialsRequest(app, client, { scope: 'health:read', ...extra });
  const token = await askToken({});
  assert.equal(token.statusCode, 200, token.body);
  const health = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: `Bearer ${token.json().access_token}` },
  });
  assert.equal(health.statusCode, 200, health.body);
  assert.deepEqual(resolved, [], 'the server and its plain client_credentials path loaded oidc-provider');

  // Two requests at once that both need it: one provider is made, and both are answered by it.
  const [discovery, keys] = await Promise.all([
    app.auth.inject({ url: '/.well-known/openid-configuration' }),
    app.auth.inject({ url: '/.well-known/jwks.json' }),
  ]);
  assert.equal(discovery.statusCode, 200, discovery.body);
  assert.equal(keys.statusCode, 200, keys.body);
  assert.equal(discovery.json().issuer, app.config.auth.publicUrl);
  assert.ok(resolved.length > 0, 'the provider answered without oidc-provider being loaded');
  assert.ok(resolved.every((parent) => /\/src\/oauth\/(provider|adapter)\.ts$/.test(parent)));

  // A token request the plain path leaves to the provider (a resource indicator) is answered by it.
  const viaProvider = await askToken({ resource: app.config.api.publicUrl });
  assert.equal(viaProvider.statusCode, 200, viaProvider.body);
});
