import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { authorize, HttpBrowser } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

// One test per rule of RFC 9700 (OAuth 2.0 Security Best Current Practice) this server enforces, each asserting
// the exact error a client sees.
const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

interface Setup {
  app: ListeningApp;
  client: { clientId: string; secret: string };
  person: { id: string; email: string; password: string };
}

async function setup(t: Parameters<typeof buildListeningApp>[0], clientScopes?: string[]): Promise<Setup> {
  const app = await buildListeningApp(t, { EWA_REVOCATION_POLL_MS: '100' });
  const id = await createTestPerson(app, { password: PASSWORD });
  const client = await createTestClient(app, {
    redirectUris: [REDIRECT],
    ...(clientScopes ? { scopes: clientScopes } : {}),
  });
  return { app, client, person: { id, email: `${id}@people.example`, password: PASSWORD } };
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizationUrl(s: Setup, params: Record<string, string | undefined>): string {
  const url = new URL('/oauth2/auth', s.app.authUrl);
  const defaults: Record<string, string> = {
    client_id: s.client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid offline_access user:read',
    state: 'state-123',
    prompt: 'consent',
  };
  for (const [key, value] of Object.entries({ ...defaults, ...params }))
    if (value !== undefined) url.searchParams.set(key, value);
  return url.toString();
}

async function tokenRequest(s: Setup, form: Record<string, string>) {
  const response = await fetch(`${s.app.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: s.client.clientId, client_secret: s.client.secret, ...form }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/** Signs in, allows, and returns the code with the verifier it was issued for. */
async function code(s: Setup, scope = 'openid offline_access user:read') {
  const { verifier, challenge } = pkce();
  const result = await authorize(
    new HttpBrowser(s.app.authUrl),
    authorizationUrl(s, { scope, code_challenge: challenge, code_challenge_method: 'S256' }),
    s.person,
  );
  const callback = new URL(result.url);
  assert.equal(callback.origin + callback.pathname, REDIRECT, result.body.slice(0, 300));
  assert.equal(callback.searchParams.get('state'), 'state-123', 'state comes back unchanged');
  return { code: callback.searchParams.get('code')!, verifier };
}

const exchange = (s: Setup, grant: { code: string; verifier: string }) =>
  tokenRequest(s, {
    grant_type: 'authorization_code',
    code: grant.code,
    code_verifier: grant.verifier,
    redirect_uri: REDIRECT,
  });

function assertOAuthError(
  result: { status: number; body: Record<string, string> },
  status: number,
  error: string,
) {
  assert.equal(result.status, status, JSON.stringify(result.body));
  assert.equal(result.body.error, error);
  assert.equal(result.body.error_code, error, 'error_code repeats error');
  assert.equal(typeof result.body.error_description, 'string');
}

async function apiStatus(s: Setup, token: string): Promise<number> {
  return (await s.app.api.inject({ url: '/rest/health', headers: { authorization: `Bearer ${token}` } }))
    .statusCode;
}

test('redirect_uri must match a registered one exactly: no redirect, an error page', async (t) => {
  const s = await setup(t);
  for (const redirect of [`${REDIRECT}/extra`, 'https://partner.example/CALLBACK', `${REDIRECT}?next=x`]) {
    const response = await fetch(
      authorizationUrl(s, {
        redirect_uri: redirect,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
      {
        redirect: 'manual',
        headers: { accept: 'text/html' },
      },
    );
    assert.equal(response.status, 400, redirect);
    assert.equal(response.headers.get('location'), null);
    assert.match(await response.text(), /redirect_uri/);
  }
});

test('open redirect attempt: an unregistered host is never redirected to', async (t) => {
  const s = await setup(t);
  const response = await fetch(
    authorizationUrl(s, {
      redirect_uri: 'https://evil.example/steal',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }),
    {
      redirect: 'manual',
    },
  );
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('location'), null);
});

test('PKCE is required for every client, confidential ones included, and only S256', async (t) => {
  const s = await setup(t);
  const missing = await fetch(authorizationUrl(s, {}), { redirect: 'manual' });
  assert.equal(missing.status, 303);
  const missingTo = new URL(missing.headers.get('location')!);
  assert.equal(missingTo.searchParams.get('error'), 'invalid_request');
  assert.match(missingTo.searchParams.get('error_description')!, /PKCE/);
  assert.equal(missingTo.searchParams.get('state'), 'state-123');
  const { verifier } = pkce();
  const plain = await fetch(
    authorizationUrl(s, { code_challenge: verifier, code_challenge_method: 'plain' }),
    { redirect: 'manual' },
  );
  const plainTo = new URL(plain.headers.get('location')!);
  assert.equal(plainTo.searchParams.get('error'), 'invalid_request');
  assert.match(plainTo.searchParams.get('error_description')!, /code_challenge_method/);
});

test('a wrong code_verifier is invalid_grant', async (t) => {
  const s = await setup(t);
  const grant = await code(s);
  assertOAuthError(await exchange(s, { code: grant.code, verifier: pkce().verifier }), 400, 'invalid_grant');
});

test('a replayed code fails and revokes what the first exchange issued', async (t) => {
  const s = await setup(t);
  const grant = await code(s);
  const first = await exchange(s, grant);
  assert.equal(first.status, 200);
  assert.equal(await apiStatus(s, first.body.access_token!), 403, 'valid user token (health is for clients)');
  assertOAuthError(await exchange(s, grant), 400, 'invalid_grant');
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token! }),
    400,
    'invalid_grant',
  );
  await eventually(async () => (await apiStatus(s, first.body.access_token!)) === 401);
  assert.equal(
    await apiStatus(s, first.body.access_token!),
    401,
    'the access token of the replayed grant is refused',
  );
});

test('refresh tokens rotate; a used one revokes the grant, the newest token included', async (t) => {
  const s = await setup(t);
  const first = await exchange(s, await code(s));
  const second = await tokenRequest(s, {
    grant_type: 'refresh_token',
    refresh_token: first.body.refresh_token!,
  });
  assert.equal(second.status, 200);
  assert.notEqual(second.body.refresh_token, first.body.refresh_token);
  assert.equal(typeof second.body.created_at, 'number');
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token! }),
    400,
    'invalid_grant',
  );
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token! }),
    400,
    'invalid_grant',
  );
  await eventually(async () => (await apiStatus(s, second.body.access_token!)) === 401);
  assert.equal(await apiStatus(s, second.body.access_token!), 401);
});

test('a code or a refresh token sent many times at once is redeemed once; the rest are replays that revoke the grant', async (t) => {
  const s = await setup(t);
  const grant = await code(s);
  const exchanges = await Promise.all(Array.from({ length: 10 }, () => exchange(s, grant)));
  const issued = exchanges.filter((result) => result.status === 200);
  assert.equal(issued.length, 1, JSON.stringify(exchanges.map((result) => result.status)));
  for (const result of exchanges) if (result.status !== 200) assertOAuthError(result, 400, 'invalid_grant');
  const winner = issued[0]!.body;
  await eventually(async () => (await apiStatus(s, winner.access_token!)) === 401);
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: winner.refresh_token! }),
    400,
    'invalid_grant',
  );

  const tokens = (await exchange(s, await code(s))).body;
  const refreshes = await Promise.all(
    Array.from({ length: 10 }, () =>
      tokenRequest(s, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }),
    ),
  );
  const rotated = refreshes.filter((result) => result.status === 200);
  assert.equal(rotated.length, 1, JSON.stringify(refreshes.map((result) => result.status)));
  for (const result of refreshes) if (result.status !== 200) assertOAuthError(result, 400, 'invalid_grant');
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'refresh_token', refresh_token: rotated[0]!.body.refresh_token! }),
    400,
    'invalid_grant',
  );
  await eventually(async () => (await apiStatus(s, rotated[0]!.body.access_token!)) === 401);
});

test('refresh tokens only with offline_access', async (t) => {
  const s = await setup(t);
  const tokens = await exchange(s, await code(s, 'openid user:read'));
  assert.equal(tokens.status, 200);
  assert.equal(tokens.body.refresh_token, undefined);
});

test('scope escalation: a client gets only the scopes registered for it', async (t) => {
  const s = await setup(t, ['openid', 'offline_access', 'user:read', 'health:read']);
  assertOAuthError(
    await tokenRequest(s, { grant_type: 'client_credentials', scope: 'client:admin' }),
    400,
    'invalid_scope',
  );
  const allowed = await tokenRequest(s, { grant_type: 'client_credentials', scope: 'health:read' });
  assert.equal(allowed.status, 200);
  assert.equal(allowed.body.scope, 'health:read');
  const upward = await fetch(
    authorizationUrl(s, {
      scope: 'openid user:read_write',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }),
    {
      redirect: 'manual',
    },
  );
  assert.equal(new URL(upward.headers.get('location')!).searchParams.get('error'), 'invalid_scope');
  const first = await exchange(s, await code(s, 'openid offline_access user:read'));
  assertOAuthError(
    await tokenRequest(s, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      scope: 'user:read health:read',
    }),
    400,
    'invalid_scope',
  );
});

test('a wrong client secret is 401 invalid_client, in the body and the Basic header alike', async (t) => {
  const s = await setup(t);
  const post = await tokenRequest(s, {
    grant_type: 'client_credentials',
    scope: 'health:read',
    client_secret: 'not-the-secret',
  });
  assertOAuthError(post, 401, 'invalid_client');
  const basic = await fetch(`${s.app.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${s.client.clientId}:wrong`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials&scope=health%3Aread',
  });
  assert.equal(basic.status, 401);
  assert.equal(((await basic.json()) as Record<string, string>).error_code, 'invalid_client');
});

test("introspection: a confidential client sees its own tokens, not another client's", async (t) => {
  const s = await setup(t);
  const own = await tokenRequest(s, { grant_type: 'client_credentials', scope: 'health:read' });
  const other = await createTestClient(s.app);
  const introspect = async (client: { clientId: string; secret: string }, token: string) => {
    const response = await fetch(`${s.app.authUrl}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: client.clientId, client_secret: client.secret }),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const seen = await introspect(s.client, own.body.access_token!);
  assert.equal(seen.active, true);
  assert.equal(seen.client_id, s.client.clientId);
  assert.equal(seen.scope, 'health:read');
  assert.deepEqual(await introspect(other, own.body.access_token!), { active: false });
});

