/**
 * The example card form in a real browser (Debian's Chromium driven by playwright-core): the page is served from
 * one origin and posts the card with fetch to the payments listener on another port, so CORS is exercised for
 * real — preflight included. A token comes back and opens to the card; a field error is shown on its input; a
 * page from an origin that is not allowed gets nothing.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { useChromium } from '../helpers/chromium.ts';
import { freePort } from '../helpers/free-port.ts';

const PAGE = join(import.meta.dirname, '..', '..', 'examples', 'card-form', 'index.html');

const browser = useChromium();

/** A static server for the example page, on a port of its own: the page's origin. */
async function pageServer(t: TestContext): Promise<string> {
  const html = await readFile(PAGE);
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (path !== '/' && path !== '/index.html') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The app with its payments listener on a real port, allowing browser calls from `allowedOrigin` only. */
async function paymentsListening(
  t: TestContext,
  allowedOrigin: string,
): Promise<{ app: TestApp; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const app = await buildTestApp(
    t,
    { EWA_PAYMENTS_URL: url, EWA_CARD_CORS_ORIGINS: allowedOrigin },
    { now: () => FIXED_NOW },
  );
  await app.payments.listen({ port, host: '127.0.0.1' });
  return { app, url: `${url}/v2/cards/generic` };
}

async function openForm(t: TestContext, pageOrigin: string, endpoint: string): Promise<Page> {
  const context = await browser().newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(`${pageOrigin}/?endpoint=${encodeURIComponent(endpoint)}`);
  return page;
}

async function fillCard(page: Page, overrides: Record<string, string> = {}): Promise<void> {
  const fields: Record<string, string> = {
    'First name': 'Edith',
    'Last name': 'Clarke',
    'Card number': '4111 1111 1111 1111',
    'Expiry month (MM)': '02',
    'Expiry year (YYYY)': '2031',
    'CVV (optional)': '123',
    'Address line 1': '123 Kebly Street',
    City: 'Fort Lee',
    'State (2 letters)': 'nj',
    'ZIP code': '07237',
    'Country (2 letters)': 'US',
    ...overrides,
  };
  // By label: the form must be usable by its labels, as a screen reader user would find the inputs.
  for (const [label, value] of Object.entries(fields))
    await page.getByLabel(label, { exact: true }).fill(value);
}

test('the example form gets a card token across origins, and the token opens to the card without its CVV', async (t) => {
  const pageOrigin = await pageServer(t);
  const { app, url } = await paymentsListening(t, pageOrigin);
  const page = await openForm(t, pageOrigin, url);
  await fillCard(page);
  await page.getByRole('button', { name: 'Get a card token' }).click();
  await page.getByText('Card token received').waitFor();

  const token = (await page.locator('#token').textContent()) ?? '';
  const keys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  const { card } = await keys.open(token, FIXED_NOW);
  assert.equal(card.card_number, '4111111111111111', 'spaces typed in the card number are removed');
  assert.equal(card.address_state, 'NJ');
  assert.equal(card.address_line_two, undefined, 'a blank optional field is sent as null');
  assert.ok(!('cvv' in card));
  assert.equal(await page.getByLabel('Card number').inputValue(), '', 'the card number is cleared');
  assert.equal(await page.getByLabel('CVV (optional)').inputValue(), '');

  // The browser sent a preflight (JSON is not a "simple" content type) and then the POST, both answered.
  const lines = app.logs.filter((line) => line.listener === 'payments' && line.msg === 'request completed');
  assert.deepEqual(
    lines.map((line) => `${line.method} ${line.status}`),
    ['OPTIONS 204', 'POST 200'],
  );
});

test('a field the service refuses is shown on its input, with the service’s words', async (t) => {
  const pageOrigin = await pageServer(t);
  const { url } = await paymentsListening(t, pageOrigin);
  const page = await openForm(t, pageOrigin, url);
  await fillCard(page, { 'ZIP code': '0723' });
  await page.getByRole('button', { name: 'Get a card token' }).click();
  await page.getByText('address_zip_code must be five digits').waitFor();
  assert.equal(await page.getByLabel('ZIP code').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('#token').textContent(), '');
  assert.ok(
    await page.getByLabel('ZIP code').evaluate((input) => input === input.ownerDocument.activeElement),
  );
});

test('a page on an origin that is not allowed gets no token: the browser enforces the CORS refusal', async (t) => {
  const pageOrigin = await pageServer(t);
  const { app, url } = await paymentsListening(t, 'https://partner.example');
  const page = await openForm(t, pageOrigin, url);
  await fillCard(page);
  await page.getByRole('button', { name: 'Get a card token' }).click();
  await page.getByText('The card could not be sent').waitFor();
  assert.equal(await page.locator('#token').textContent(), '');
  // The preflight got no CORS headers, so the browser never sent the card.
  const lines = app.logs.filter((line) => line.listener === 'payments' && line.msg === 'request completed');
  assert.deepEqual(
    lines.map((line) => `${line.method} ${line.status}`),
    ['OPTIONS 204'],
  );
});
