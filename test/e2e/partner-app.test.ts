/**
 * The example partner app (examples/partner-app) in Chromium against a real server with the demo data: a demo worker
 * signs in through the public client (code + PKCE), sees the balance and paychecks, adds a card (tokenized by the
 * browser) and a bank account, previews a transfer with its fee, makes it, and watches its status arrive by
 * webhooks the app's backend verified. The app runs as its own process, as `npm start` runs it; screenshots of each
 * screen go to /tmp/ewa-screens/partner-app/ (SAVE_SCREENSHOTS=DIR also writes the last one as DIR/screenshot.png).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { chromium, type Page } from 'playwright-core';
import { DEMO, seedDemoDataOnce } from '../../src/seed/demo.ts';
import { freePort } from '../helpers/free-port.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient } from '../helpers/tokens.ts';

const CHROMIUM = '/usr/bin/chromium';
const APP = join(import.meta.dirname, '..', '..', 'examples', 'partner-app', 'server.js');
const SCREENS = '/tmp/ewa-screens/partner-app';
const WORKER = DEMO.people[0];
const WORKER_NAME = `${WORKER.first} ${WORKER.last}`;

interface Ewa extends ListeningApp {
  paymentsUrl: string;
}

/**
 * The server as `ewa serve` runs it: three listeners, the demo data, and the outbox and webhook dispatchers. The
 * sandbox rail settles an instant transfer at once (EWA_SANDBOX_INSTANT_SETTLE_SECONDS=0); the scheduler, which asks
 * the rail once a minute, is left out: the test calls the same settlement when it wants it.
 */
async function startEwa(t: TestContext): Promise<Ewa> {
  const paymentsPort = await freePort();
  const paymentsUrl = `http://127.0.0.1:${paymentsPort}`;
  const ewa = await buildListeningApp(t, {
    EWA_PAYMENTS_URL: paymentsUrl,
    EWA_SANDBOX_INSTANT_SETTLE_SECONDS: '0',
  });
  await ewa.payments.listen({ port: paymentsPort, host: '127.0.0.1' });
  await seedDemoDataOnce(ewa.database.db, new Date(), ewa.config, { soleProcess: true });
  ewa.money.outbox.start(100);
  ewa.webhooks.dispatcher.start(100);
  return { ...ewa, paymentsUrl };
}

/** `node examples/partner-app/server.js`, configured by its environment only; ready once its webhook endpoint is. */
async function startPartnerApp(t: TestContext, env: Record<string, string>) {
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [APP], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  t.after(stop);
  const ready = new Promise<void>((resolve, reject) => {
    const keep = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Webhook endpoint ')) resolve();
      if (output.includes('Could not register'))
        reject(new Error(`the app has no webhook endpoint:\n${output}`));
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', () => reject(new Error(`the app exited:\n${output}`)));
  });
  await ready;
  return { output: () => output, stop };
}

async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

async function fillByLabel(page: Page, section: string, fields: Record<string, string>): Promise<void> {
  for (const [label, value] of Object.entries(fields))
    await page.locator(section).getByLabel(label, { exact: true }).fill(value);
}

/** What the page shows as money, back in cents ("$2.99" → 299). */
async function cents(page: Page, selector: string): Promise<number> {
  const text = (await page.locator(selector).textContent()) ?? '';
  const match = /^\$([\d,]+)\.(\d\d)$/.exec(text.trim());
  assert.ok(match, `${selector} shows an amount: ${text}`);
  return Number(match[1]!.replaceAll(',', '')) * 100 + Number(match[2]);
}

