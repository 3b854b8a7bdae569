import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import * as oidc from 'openid-client';
import { createClient, findClient } from '../../src/oauth/clients.ts';
import { claimDemoData, DEMO } from '../../src/seed/demo.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { authorize, HttpBrowser } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson, userToken } from '../helpers/tokens.ts';

// The OpenID Connect claims of a person: `profile` gives name, given_name, family_name; `email` gives email and
// email_verified (false: nothing here proves the person controls the address). Only the claims of the scopes a
// token was granted, at /userinfo and in the ID token; none of these scopes opens anything of the REST API.
const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';
const insecure = { execute: [oidc.allowInsecureRequests] };

const PROFILE = { name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace' };

async function setUp(t: TestContext) {
  const app = await buildListeningApp(t);
  const id = await createTestPerson(app, { password: PASSWORD });
  await app.database.db
    .updateTable('people')
    .set({ first_name: 'Ada', last_name: 'Lovelace' })
    .where('id', '=', id)
    .execute();
  const email = `${id}@people.example`;
  const client = await createTestClient(app, {
    redirectUris: [REDIRECT],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'user:read', 'client:admin'],
  });
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretPost(client.secret),
    insecure,
  );
  return { app, person: { id, email }, client, rp };
}

/** A sign-in in `browser` (a new one unless given) for `scope`, and the tokens of its code. */
async function signIn(
  s: { app: ListeningApp; person: { id: string; email: string }; rp: oidc.Configuration },
  scope: string,
  browser = new HttpBrowser(s.app.authUrl),
  extra: Record<string, string> = {},
) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(s.rp, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  const result = await authorize(browser, url.toString(), { email: s.person.email, password: PASSWORD });
  assert.ok(result.url.startsWith(`${REDIRECT}?`), `${scope}: ${result.status} ${result.body.slice(0, 400)}`);
  const tokens = await oidc.authorizationCodeGrant(s.rp, new URL(result.url), {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  return { tokens, browser };
}

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/** The person's claims of an ID token or userinfo answer: the standard ones of a person, nothing else. */
function personClaims(claims: Record<string, unknown>) {
  const names = ['sub', 'name', 'given_name', 'family_name', 'email', 'email_verified'];
  return Object.fromEntries(Object.entries(claims).filter(([name]) => names.includes(name)));
}

test('profile and email: their claims at /userinfo and in the ID token, and nothing more of the API', async (t) => {
  const s = await setUp(t);
  const { tokens } = await signIn(s, 'openid profile email offline_access user:read', undefined, {
    prompt: 'consent',
  });
  const all = { sub: s.person.id, ...PROFILE, email: s.person.email, email_verified: false };
  assert.deepEqual(personClaims(tokens.claims()!), all, 'ID token');
  assert.deepEqual(await oidc.fetchUserInfo(s.rp, tokens.access_token, s.person.id), all, 'userinfo');
  // The access token of the REST API carries the API scopes only.
  assert.equal(tokens.scope, 'user:read');
  assert.equal(jwtPayload(tokens.access_token).scope, 'user:read');

  // After a refresh: the same claims; and a refresh narrowed to openid gives the subject alone.
  const refreshed = await oidc.refreshTokenGrant(s.rp, tokens.refresh_token!);
  assert.deepEqual(personClaims(refreshed.claims()!), all, 'ID token after a refresh');
  assert.deepEqual(await oidc.fetchUserInfo(s.rp, refreshed.access_token, s.person.id), all);
  const narrowed = await oidc.refreshTokenGrant(s.rp, refreshed.refresh_token!, {
    scope: 'openid user:read',
  });
  assert.deepEqual(personClaims(narrowed.claims()!), { sub: s.person.id }, 'narrowed ID token');
  assert.deepEqual(await oidc.fetchUserInfo(s.rp, narrowed.access_token, s.person.id), {
    sub: s.person.id,
  });
});

test('without profile and email: the subject alone; with one of them, its claims alone', async (t) => {
  const s = await setUp(t);
  const cases: [string, Record<string, unknown>][] = [
    ['openid user:read', { sub: s.person.id }],
    ['openid profile user:read', { sub: s.person.id, ...PROFILE }],
    ['openid email user:read', { sub: s.person.id, email: s.person.email, email_verified: false }],
  ];
  for (const [scope, expected] of cases) {
    const { tokens } = await signIn(s, scope);
    assert.deepEqual(personClaims(tokens.claims()!), expected, `${scope}: ID token`);
    assert.deepEqual(await oidc.fetchUserInfo(s.rp, tokens.access_token, s.person.id), expected, scope);
  }
});

test('a later sign-in in the same browser asking for less gets the claims it asked for, not all allowed', async (t) => {
  const s = await setUp(t);
  const first = await signIn(s, 'openid profile email user:read');
  assert.equal(
    (await oidc.fetchUserInfo(s.rp, first.tokens.access_token, s.person.id)).email,
    s.person.email,
  );
  // The same browser: signed in already, and profile and email allowed already; this token asked for neither.
  const second = await signIn(s, 'openid user:read', first.browser);
  assert.deepEqual(personClaims(second.tokens.claims()!), { sub: s.person.id });
  assert.deepEqual(await oidc.fetchUserInfo(s.rp, second.tokens.access_token, s.person.id), {
    sub: s.person.id,
  });
});

test('a sign-in for OpenID scopes only: claims, and a token the REST API refuses everywhere', async (t) => {
  const s = await setUp(t);
  const { tokens } = await signIn(s, 'openid profile email');
  const all = { sub: s.person.id, ...PROFILE, email: s.person.email, email_verified: false };
  assert.deepEqual(personClaims(tokens.claims()!), all);
  assert.deepEqual(await oidc.fetchUserInfo(s.rp, tokens.access_token, s.person.id), all);
  // A REST API token with no scope: valid, so 403 rather than 401, everywhere.
  assert.equal(jwtPayload(tokens.access_token).scope, undefined);
  for (const url of [`/rest/people/${s.person.id}`, '/rest/health']) {
    const response = await s.app.api.inject({
      url,
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(response.statusCode, 403, url);
    assert.equal(response.json().errors[0].code, 'FORBIDDEN', url);
  }
  // The same person's user:read token reads their record: the refusal above is for the scopes.
  const readable = await s.app.api.inject({
    url: `/rest/people/${s.person.id}`,
    headers: {
      authorization: `Bearer ${await userToken(s.app, s.person.id, ['user:read'], s.client.clientId)}`,
    },
  });
  assert.equal(readable.statusCode, 200);
});

test('client_credentials cannot ask for profile or email, nor a sign-in a client not registered for them', async (t) => {
  const s = await setUp(t);
  for (const scope of ['profile', 'email', 'client:admin email']) {
    const response = await fetch(`${s.app.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: s.client.clientId,
        client_secret: s.client.secret,
        scope,
      }),
    });
    assert.equal(response.status, 400, scope);
    assert.equal(((await response.json()) as { error: string }).error, 'invalid_scope', scope);
  }
  const narrow = await createTestClient(s.app, { redirectUris: [REDIRECT], scopes: ['openid', 'user:read'] });
  const rp = await oidc.discovery(
    new URL(s.app.authUrl),
    narrow.clientId,
    narrow.secret,
    oidc.ClientSecretPost(narrow.secret),
    insecure,
  );
  const url = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: REDIRECT,
    scope: 'openid profile email user:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    state: 'state-1',
  });
  const refused = await fetch(url, { redirect: 'manual' });
  assert.equal(refused.status, 303);
  const to = new URL(refused.headers.get('location')!);
  assert.equal(to.origin + to.pathname, REDIRECT);
  assert.equal(to.searchParams.get('error'), 'invalid_scope');
  assert.equal(to.searchParams.get('state'), 'state-1');
});

test('discovery lists the scopes and claims; public and confidential clients may register them', async (t) => {
  const s = await setUp(t);
  const discovery = s.rp.serverMetadata();
  for (const scope of ['openid', 'profile', 'email', 'offline_access', 'user:read'])
    assert.ok(discovery.scopes_supported?.includes(scope), scope);
  for (const claim of ['sub', 'name', 'given_name', 'family_name', 'email', 'email_verified'])
    assert.ok(discovery.claims_supported?.includes(claim), claim);
  for (const isPublic of [true, false]) {
    const { client } = await createClient(
      s.app.database.db,
      {
        name: 'Profile reader',
        isPublic,
        redirectUris: [REDIRECT],
        scopes: ['openid', 'profile', 'email'],
        organizationIds: [],
      },
      { sandbox: true },
    );
    assert.deepEqual(client.scopes, ['openid', 'profile', 'email']);
  }
});

test('the demo clients have profile and email; a demo client made before them is given them', async (t) => {
  const app = await buildTestApp(t);
  const { public: mobile, confidential } = DEMO.clients;
  // The mobile client as an older sandbox made it, before profile and email.
  await createClient(
    app.database.db,
    {
      ...mobile,
      isPublic: true,
      redirectUris: [...mobile.redirectUris],
      scopes: ['openid', 'user:read'],
      organizationIds: [],
    },
    { sandbox: true },
  );
  assert.equal(await claimDemoData(app.database.db, new Date(), app.config), true);
  const older = await findClient(app.database.db, mobile.clientId);
  assert.deepEqual(older?.scopes, [
    'openid',
    'user:read',
    'profile',
    'email',
    'offline_access',
    'user:read_write',
  ]);
  const made = await findClient(app.database.db, confidential.clientId);
  for (const scope of ['openid', 'profile', 'email']) assert.ok(made?.scopes.includes(scope), scope);
});
