/**
 * The sign-in pages in a real browser (Debian's Chromium driven by playwright-core): sign up then allow, with
 * the code exchanged, used, refreshed and revoked through openid-client; sign in with a wrong then a right
 * password then deny; "Not you?" on the consent page, then another person signs in; labels, focus order and Enter
 * on the login page; a reset code replacing a lost password; screenshots of the login, consent and an error page under /tmp/ewa-screens/.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { authenticate } from '../../src/oauth/accounts.ts';
import { type IssuedInvitation, issueInvitations } from '../../src/operator/invitations.ts';
import { useChromium } from '../helpers/chromium.ts';
import { eventually } from '../helpers/eventually.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

const SCREENS = '/tmp/ewa-screens';
const CLIENT_NAME = 'Payday Partner';
const PASSWORD = 'correct horse battery staple';

const browser = useChromium();

/** A page in a fresh browser context, closed when the test ends. */
async function newPage(t: TestContext): Promise<Page> {
  const context = await browser().newContext();
  t.after(() => context.close());
  return context.newPage();
}

/** The client's redirect URI: a loopback server that answers "ok" and records every URL it was sent to. */
async function callbackServer(t: TestContext) {
  const hits: URL[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${request.headers.host}`);
    if (url.pathname === '/callback') hits.push(url);
    response.writeHead(url.pathname === '/callback' ? 200 : 404, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, hits };
}

/** An app, a person (with a password unless asked not to), a client redirecting to a loopback callback. */
async function setUp(t: TestContext, options: { withPassword: boolean }) {
  const app = await buildListeningApp(t, { EWA_REVOCATION_POLL_MS: '100' });
  const personId = await createTestPerson(app);
  const email = `${personId}@people.example`;
  if (options.withPassword) {
    const password_hash = await hashPassword(PASSWORD);
    await app.database.db.updateTable('people').set({ password_hash }).where('id', '=', personId).execute();
  }
  const callback = await callbackServer(t);
  const client = await createTestClient(app, { name: CLIENT_NAME, redirectUris: [callback.url] });
  const rp = await oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretPost(client.secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const authorizationUrl = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: callback.url,
    scope: 'openid offline_access user:read user:read_write',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
  });
  return { app, personId, email, callback, rp, verifier, state, authorizationUrl: authorizationUrl.href };
}

/** Gives the person a job, with this employee id, at a new organization: what sign-up matches against. */
async function giveJob(app: ListeningApp, personId: string, employeeId: string) {
  const organizationId = randomUUID();
  await app.database.db
    .insertInto('organizations')
    .values({ id: organizationId, name: 'Acme Foods' })
    .execute();
  await app.database.db
    .insertInto('jobs')
    .values({
      id: randomUUID(),
      person_id: personId,
      organization_id: organizationId,
      external_primary_identifier: `primary-${employeeId}`,
      external_employee_id: employeeId,
      first_name: 'Test',
      last_name: 'Person',
      wage_rate_minor: 1800,
      wage_frequency: 'HOURLY',
    })
    .execute();
}

async function signIn(page: Page, email: string, password: string) {
  await page.locator('#email').fill(email);
  await page.locator('#password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function expectConsentPage(page: Page) {
  await page.getByRole('heading', { name: `${CLIENT_NAME} wants to access your account` }).waitFor();
}

/** Clicks Allow or Deny and returns the URL the callback server received. */
async function decide(page: Page, decision: 'Allow' | 'Deny', hits: URL[]): Promise<URL> {
  await page.getByRole('button', { name: decision, exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/callback');
  assert.equal(hits.length, 1, 'the callback was reached exactly once');
  assert.equal(hits[0]!.href, page.url());
  return hits[0]!;
}

/** An element's text with its white space collapsed. */
const text = (content: string | null) => (content ?? '').replace(/\s+/g, ' ').trim();

async function healthWith(app: ListeningApp, token: string) {
  const response = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.statusCode, code: response.json().errors?.[0]?.code as string | undefined };
}

test('sign up in the browser, allow, then exchange, use, refresh and revoke the tokens', async (t) => {
  const { app, personId, email, callback, rp, verifier, state, authorizationUrl } = await setUp(t, {
    withPassword: false,
  });
  await giveJob(app, personId, 'E-4242');
  const page = await newPage(t);
  await page.goto(authorizationUrl);
  await page.getByRole('link', { name: 'Create your password' }).click();
  await page.getByRole('heading', { name: 'Create your password' }).waitFor();
  await page.locator('#email').fill(email);
  await page.locator('#employee_id').fill('E-4242');
  await page.locator('#password').fill('a long new password 1');
  await page.getByRole('button', { name: 'Create password and continue' }).click();

  await expectConsentPage(page);
  const scopes = await page.locator('ul.scopes li').allInnerTexts();
  assert.ok(
    scopes.some((text) => text.includes('move your earnings')),
    scopes.join(' | '),
  );
  assert.ok(
    scopes.some((text) => text.includes('See your jobs, paychecks')),
    scopes.join(' | '),
  );
  assert.ok(!scopes.some((text) => /user:|offline_access|openid/.test(text)), 'no raw scope names are shown');
  assert.equal(callback.hits.length, 0, 'nothing reaches the client before the person decides');

  const returned = await decide(page, 'Allow', callback.hits);
  assert.ok(returned.searchParams.get('code'), 'the callback carries a code');
  assert.equal(returned.searchParams.get('state'), state);
  const tokens = await oidc.authorizationCodeGrant(rp, returned, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  assert.equal(typeof tokens.refresh_token, 'string');
  assert.equal(tokens.claims()?.sub, personId);
  assert.equal((await oidc.fetchUserInfo(rp, tokens.access_token, personId)).sub, personId);
  assert.deepEqual(await healthWith(app, tokens.access_token), { status: 403, code: 'FORBIDDEN' });

  const refreshed = await oidc.refreshTokenGrant(rp, tokens.refresh_token!);
  assert.equal(typeof refreshed.refresh_token, 'string');
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'refresh tokens rotate');
  assert.notEqual(refreshed.access_token, tokens.access_token);
  assert.deepEqual(await healthWith(app, refreshed.access_token), { status: 403, code: 'FORBIDDEN' });

  await oidc.tokenRevocation(rp, refreshed.access_token);
  await eventually(async () => (await healthWith(app, refreshed.access_token)).status === 401);
  assert.deepEqual(await healthWith(app, refreshed.access_token), { status: 401, code: 'INVALID_TOKEN' });
});

test('a reset code in the browser: a wrong code is refused with the form kept, then the code replaces the password', async (t) => {
  const { app, personId, email, callback, rp, verifier, state, authorizationUrl } = await setUp(t, {
    withPassword: true,
  });
  await giveJob(app, personId, 'E-5151');
  const job = await app.database.db
    .selectFrom('jobs')
    .select('organization_id')
    .where('person_id', '=', personId)
    .executeTakeFirstOrThrow();
  const issued: IssuedInvitation[] = [];
  await issueInvitations(app.database.db, {
    organizationId: job.organization_id,
    emails: [email],
    reset: true,
    now: new Date(),
    onIssued: (batch) => {
      issued.push(...batch);
    },
  });
  const page = await newPage(t);
  await page.goto(authorizationUrl);
  await page.getByRole('link', { name: 'create a new one' }).click();
  await page.getByRole('heading', { name: 'Create your password' }).waitFor();
  await page.getByLabel('Work email').fill(email);
  await page.getByLabel('Invitation code').fill('ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
  await page.getByLabel('New password').fill('a brand new password');
  await page.getByRole('button', { name: 'Create password and continue' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(text(await alert.textContent()), /We could not match this email and invitation code/);
  assert.equal(await page.getByLabel('Work email').inputValue(), email, 'the email is kept');
  assert.equal(await page.getByLabel('Invitation code').inputValue(), 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
  assert.equal(await page.getByLabel('New password').inputValue(), '', 'the password is not echoed back');

  await page.getByLabel('Invitation code').fill(issued[0]!.code.toLowerCase().replaceAll('-', ' '));
  await page.getByLabel('New password').fill('a brand new password');
  await page.getByRole('button', { name: 'Create password and continue' }).click();
  await expectConsentPage(page);
  const returned = await decide(page, 'Allow', callback.hits);
  const tokens = await oidc.authorizationCodeGrant(rp, returned, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  assert.equal(tokens.claims()?.sub, personId);
  assert.equal(
    await authenticate(app.database.db, email, PASSWORD),
    undefined,
    'the lost password is replaced',
  );
  assert.equal(await authenticate(app.database.db, email, 'a brand new password'), personId);
});

test('sign in with a wrong then the right password, then deny', async (t) => {
  const { email, callback, state, authorizationUrl } = await setUp(t, { withPassword: true });
  const page = await newPage(t);
  await page.goto(authorizationUrl);
  const loginUrl = page.url();

  await signIn(page, email, 'not the password at all');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.equal((await alert.textContent())?.trim(), 'That email and password do not match an account.');
  assert.equal(new URL(page.url()).origin, new URL(loginUrl).origin, 'still on the authorization server');
  assert.equal(await page.locator('#email').inputValue(), email, 'the email is kept');
  assert.equal(await page.locator('#password').inputValue(), '', 'the password is not echoed back');
  assert.equal(await page.locator('#email').getAttribute('aria-describedby'), 'form-error');
  assert.equal(callback.hits.length, 0, 'a failed sign-in does not redirect');

  await signIn(page, email, PASSWORD);
  await expectConsentPage(page);
  const returned = await decide(page, 'Deny', callback.hits);
  assert.equal(returned.searchParams.get('error'), 'access_denied');
  assert.ok(returned.searchParams.get('error_description'), 'the error has a description');
  assert.equal(returned.searchParams.get('state'), state);
  assert.equal(returned.searchParams.get('code'), null);
});

test('the consent page names who is signed in; "Not you?" signs them out and someone else signs in', async (t) => {
  const { app, email, callback, rp, verifier, state, authorizationUrl } = await setUp(t, {
    withPassword: true,
  });
  const otherId = await createTestPerson(app, { password: PASSWORD });
  await app.database.db
    .updateTable('people')
    .set({ first_name: 'Grace', last_name: 'Hopper' })
    .where('id', '=', otherId)
    .execute();
  const page = await newPage(t);
  await page.goto(authorizationUrl);
  await signIn(page, email, PASSWORD);
  await expectConsentPage(page);
  assert.match(text(await page.locator('.who').textContent()), /Signed in as Test Person/);
  await page.getByRole('button', { name: 'Not you?' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page, `${otherId}@people.example`, PASSWORD);
  await expectConsentPage(page);
  assert.match(text(await page.locator('.who').textContent()), /Signed in as Grace Hopper/);
  const returned = await decide(page, 'Allow', callback.hits);
  const tokens = await oidc.authorizationCodeGrant(rp, returned, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  assert.equal(tokens.claims()?.sub, otherId, 'the code is for the person who signed in last');
});

test('login page: every input is labelled, email has focus, Tab order, Enter submits', async (t) => {
  const { email, authorizationUrl } = await setUp(t, { withPassword: true });
  const page = await newPage(t);
  await page.goto(authorizationUrl);

  const inputs = await page.locator('input:not([type=hidden])').evaluateAll((elements) =>
    elements.map((element) => ({
      id: element.id,
      labelled:
        element.id !== '' && element.ownerDocument.querySelector(`label[for="${element.id}"]`) !== null,
    })),
  );
  assert.deepEqual(inputs, [
    { id: 'email', labelled: true },
    { id: 'password', labelled: true },
  ]);

  // ':focus' matches nothing, rather than waiting, when nothing has focus.
  const focused = () =>
    page
      .locator(':focus')
      .evaluateAll((all) => all.map((e) => `${e.tagName}#${e.id} ${e.textContent}`.trim()));
  assert.deepEqual(await focused(), ['INPUT#email'], 'the email field has focus on load');
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), ['INPUT#password']);
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(), ['BUTTON# Sign in']);

  await page.locator('#email').focus();
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await expectConsentPage(page);
});

