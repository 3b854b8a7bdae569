import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { authorize, HttpBrowser } from '../helpers/http-browser.ts';
import { buildListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

// openid-client as an independent relying party: client_credentials with a secret, private_key_jwt, and signed
// request objects verified against the client's registered keys.
const REDIRECT = 'https://partner.example/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };

async function keyPair() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig', kid: 'partner-1' },
  };
}

test('client_credentials with client_secret_basic: a token the REST API takes', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app);
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretBasic(client.secret),
    insecure,
  );
  const tokens = await oidc.clientCredentialsGrant(rp, { scope: 'health:read' });
  assert.equal(tokens.scope, 'health:read');
  assert.ok(tokens.expires_in! > 0);
  const health = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  assert.equal(health.statusCode, 200);
});

test('private_key_jwt: the client proves itself with its key, and a wrong key is refused', async (t) => {
  const app = await buildListeningApp(t);
  const { privateKey, publicJwk } = await keyPair();
  const client = await createTestClient(app, { authMethod: 'private_key_jwt', jwks: { keys: [publicJwk] } });
  assert.equal(client.secret, '', 'no secret is made for a key-authenticated client');
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    {},
    oidc.PrivateKeyJwt(privateKey),
    insecure,
  );
  const tokens = await oidc.clientCredentialsGrant(rp, { scope: 'client:admin' });
  assert.equal(tokens.scope, 'client:admin');
  const stranger = await keyPair();
  const impostor = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    {},
    oidc.PrivateKeyJwt(stranger.privateKey),
    insecure,
  );
  await assert.rejects(oidc.clientCredentialsGrant(impostor, { scope: 'client:admin' }), (error: unknown) => {
    assert.equal((error as { error?: string }).error, 'invalid_client');
    return true;
  });
});

test('a signed request object is verified against the client keys; a foreign signature is refused', async (t) => {
  const app = await buildListeningApp(t);
  const id = await createTestPerson(app, { password: 'correct horse battery' });
  const { privateKey, publicJwk } = await keyPair();
  const client = await createTestClient(app, {
    authMethod: 'private_key_jwt',
    jwks: { keys: [publicJwk] },
    redirectUris: [REDIRECT],
  });
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    {},
    oidc.PrivateKeyJwt(privateKey),
    insecure,
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const params = {
    redirect_uri: REDIRECT,
    scope: 'openid user:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'jar-state',
  };
  const url = await oidc.buildAuthorizationUrlWithJAR(rp, params, privateKey);
  assert.ok(url.searchParams.has('request'));
  const result = await authorize(new HttpBrowser(app.authUrl), url.toString(), {
    email: `${id}@people.example`,
    password: 'correct horse battery',
  });
  const tokens = await oidc.authorizationCodeGrant(rp, new URL(result.url), {
    pkceCodeVerifier: verifier,
    expectedState: 'jar-state',
  });
  assert.equal(tokens.claims()?.sub, id);

  const forged = await oidc.buildAuthorizationUrlWithJAR(rp, params, (await keyPair()).privateKey);
  const response = await fetch(forged, { redirect: 'manual', headers: { accept: 'text/html' } });
  const body = await response.text();
  // Nothing in a forged request object can be trusted, its redirect_uri included: an error page, no redirect.
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('location'), null);
  assert.match(body, /invalid_request_object/);
});
