import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { securityHeadersPlugin } from '../../src/platform/security-headers.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';

const PRODUCTION = {
  EWA_ENV: 'production',
  DATABASE_URL: 'postgres://u@db.example:5432/ewa',
  EWA_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
  EWA_SEED_DEMO: 'false',
  ...PRODUCTION_RAIL_ENV,
};

/** One listener with its security headers and a route, nothing else. */
async function listenerWith(env: Record<string, string>, listener: 'api' | 'auth' | 'payments') {
  const app = Fastify();
  await app.register(securityHeadersPlugin, { config: loadConfig(env), listener });
  app.get('/page', async () => 'ok');
  return app;
}

test('HSTS on every listener in production, and the browser upgrades any http: link', async () => {
  for (const listener of ['api', 'auth', 'payments'] as const) {
    const app = await listenerWith(PRODUCTION, listener);
    const response = await app.inject({ url: '/page' });
    assert.match(String(response.headers['strict-transport-security']), /^max-age=31536000/, listener);
    if (listener !== 'payments')
      assert.match(
        String(response.headers['content-security-policy']),
        /upgrade-insecure-requests/,
        listener,
      );
    await app.close();
  }
});

test('no HSTS in the sandbox, which is served over plain HTTP', async () => {
  for (const listener of ['api', 'auth', 'payments'] as const) {
    const app = await listenerWith({}, listener);
    const response = await app.inject({ url: '/page' });
    assert.equal(response.headers['strict-transport-security'], undefined, listener);
    assert.doesNotMatch(String(response.headers['content-security-policy']), /upgrade-insecure-requests/);
    await app.close();
  }
});

test('the reference page may call the API and the authorization server, and nothing else', async () => {
  const app = await listenerWith(PRODUCTION, 'api');
  const policy = String((await app.inject({ url: '/page' })).headers['content-security-policy']);
  assert.match(policy, /connect-src 'self' https:\/\/api\.example\.com https:\/\/auth\.example\.com(;|$)/);
  assert.match(policy, /script-src 'self'(;|$)/);
  await app.close();
});