test('screenshots of the login, consent and error pages', async (t) => {
  const { app, email, authorizationUrl } = await setUp(t, { withPassword: true });
  await mkdir(SCREENS, { recursive: true });
  const names = ['login.png', 'consent.png', 'error.png'];
  for (const name of names) await rm(`${SCREENS}/${name}`, { force: true });
  const page = await newPage(t);
  await page.goto(authorizationUrl);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.screenshot({ path: `${SCREENS}/login.png`, fullPage: true });
  await signIn(page, email, PASSWORD);
  await expectConsentPage(page);
  await page.screenshot({ path: `${SCREENS}/consent.png`, fullPage: true });
  // An unknown client: plain words first, the code in small print.
  await page.goto(`${app.authUrl}/oauth2/auth?client_id=no-such-client&response_type=code`);
  await page.getByRole('heading', { name: 'This sign-in link is not valid' }).waitFor();
  assert.match(text(await page.locator('.support').textContent()), /invalid_client/);
  await page.screenshot({ path: `${SCREENS}/error.png`, fullPage: true });
  for (const name of names) {
    const file = await readFile(`${SCREENS}/${name}`);
    assert.ok(file.subarray(1, 4).toString() === 'PNG' && file.length > 1000, `${name} is a PNG image`);
  }
});
