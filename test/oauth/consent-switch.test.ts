import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import * as oidc from 'openid-client';
import { formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

// The consent page names who is signed in, with "Not you?": it signs that person out and shows the sign-in of
// the same authorization request again, so that someone else can sign in; the code is then theirs.
const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

async function person(app: ListeningApp, first: string, last: string) {
  const id = await createTestPerson(app, { password: PASSWORD });
  await app.database.db
    .updateTable('people')
    .set({ first_name: first, last_name: last })
    .where('id', '=', id)
    .execute();
  return { id, email: `${id}@people.example`, name: `${first} ${last}` };
}

async function setUp(t: TestContext) {
  const app = await buildListeningApp(t);
  const ada = await person(app, 'Ada', 'Lovelace');
  const grace = await person(app, 'Grace', "O'Hopper <b>");
  const client = await createTestClient(app, {
    name: 'Payday Partner',
    redirectUris: [REDIRECT],
    scopes: ['openid', 'profile', 'user:read'],
  });
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretPost(client.secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: REDIRECT,
    scope: 'openid profile user:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'state-1',
  });
  return { app, ada, grace, rp, verifier, url: url.toString() };
}

const escaped = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;');

async function signIn(browser: HttpBrowser, page: { body: string }, who: { email: string }) {
  return browser.follow(formAction(page.body), {
    form: { csrf: hiddenField(page.body, 'csrf'), email: who.email, password: PASSWORD },
  });
}

test('the consent page names the person; "Not you?" signs them out and another person signs in', async (t) => {
  const s = await setUp(t);
  const browser = new HttpBrowser(s.app.authUrl);
  const login = await browser.follow(s.url);
  assert.match(login.body, /autocomplete="current-password"/);
  const consent = await signIn(browser, login, s.ada);
  assert.equal(consent.response.status, 200);
  assert.match(consent.body, /Signed in as <strong>Ada Lovelace<\/strong>/);
  assert.ok(consent.body.includes(s.ada.email));
  assert.match(consent.body, /<button type="submit" form="switch-account"[^>]*>Not you\?<\/button>/);
  const switchAction = formAction(consent.body, 1);
  const uid = new URL(consent.url).pathname.split('/')[2]!;
  assert.equal(switchAction, `/interaction/${uid}/switch-account`);

  // Without the form's CSRF value, nothing happens: the same person is still signed in.
  const forged = await browser.follow(switchAction, { form: { csrf: 'forged' } });
  assert.equal(forged.response.status, 403);
  assert.match(forged.body, /Form expired/);
  assert.match((await browser.follow(consent.url)).body, /Signed in as <strong>Ada Lovelace/);

  const again = await browser.follow(switchAction, { form: { csrf: hiddenField(consent.body, 'csrf') } });
  assert.equal(again.url, `${s.app.authUrl}/interaction/${uid}`, 'the sign-in of the same interaction');
  assert.equal(again.response.status, 200);
  assert.match(again.body, /<h1>Sign in<\/h1>/);
  assert.match(again.body, /Payday Partner/);
  assert.doesNotMatch(again.body, /Ada Lovelace/);
  // Signed out: Allow on the page still open is refused, and the provider's session is gone.
  const stale = await browser.follow(formAction(consent.body), {
    form: { csrf: hiddenField(consent.body, 'csrf'), decision: 'allow' },
  });
  assert.equal(stale.response.status, 400);
  const sessions = await s.app.database.db
    .selectFrom('oauth_payloads')
    .select('id')
    .where('model', '=', 'Session')
    .execute();
  assert.equal(sessions.length, 0, 'the signed-in session was destroyed');

  // Someone else signs in; the consent page names them (escaped), and the code is theirs.
  const theirs = await signIn(browser, again, s.grace);
  assert.equal(theirs.response.status, 200, theirs.body.slice(0, 400));
  assert.ok(theirs.body.includes(`Signed in as <strong>${escaped(s.grace.name)}</strong>`), theirs.body);
  const done = await browser.follow(formAction(theirs.body), {
    form: { csrf: hiddenField(theirs.body, 'csrf'), decision: 'allow' },
  });
  assert.ok(done.url.startsWith(`${REDIRECT}?`), done.url);
  const tokens = await oidc.authorizationCodeGrant(s.rp, new URL(done.url), {
    pkceCodeVerifier: s.verifier,
    expectedState: 'state-1',
  });
  assert.equal(tokens.claims()?.sub, s.grace.id);
  assert.equal(tokens.claims()?.name, s.grace.name);
  assert.equal((await oidc.fetchUserInfo(s.rp, tokens.access_token, s.grace.id)).sub, s.grace.id);
});

test('"Not you?" then the same person signs in again: the code is theirs', async (t) => {
  const s = await setUp(t);
  const browser = new HttpBrowser(s.app.authUrl);
  const consent = await signIn(browser, await browser.follow(s.url), s.ada);
  const again = await browser.follow(formAction(consent.body, 1), {
    form: { csrf: hiddenField(consent.body, 'csrf') },
  });
  const back = await signIn(browser, again, s.ada);
  assert.match(back.body, /Signed in as <strong>Ada Lovelace/);
  const done = await browser.follow(formAction(back.body), {
    form: { csrf: hiddenField(back.body, 'csrf'), decision: 'allow' },
  });
  const tokens = await oidc.authorizationCodeGrant(s.rp, new URL(done.url), {
    pkceCodeVerifier: s.verifier,
    expectedState: 'state-1',
  });
  assert.equal(tokens.claims()?.sub, s.ada.id);
});

test('"Not you?" from another browser, or on an unknown interaction, is refused', async (t) => {
  const s = await setUp(t);
  const browser = new HttpBrowser(s.app.authUrl);
  const consent = await signIn(browser, await browser.follow(s.url), s.ada);
  const action = formAction(consent.body, 1);
  // Another browser has neither the interaction's cookie nor the CSRF cookie.
  const other = await new HttpBrowser(s.app.authUrl).follow(action, {
    form: { csrf: hiddenField(consent.body, 'csrf') },
  });
  assert.equal(other.response.status, 400);
  const unknown = await browser.follow('/interaction/no-such-interaction/switch-account', {
    form: { csrf: hiddenField(consent.body, 'csrf') },
  });
  assert.equal(unknown.response.status, 400);
  assert.match(
    (await browser.follow(consent.url)).body,
    /Signed in as <strong>Ada Lovelace/,
    'still signed in',
  );
});
