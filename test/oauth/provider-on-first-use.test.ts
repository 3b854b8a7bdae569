import assert from 'node:assert/strict';
import { registerHooks } from 'node:module';
import { test } from 'node:test';

// Every resolution of oidc-provider in this process, from here on: the test's own imports come after the hook, and
// none of them (not test/helpers/tokens.ts, which issues user tokens through the provider) may name it.
const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === 'oidc-provider') resolved.push(context.parentURL ?? '');
    return next(specifier, context);
  },
});
const { buildTestApp } = await import('../helpers/build-test-app.ts');
const { createClient } = await import('../../src/oauth/clients.ts');

test('oidc-provider is loaded by the first request that needs it, not by a server that answers only tokens and the API', async (t) => {
  const app = await buildTestApp(t);
  const { client, secret } = await createClient(
    app.database.db,
    {
      name: 'Health Checker',
      isPublic: false,
      redirectUris: ['https://partner.example/callback'],
      scopes: ['health:read'],
      organizationIds: [],
    },
    { sandbox: true },
  );
  // Built here, not with test/helpers/tokens.ts, which imports the provider to issue user tokens.
  const askToken = (extra: Record<string, string>) =>
    app.auth.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        scope: 'health:read',
        client_id: client.clientId,
        client_secret: secret ?? '',
        ...extra,
      }).toString(),
    });
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
