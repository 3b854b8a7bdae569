import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importJWK, SignJWT } from 'jose';
import { deleteClient } from '../../src/oauth/clients.ts';
import { loadSigningKeys } from '../../src/oauth/signing-keys.ts';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';
import { clientToken, createTestClient, createTestPerson, userToken } from '../helpers/tokens.ts';

const call = (app: TestApp, token?: string) =>
  app.api.inject({ url: '/rest/health', headers: token === undefined ? {} : { authorization: token } });

/** A token signed with the server's own active key, with claims of the test's choosing. */
async function forge(app: TestApp, claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const key = (await loadSigningKeys(app.database.db, app.config.masterKey, new Date(), 3600)).find(
    (k) => k.alg === 'ES256',
  );
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    client_id: 'someone',
    scope: 'health:read',
    iat: now,
    exp: now + 600,
    iss: app.config.auth.publicUrl,
    aud: app.config.api.publicUrl,
    sub: 'someone',
    jti: 'forged',
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key!.kid, ...header })
    .sign(await importJWK(key!.jwk, 'ES256'));
}

test('no token, a malformed header or a token that is not ours: 401 INVALID_TOKEN with WWW-Authenticate', async (t) => {
  const app = await buildTestApp(t);
  const valid = await clientToken(app, ['health:read']);
  const cases = [
    undefined,
    'Bearer',
    'Basic dXNlcjpwYXNz',
    `bearer${valid}`,
    'Bearer not-a-jwt',
    `Bearer ${valid.slice(0, -4)}AAAA`,
    `Bearer ${valid.replace(/\.[^.]+\./, '.e30.')}`,
  ];
  for (const header of cases) {
    const response = await call(app, header);
    assert.equal(response.statusCode, 401, String(header));
    assert.equal(response.json().errors[0].code, 'INVALID_TOKEN');
    assert.match(String(response.headers['www-authenticate']), /^Bearer/);
  }
  assert.equal((await call(app, `Bearer ${valid}`)).statusCode, 200);

  // Another spelling of the same token (padded, or a spare bit of a part's last character set) is not taken, so
  // variants of one token cannot fill the cache of verified tokens.
  const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = valid.at(-1)!;
  const spareBitSet = `${valid.slice(0, -1)}${base64url[base64url.indexOf(last) ^ 1]}`;
  for (const variant of [`${valid}==`, spareBitSet]) {
    const response = await call(app, `Bearer ${variant}`);
    assert.equal(response.statusCode, 401, variant);
    assert.equal(response.json().errors[0].code, 'INVALID_TOKEN');
  }

  // Two Authorization headers, even the same token twice: neither is taken.
  const twice = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: [`Bearer ${valid}`, `Bearer ${valid}`] as unknown as string },
  });
  assert.equal(twice.statusCode, 401, twice.body);
  assert.equal(
    twice.json().errors[0].detail,
    'Send one Authorization header: this request has more than one.',
  );
});

test('tokens of another issuer, audience, type, or expired are refused', async (t) => {
  const app = await buildTestApp(t);
  const now = Math.floor(Date.now() / 1000);
  assert.equal(
    (await call(app, `Bearer ${await forge(app, {})}`)).statusCode,
    200,
    'the control token is accepted',
  );
  for (const [label, token] of [
    ['issuer', await forge(app, { iss: 'https://elsewhere.example' })],
    ['audience', await forge(app, { aud: 'https://other-api.example' })],
    ['expired', await forge(app, { iat: now - 7200, exp: now - 3600 })],
    ['type', await forge(app, {}, { typ: 'JWT' })],
  ] as const) {
    assert.equal((await call(app, `Bearer ${token}`)).statusCode, 401, label);
  }
});

test('wrong kind of token or missing scope: 403 FORBIDDEN naming what is needed', async (t) => {
  const app = await buildTestApp(t);
  const client = await createTestClient(app);
  const noHealth = await clientToken(app, ['client:admin'], client);
  const forbidden = await call(app, `Bearer ${noHealth}`);
  assert.equal(forbidden.statusCode, 403);
  assert.equal(forbidden.json().errors[0].code, 'FORBIDDEN');
  assert.match(forbidden.json().errors[0].detail, /client token with health:read/);
  assert.match(String(forbidden.headers['www-authenticate']), /insufficient_scope/);
  const person = await createTestPerson(app);
  const user = await userToken(app, person, ['user:read', 'user:read_write'], client.clientId);
  assert.equal((await call(app, `Bearer ${user}`)).statusCode, 403, 'a user token is not a client token');
});

test('revocations reach the API within one poll: revoked token, deleted client', async (t) => {
  const app = await buildTestApp(t, { EWA_REVOCATION_POLL_MS: '100' });
  const client = await createTestClient(app);
  const first = await clientToken(app, ['health:read'], client);
  const second = await clientToken(app, ['health:read'], client);
  assert.equal((await call(app, `Bearer ${first}`)).statusCode, 200);
  const revoke = await app.auth.inject({
    method: 'POST',
    url: '/oauth2/revoke',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      token: first,
      client_id: client.clientId,
      client_secret: client.secret,
    }).toString(),
  });
  assert.equal(revoke.statusCode, 200);
  await eventually(async () => (await call(app, `Bearer ${first}`)).statusCode === 401);
  assert.equal((await call(app, `Bearer ${first}`)).statusCode, 401, 'the revoked token');
  assert.equal((await call(app, `Bearer ${second}`)).statusCode, 200, 'another token of the same client');
  await deleteClient(app.database.db, client.clientId, new Date());
  await eventually(async () => (await call(app, `Bearer ${second}`)).statusCode === 401);
  assert.equal((await call(app, `Bearer ${second}`)).statusCode, 401, 'every token of a deleted client');
});

test("a client cannot revoke another client's token", async (t) => {
  const app = await buildTestApp(t, { EWA_REVOCATION_POLL_MS: '100' });
  const owner = await createTestClient(app);
  const other = await createTestClient(app);
  const token = await clientToken(app, ['health:read'], owner);
  const response = await app.auth.inject({
    method: 'POST',
    url: '/oauth2/revoke',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      token,
      client_id: other.clientId,
      client_secret: other.secret,
    }).toString(),
  });
  assert.equal(response.statusCode, 200, 'RFC 7009: answered like any other token');
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal((await call(app, `Bearer ${token}`)).statusCode, 200, 'and still valid');
});

test('every /rest route declares who may call it', async (t) => {
  await assert.rejects(
    buildTestApp(t, {}, async (api) => {
      api.get('/rest/unguarded', async () => ({}));
    }),
    /GET \/rest\/unguarded declares no security/,
  );
});
