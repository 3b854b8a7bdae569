import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as oidc from 'openid-client';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient } from '../helpers/tokens.ts';

// Which scopes a grant may carry: client_credentials acts for the client itself and gets client scopes only; a
// person's sign-in gets user scopes only. Checked with plain form posts and with openid-client.
const REDIRECT = 'https://partner.example/callback';
const insecure = { execute: [oidc.allowInsecureRequests] };

async function tokenRequest(app: ListeningApp, client: { clientId: string; secret: string }, scope?: string) {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.secret,
  });
  if (scope !== undefined) form.set('scope', scope);
  const response = await fetch(`${app.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/** The scope claim of a JWT access token, as the REST API reads it. */
const scopeClaim = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).scope as string | undefined;

test('client_credentials refuses user, OpenID and unknown scopes with invalid_scope', async (t) => {
  const app = await buildListeningApp(t);
  // Registered for everything a confidential client may have, user scopes included.
  const client = await createTestClient(app);
  for (const scope of [
    'user:read user:read_write',
    'user:read',
    'client:admin user:read',
    'openid',
    'offline_access',
    'no:such_scope',
  ]) {
    const answer = await tokenRequest(app, client, scope);
    assert.equal(answer.status, 400, `${scope}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.error, 'invalid_scope', scope);
    assert.equal(answer.body.error_code, 'invalid_scope', scope);
    assert.equal(typeof answer.body.error_description, 'string');
    assert.equal(answer.body.access_token, undefined);
  }
});

test('client_credentials without scope gets the client scopes registered for the client', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app, {
    scopes: ['openid', 'user:read', 'client:lookup', 'health:read'],
  });
  for (const scope of [undefined, '']) {
    const answer = await tokenRequest(app, client, scope);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.scope, 'client:lookup health:read');
    assert.equal(scopeClaim(answer.body.access_token!), 'client:lookup health:read');
  }
  const narrower = await tokenRequest(app, client, 'health:read');
  assert.equal(narrower.body.scope, 'health:read', 'a scope asked for is given alone');
  const unregistered = await tokenRequest(app, client, 'client:admin');
  assert.equal(unregistered.body.error, 'invalid_scope', 'a client scope not registered for the client');
});

test('openid-client: a client_credentials grant for a user scope is refused', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app);
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretBasic(client.secret),
    insecure,
  );
  await assert.rejects(
    oidc.clientCredentialsGrant(rp, { scope: 'user:read user:read_write' }),
    (error: unknown) => {
      assert.equal((error as { error?: string }).error, 'invalid_scope');
      return true;
    },
  );
  const tokens = await oidc.clientCredentialsGrant(rp, { scope: 'client:admin' });
  assert.equal(tokens.scope, 'client:admin');
});

test("a person's sign-in cannot ask for a client scope", async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const url = new URL('/oauth2/auth', app.authUrl);
  for (const [key, value] of Object.entries({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid user:read client:admin',
    state: 'state-1',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(key, value);
  const response = await fetch(url, { redirect: 'manual' });
  assert.equal(response.status, 303);
  const to = new URL(response.headers.get('location')!);
  assert.equal(to.origin + to.pathname, REDIRECT);
  assert.equal(to.searchParams.get('error'), 'invalid_scope');
  assert.equal(to.searchParams.get('state'), 'state-1');
});
