import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

async function loginPage(app: ListeningApp, browser: HttpBrowser) {
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const url = new URL('/oauth2/auth', app.authUrl);
  for (const [key, value] of Object.entries({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid user:read',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(key, value);
  return browser.follow(url.toString());
}

/** The same value with its last character changed, whatever that character was. */
const flipLast = (value: string) => value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A');

async function personWithPassword(app: ListeningApp) {
  const id = await createTestPerson(app, { password: PASSWORD });
  return `${id}@people.example`;
}

test('failed sign-ins back off per account: 429 with Retry-After, even for the right password', async (t) => {
  const app = await buildListeningApp(t, { EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '3' });
  const email = await personWithPassword(app);
  const browser = new HttpBrowser(app.authUrl);
  const page = await loginPage(app, browser);
  const attempt = (password: string) =>
    browser.follow(formAction(page.body), {
      form: { csrf: hiddenField(page.body, 'csrf'), email, password },
    });
  for (let i = 0; i < 3; i++) {
    const failed = await attempt('wrong password');
    assert.equal(failed.response.status, 401);
    assert.match(failed.body, /That email and password do not match an account/);
  }
  const locked = await attempt(PASSWORD);
  assert.equal(locked.response.status, 429);
  assert.ok(Number(locked.response.headers.get('retry-after')) >= 1);
  const row = await app.database.db
    .selectFrom('login_throttle')
    .selectAll()
    .where('key', '=', `account:127.0.0.1 ${email}`)
    .executeTakeFirstOrThrow();
  assert.equal(row.failures, 3);
  assert.ok(row.locked_until! > new Date());
});

test('the failure message does not tell an unknown email from a wrong password', async (t) => {
  const app = await buildListeningApp(t);
  const email = await personWithPassword(app);
  const browser = new HttpBrowser(app.authUrl);
  const page = await loginPage(app, browser);
  const post = (address: string) =>
    browser.follow(formAction(page.body), {
      form: { csrf: hiddenField(page.body, 'csrf'), email: address, password: 'wrong one!' },
    });
  const unknown = await post('nobody@people.example');
  const wrong = await post(email);
  assert.equal(unknown.response.status, wrong.response.status);
  const message = (body: string) => /role="alert"[^>]*>([^<]*)</.exec(body)?.[1];
  assert.equal(message(unknown.body), message(wrong.body));
});

test('forms refuse a missing or foreign CSRF value; cookies are HttpOnly and SameSite', async (t) => {
  const app = await buildListeningApp(t);
  const email = await personWithPassword(app);
  const browser = new HttpBrowser(app.authUrl);
  const page = await loginPage(app, browser);
  for (const csrf of ['', 'forged-value', flipLast(hiddenField(page.body, 'csrf'))]) {
    const response = await browser.follow(formAction(page.body), {
      form: { csrf, email, password: PASSWORD },
    });
    assert.equal(response.response.status, 403, csrf);
    assert.match(response.body, /Form expired/);
  }
  const raw = await fetch(new URL(page.url), { headers: { accept: 'text/html' } });
  for (const cookie of raw.headers.getSetCookie()) {
    assert.match(cookie, /httponly/i, cookie);
    assert.match(cookie, /samesite=lax/i, cookie);
  }
});

test('logout asks a signed-in person, then signs out; the next authorization asks to sign in again', async (t) => {
  const app = await buildListeningApp(t);
  const email = await personWithPassword(app);
  const browser = new HttpBrowser(app.authUrl);
  const page = await loginPage(app, browser);
  const signedIn = await browser.follow(formAction(page.body), {
    form: { csrf: hiddenField(page.body, 'csrf'), email, password: PASSWORD },
  });
  assert.match(signedIn.body, /name="decision"/, 'signed in, at consent');
  const confirm = await browser.follow('/oauth2/sessions/logout');
  assert.equal(confirm.response.status, 200);
  assert.match(confirm.body, /Sign out\?/);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirm.body)![1]!;
  const done = await browser.follow('/oauth2/sessions/logout/confirm', { form: { xsrf, logout: 'yes' } });
  assert.equal(done.response.status, 200);
  assert.match(done.body, /You are signed out/);
  const again = await loginPage(app, browser);
  assert.match(again.body, /autocomplete="current-password"/, 'the session is gone');
});
