/**
 * The reference page (swagger-ui at /rest/docs) in a real browser under the Content-Security-Policy the REST
 * listener sends: it must load its own scripts, styles and images, read the OpenAPI document, and show the
 * operations, with no resource refused by the policy; in the sandbox, a newcomer signs in through its Authorize
 * dialog with the public demo client (code + PKCE) and calls an operation with "Try it out". Skipped without
 * Debian's Chromium.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { operationExamples } from '../../src/platform/openapi-examples.ts';
import { claimDemoData, DEMO } from '../../src/seed/demo.ts';
import { useChromium } from '../helpers/chromium.ts';
import { buildListeningApp } from '../helpers/listening-app.ts';

const browser = existsSync('/usr/bin/chromium') ? useChromium() : undefined;
const skip = browser ? false : '/usr/bin/chromium is missing (apt-get install chromium)';

/** The running browser; only called by tests that are not skipped. */
function chromium() {
  if (!browser) throw new Error('no Chromium');
  return browser();
}

test('the reference page renders under the security headers, with nothing refused by its policy', {
  skip,
}, async (t) => {
  const app = await buildListeningApp(t);
  const context = await chromium().newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  await page.exposeFunction('reportViolation', (text: string) => refused.push(text));
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation',
      (event) => window.reportViolation(event.violatedDirective + ' ' + event.blockedURI));`,
  });
  const response = await page.goto(`${app.apiUrl}/rest/docs`);
  assert.ok(response);
  const policy = (await response.allHeaders())['content-security-policy'] ?? '';
  assert.match(policy, /frame-ancestors 'none'/);
  await page.waitForSelector('.swagger-ui .info .title', { timeout: 30_000 });
  assert.match((await page.textContent('.swagger-ui .info .title')) ?? '', /EWA Server REST API/);
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  assert.ok((await page.locator('.opblock').count()) > 10, 'the operations are listed');
  assert.deepEqual(refused, []);
});

test("the reference page is EWA Server's, and shows an operation's real examples, not generated placeholders", {
  skip,
}, async (t) => {
  const app = await buildListeningApp(t);
  const context = await chromium().newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${app.apiUrl}/rest/docs`);
  assert.equal(await page.title(), 'EWA Server — API reference');
  const icons = await page
    .locator('link[rel~="icon"]')
    .evaluateAll((links) => links.map((link) => (link as unknown as { href: string }).href));
  assert.deepEqual(icons, [`${app.apiUrl}/rest/docs/static/theme/favicon.svg`], 'our favicon, and only ours');
  const icon = await context.request.get(icons[0]!);
  assert.equal(icon.status(), 200);
  assert.equal(icon.headers()['content-type'], 'image/svg+xml');
  assert.match(await icon.text(), /<title>EWA Server<\/title>/);

  const examples = operationExamples(app.apiUrl);
  const operation = page.locator('#operations-Transfers-createTransfer');
  await operation.locator('.opblock-summary').click();
  const requestBody = operation.locator('.opblock-section-request-body .highlight-code').first();
  await requestBody.waitFor({ timeout: 30_000 });
  const shown = (await requestBody.textContent()) ?? '';
  assert.doesNotMatch(shown, /"string"/);
  assert.deepEqual(JSON.parse(shown), examples.createTransfer!.request, 'the example request body is ours');
  const answers = (await operation.locator('.responses-wrapper').textContent()) ?? '';
  assert.match(answers, /"MAXIMUM_AMOUNT_EXCEEDED"/, "the 400 example is the operation's own");
  assert.match(answers, /"estimated_funding_sources"/, 'the 200 example is a real transfer');
  assert.doesNotMatch(answers, /"string"/);
  assert.doesNotMatch(
    (await page.locator('body').textContent()) ?? '',
    /swagger/i,
    "no library's name on the page",
  );
});

/** The reference page of a listening sandbox server with the demo data, in a browser context of its own. */
async function openSandboxReferencePage(t: TestContext) {
  const app = await buildListeningApp(t);
  await claimDemoData(app.database.db, new Date(), app.config);
  const context = await chromium().newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${app.apiUrl}/rest/docs`);
  return { app, context, page };
}

test('in the sandbox, Authorize signs a demo worker in with PKCE and Try it out calls the local server', {
  skip,
}, async (t) => {
  const { app, context, page } = await openSandboxReferencePage(t);
  assert.match(await page.title(), /EWA Server/);
  assert.equal(await page.locator('.topbar').count(), 0, 'no swagger-ui top bar');
  await page.locator('button.authorize').first().click();
  const scheme = page.locator('.auth-container').filter({ hasText: 'oauth_user_token' });
  assert.equal(
    await scheme.locator('#client_id_authorizationCode').inputValue(),
    DEMO.clients.public.clientId,
    'prefilled',
  );
  await scheme.locator('label[for^="user:read-"]').click();
  const popupOpened = context.waitForEvent('page');
  const authorizationRequest = context.waitForEvent('request', (request) =>
    request.url().startsWith(`${app.authUrl}/oauth2/auth`),
  );
  await scheme.locator('button.authorize').click();
  const popup = await popupOpened;
  const authorization = new URL((await authorizationRequest).url());
  assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
  await popup.locator('#email').fill(DEMO.people[0]!.email);
  await popup.locator('#password').fill(DEMO.password);
  await popup.getByRole('button', { name: 'Sign in' }).click();
  // The popup closes once swagger-ui's redirect page has handed the code over (slow on a busy host). Playwright's
  // waitForEvent does not look back: the wait starts before the click, or a close that comes first is missed.
  const popupClosed = popup.waitForEvent('close', { timeout: 60_000 });
  popupClosed.catch(() => {}); // awaited below; a failed click must not leave it unhandled
  await popup.getByRole('button', { name: 'Allow', exact: true }).click();
  await popupClosed;
  await scheme.locator('button', { hasText: 'Logout' }).waitFor({ timeout: 10_000 });
  await page.locator('.modal-ux .close-modal').click();

  const operation = page.locator('#operations-Accounts-listAccounts');
  await operation.locator('.opblock-summary').click();
  await operation.getByRole('button', { name: 'Try it out' }).click();
  const answer = page.waitForResponse((response) => response.url().startsWith(`${app.apiUrl}/rest/accounts`));
  await operation.getByRole('button', { name: 'Execute' }).click();
  assert.equal((await answer).status(), 200);
  const shown = operation.locator('.live-responses-table tbody .response-col_status').first();
  await shown.waitFor();
  assert.match((await shown.textContent()) ?? '', /200/);
});

test('in the sandbox, Authorize gets a client credentials token for the confidential demo client', {
  skip,
}, async (t) => {
  const { app, page } = await openSandboxReferencePage(t);
  await page.locator('button.authorize').first().click();
  const scheme = page.locator('.auth-container').filter({ hasText: 'oauth_client_credentials_token' });
  await scheme.locator('#client_id_clientCredentials').fill(DEMO.clients.confidential.clientId);
  await scheme.locator('#client_secret_clientCredentials').fill(DEMO.clients.confidential.secret);
  await scheme.locator('label[for^="client:admin-"]').click();
  const token = page.waitForResponse((response) => response.url() === `${app.authUrl}/oauth2/token`);
  await scheme.locator('button.authorize').click();
  assert.equal((await token).status(), 200);
  await scheme.locator('button', { hasText: 'Logout' }).waitFor({ timeout: 10_000 });
});