test('discovery describes exactly what is enforced', async (t) => {
  const s = await setup(t);
  const discovery = (await (
    await fetch(`${s.app.authUrl}/.well-known/openid-configuration`)
  ).json()) as Record<string, unknown>;
  assert.equal(discovery.issuer, s.app.authUrl);
  assert.equal(discovery.authorization_endpoint, `${s.app.authUrl}/oauth2/auth`);
  assert.equal(discovery.token_endpoint, `${s.app.authUrl}/oauth2/token`);
  assert.equal(discovery.revocation_endpoint, `${s.app.authUrl}/oauth2/revoke`);
  assert.equal(discovery.userinfo_endpoint, `${s.app.authUrl}/userinfo`);
  assert.equal(discovery.jwks_uri, `${s.app.authUrl}/.well-known/jwks.json`);
  assert.equal(discovery.end_session_endpoint, `${s.app.authUrl}/oauth2/sessions/logout`);
  assert.deepEqual(discovery.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(discovery.response_types_supported, ['code']);
  assert.equal(discovery.pushed_authorization_request_endpoint, undefined);
  const jwks = (await (await fetch(`${s.app.authUrl}/.well-known/jwks.json`)).json()) as {
    keys: Record<string, unknown>[];
  };
  assert.ok(jwks.keys.length >= 1);
  for (const key of jwks.keys) assert.equal(key.d, undefined, 'no private key material is published');
});

test("a native app's loopback redirect URI may change its port, and nothing else (RFC 8252 §7.3)", async (t) => {
  const s = await setup(t);
  // As the sandbox's demo-partner-mobile: public, with a private-use scheme, so a native app.
  const native = await createTestClient(s.app, {
    isPublic: true,
    redirectUris: ['http://localhost:3000/callback', 'com.example.ewa:/callback'],
    scopes: ['openid', 'user:read'],
  });
  const web = await createTestClient(s.app, { redirectUris: ['http://localhost:3000/callback'] });
  const ask = (clientId: string, redirect: string) =>
    fetch(
      authorizationUrl(s, {
        client_id: clientId,
        redirect_uri: redirect,
        scope: 'openid user:read',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual', headers: { accept: 'text/html' } },
    );
  for (const redirect of ['http://localhost:3000/callback', 'http://localhost:51234/callback']) {
    const response = await ask(native.clientId, redirect);
    assert.equal(response.status, 303, redirect);
    assert.match(response.headers.get('location')!, /\/interaction\//, `${redirect} goes on to sign-in`);
  }
  for (const redirect of [
    'http://localhost:51234/other',
    'http://localhost:51234/callback?next=x',
    'http://127.0.0.1:3000/callback',
    'https://localhost:3000/callback',
    'http://partner.example:3000/callback',
  ]) {
    const response = await ask(native.clientId, redirect);
    assert.equal(response.status, 400, redirect);
    assert.equal(response.headers.get('location'), null, redirect);
  }
  const webOtherPort = await ask(web.clientId, 'http://localhost:51234/callback');
  assert.equal(webOtherPort.status, 400, 'a confidential (web) client matches exactly, port included');
  assert.equal(webOtherPort.headers.get('location'), null);
});