test('the example partner app: sign in, balance and paychecks, a card, a bank account, a transfer and its webhooks', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium)`,
  timeout: 60_000,
}, async (t) => {
  await mkdir(SCREENS, { recursive: true });
  const ewa = await startEwa(t);
  const { db } = ewa.database;
  // The demo public client may only return to port 3000; the test's own public client returns to its port.
  const appPort = await freePort();
  const appUrl = `http://localhost:${appPort}`;
  const client = await createTestClient(ewa, {
    name: 'Partner App',
    isPublic: true,
    redirectUris: [`${appUrl}/callback`],
    scopes: ['openid', 'offline_access', 'user:read', 'user:read_write'],
    organizationIds: Object.values(DEMO.organizations).map((organization) => organization.id),
    // One of the demo partner's apps, as demo-partner-mobile is: its users' transfers reach the partner's endpoint.
    partner: DEMO.clients.public.partner,
  });
  const partnerApp = await startPartnerApp(t, {
    PORT: String(appPort),
    EWA_API_URL: ewa.apiUrl,
    EWA_AUTH_URL: ewa.authUrl,
    EWA_PAYMENTS_URL: ewa.paymentsUrl,
    CLIENT_ID: client.clientId,
  });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));

  // Signed out, then the authorization server's pages, then back in the app.
  await page.goto(appUrl);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.locator('#email').waitFor();
  assert.equal(new URL(page.url()).origin, ewa.authUrl, 'the password is typed on the authorization server');
  await page.locator('#email').fill(WORKER.email);
  await page.locator('#password').fill(DEMO.password);
  await screenshot(page, '01-sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Partner App wants to access your account' }).waitFor();
  await screenshot(page, '02-consent');
  await page.getByRole('button', { name: 'Allow', exact: true }).click();
  await page.waitForURL(`${appUrl}/`);

  // Home: the earnings balance and the paychecks of the demo history.
  await page.locator('#paychecks tr').first().waitFor();
  assert.equal(await page.locator('#who').textContent(), WORKER_NAME);
  const availableBefore = await cents(page, '#available');
  assert.ok(availableBefore >= 10_000, `the demo worker has at least $100.00 available (${availableBefore})`);
  const statuses = await page.locator('#paychecks td.status').allTextContents();
  assert.ok(statuses.includes('DEPOSITED') && statuses.includes('ESTIMATED'), statuses.join(', '));
  await screenshot(page, '03-home');

  // A debit card: the browser posts it to card tokenization, the app's server creates the account with the token.
  await page.getByRole('link', { name: 'Add a debit card' }).click();
  await fillByLabel(page, '#card', {
    'First name': WORKER.first,
    'Last name': WORKER.last,
    'Card number': '4111 1111 1111 1111',
    'Expiry month (MM)': '02',
    'Expiry year (YYYY)': String(new Date().getUTCFullYear() + 3),
    CVV: '123',
    'Billing address': '1 Main Street',
    City: 'New York',
    State: 'ny',
    'ZIP code': '10001',
  });
  await screenshot(page, '04-add-card');
  await page.getByRole('button', { name: 'Add card' }).click();
  await page.getByText('Added Debit card (card ····1111).').waitFor();
  const tokenized = ewa.logs.filter(
    (line) => line.listener === 'payments' && line.msg === 'request completed',
  );
  assert.deepEqual(
    tokenized.map((line) => `${line.method} ${line.status}`),
    ['OPTIONS 204', 'POST 200'],
    'the card went from the browser (a CORS preflight first) to card tokenization',
  );
  const card = await db
    .selectFrom('accounts')
    .select(['id', 'details'])
    .where('person_id', '=', WORKER.id)
    .where('account_type', '=', 'CARD')
    .executeTakeFirstOrThrow();
  assert.equal(card.details.last_four, '1111');

  // A bank account at the sandbox's test bank.
  await page.getByRole('link', { name: 'Add a bank account' }).click();
  assert.equal(await page.getByLabel('Routing number', { exact: true }).inputValue(), '110000000');
  await fillByLabel(page, '#bank', {
    'First name': WORKER.first,
    'Last name': WORKER.last,
    'Account number': '987654321',
  });
  await screenshot(page, '05-add-bank-account');
  await page.getByRole('button', { name: 'Add bank account' }).click();
  await page.getByText('Added Checking (bank ····4321).').waitFor();
  const banks = await db
    .selectFrom('accounts')
    .select('details')
    .where('person_id', '=', WORKER.id)
    .where('account_type', '=', 'DEPOSITORY')
    .execute();
  assert.ok(banks.some((bank) => String(bank.details.account_number).endsWith('4321')));

  // A transfer to the card within 30 minutes: previewed with its fee (nothing made), then made.
  const transfersBefore = await countTransfers(ewa);
  await page.getByRole('link', { name: 'Move money' }).click();
  await page.getByLabel('Amount (USD)', { exact: true }).fill('20.00');
  await page.getByLabel('To', { exact: true }).selectOption(card.id);
  await page.getByLabel('When', { exact: true }).selectOption('WITHIN_THIRTY_MINUTES');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.locator('#preview').waitFor();
  const fee = await cents(page, '#preview-fee');
  assert.equal(await cents(page, '#preview-amount'), 2000);
  assert.equal(await cents(page, '#preview-receive'), 2000 - fee);
  assert.equal(await countTransfers(ewa), transfersBefore, 'a preview makes no transfer');
  await screenshot(page, '06-preview');

  await page.getByRole('button', { name: 'Confirm transfer' }).click();
  await page.locator('#transfer-status', { hasText: 'PENDING' }).waitFor();
  const transferId = (await page.locator('#transfer-id').textContent()) ?? '';
  assert.equal(await countTransfers(ewa), transfersBefore + 1);
  const made = await db
    .selectFrom('transfers')
    .select(['status', 'fee_minor', 'destination_account_id'])
    .where('id', '=', transferId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(made, { status: 'PENDING', fee_minor: fee, destination_account_id: card.id });
  await screenshot(page, '07-transfer-pending');

  // The sandbox rail settles it when asked, as the scheduler asks each minute; the page learns it by webhook.
  await ewa.money.settle(new Date());
  await page.locator('#transfer-status', { hasText: 'SETTLED' }).waitFor();
  const shown = page.locator('#transfer-events li');
  assert.equal(await shown.count(), 2);
  const screenshotPath = await screenshot(page, '08-transfer-settled');

  // Each event shown is one the server sent and the app's backend accepted (204: its signature verified).
  const events = await db
    .selectFrom('webhook_events')
    .select(['id', 'type'])
    .where('resource_id', '=', transferId)
    .orderBy('seq')
    .execute();
  assert.deepEqual(
    events.map((event) => event.type),
    ['transfer.created', 'transfer.settled'],
  );
  for (const [index, event] of events.entries()) {
    const item = shown.nth(index);
    assert.match(
      (await item.textContent()) ?? '',
      new RegExp(`^${event.type}.*signature verified${event.id}`),
    );
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .select(['status_code', 'outcome'])
      .where('event_id', '=', event.id)
      .execute();
    assert.deepEqual(deliveries, [{ status_code: 204, outcome: 'DELIVERED' }]);
  }
  assert.match(partnerApp.output(), new RegExp(`webhook transfer.settled ${events[1]!.id} \\(verified\\)`));
  if (process.env.SAVE_SCREENSHOTS)
    await copyFile(screenshotPath, join(process.env.SAVE_SCREENSHOTS, 'screenshot.png'));

  // Home again: the balance is the transfer's amount lower.
  await page.getByRole('link', { name: 'Home' }).click();
  assert.equal(await cents(page, '#available'), availableBefore - 2000);
  assert.deepEqual(pageErrors, []);

  // On the way out the app removes its webhook endpoint.
  await partnerApp.stop();
  const left = await db.selectFrom('webhook_endpoints').select('id').execute();
  assert.equal(left.length, 0, partnerApp.output());
});

async function countTransfers(ewa: Ewa): Promise<number> {
  const rows = await ewa.database.db
    .selectFrom('transfers')
    .select('id')
    .where('person_id', '=', WORKER.id)
    .execute();
  return rows.length;
}
