import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';

const APP_ORIGIN = 'https://app.example.com';
const OTHER_ORIGIN = 'https://elsewhere.example';
const LISTED = { EWA_CORS_ORIGINS: `${APP_ORIGIN}, https://second.example.com` };

const preflight = (
  origin: string,
  method = 'POST',
  headers = 'authorization,content-type,idempotency-key',
) => ({
  method: 'OPTIONS' as const,
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': headers,
  },
});

function allowHeaders(headers: Record<string, unknown>): string[] {
  return Object.keys(headers).filter((name) => name.startsWith('access-control-'));
}

test('a preflight from a configured origin is allowed (methods, the headers clients send, for how long); others get nothing', async (t) => {
  const app = await buildTestApp(t, LISTED);
  const response = await app.api.inject({
    url: '/rest/transfers',
    ...preflight(
      APP_ORIGIN,
      'POST',
      'authorization,content-type,idempotency-key,service-api-version,traceparent',
    ),
  });
  assert.equal(response.statusCode, 204);
  assert.equal(response.headers['access-control-allow-origin'], APP_ORIGIN);
  assert.match(String(response.headers.vary), /Origin/);
  const methods = String(response.headers['access-control-allow-methods']).split(/,\s*/);
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) assert.ok(methods.includes(method), method);
  const allowed = String(response.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
  for (const name of [
    'authorization',
    'content-type',
    'idempotency-key',
    'service-api-version',
    'traceparent',
  ])
    assert.ok(allowed.includes(name), name);
  assert.match(String(response.headers['access-control-max-age']), /^\d+$/);
  assert.equal(response.headers['access-control-allow-credentials'], undefined, 'never credentials');
  assert.ok(response.headers['x-request-id']);
  // A version header of the published description's form is allowed when a preflight asks for it.
  const versioned = await app.api.inject({
    url: '/rest/transfers',
    ...preflight(APP_ORIGIN, 'GET', 'Authorization, Partner-API-Version'),
  });
  assert.equal(versioned.statusCode, 204);
  const versionedAllowed = String(versioned.headers['access-control-allow-headers'])
    .toLowerCase()
    .split(/,\s*/);
  assert.ok(versionedAllowed.includes('partner-api-version'), versionedAllowed.join());
  assert.ok(!versionedAllowed.includes('x-partner-api-version'));
  // /admin too.
  const admin = await app.api.inject({ url: '/admin/organizations', ...preflight(APP_ORIGIN, 'GET') });
  assert.equal(admin.statusCode, 204);
  assert.equal(admin.headers['access-control-allow-origin'], APP_ORIGIN);
  // An origin not on the list gets no CORS header at all, and the browser refuses the call.
  for (const origin of [OTHER_ORIGIN, 'null', `${APP_ORIGIN}.evil.example`]) {
    const response = await app.api.inject({ url: '/rest/transfers', ...preflight(origin) });
    assert.notEqual(response.statusCode, 204, origin);
    assert.deepEqual(allowHeaders(response.headers), [], origin);
  }
});

test('answers to a configured origin, errors included, can be read: allow origin, and X-Request-Id exposed', async (t) => {
  const app = await buildTestApp(t, LISTED);
  const token = await clientToken(app, ['health:read']);
  const ok = await app.api.inject({
    url: '/rest/health',
    headers: { origin: APP_ORIGIN, authorization: `Bearer ${token}` },
  });
  const refused = await app.api.inject({ url: '/rest/health', headers: { origin: APP_ORIGIN } });
  assert.equal(ok.statusCode, 200);
  assert.equal(refused.statusCode, 401);
  for (const response of [ok, refused]) {
    assert.equal(response.headers['access-control-allow-origin'], APP_ORIGIN);
    const exposed = String(response.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    assert.ok(exposed.includes('x-request-id'));
  }
  const other = await app.api.inject({ url: '/rest/health', headers: { origin: OTHER_ORIGIN } });
  assert.deepEqual(allowHeaders(other.headers), []);
});

test('in the sandbox every origin may call (EWA_CORS_ORIGINS defaults to *)', async (t) => {
  const app = await buildTestApp(t);
  const response = await app.api.inject({ url: '/rest/people/x', ...preflight(OTHER_ORIGIN, 'GET') });
  assert.equal(response.statusCode, 204);
  assert.equal(response.headers['access-control-allow-origin'], '*');
});

test("the authorization server's discovery and token endpoints follow the configured origins, not *", async (t) => {
  const app = await buildTestApp(t, LISTED);
  for (const url of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
    const listed = await app.auth.inject({ url, headers: { origin: APP_ORIGIN } });
    assert.equal(listed.statusCode, 200, url);
    assert.equal(listed.headers['access-control-allow-origin'], APP_ORIGIN, url);
    const other = await app.auth.inject({ url, headers: { origin: OTHER_ORIGIN } });
    assert.equal(other.statusCode, 200, url);
    assert.deepEqual(allowHeaders(other.headers), [], url);
  }
  const listedPreflight = await app.auth.inject({ url: '/oauth2/token', ...preflight(APP_ORIGIN) });
  assert.equal(listedPreflight.headers['access-control-allow-origin'], APP_ORIGIN);
  const otherPreflight = await app.auth.inject({ url: '/oauth2/token', ...preflight(OTHER_ORIGIN) });
  assert.deepEqual(allowHeaders(otherPreflight.headers), []);
  // A browser app (a public client) may call the token endpoint from its own origin only if that origin is listed.
  const codeExchange = async (origin: string) => {
    const client = await createTestClient(app, {
      isPublic: true,
      redirectUris: [`${origin}/callback`],
      scopes: ['openid', 'user:read'],
    });
    return app.auth.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: client.clientId,
        code: 'no-such-code',
        redirect_uri: `${origin}/callback`,
        code_verifier: 'v'.repeat(43),
      }).toString(),
    });
  };
  const fromListed = await codeExchange(APP_ORIGIN);
  assert.equal(fromListed.json().error, 'invalid_grant', fromListed.body);
  assert.equal(fromListed.headers['access-control-allow-origin'], APP_ORIGIN);
  const fromOther = await codeExchange(OTHER_ORIGIN);
  assert.equal(fromOther.json().error, 'invalid_request', fromOther.body);
  assert.deepEqual(allowHeaders(fromOther.headers), []);
});
