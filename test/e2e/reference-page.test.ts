/**
 * The reference page (swagger-ui at /rest/docs) in a real browser under the Content-Security-Policy the REST
 * listener sends: it must load its own scripts, styles and images, read the OpenAPI document, and show the
 * operations, with no resource refused by the policy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useChromium } from '../helpers/chromium.ts';
import { buildListeningApp } from '../helpers/listening-app.ts';

const browser = useChromium();

test('the reference page renders under the security headers, with nothing refused by its policy', async (t) => {
  const app = await buildListeningApp(t);
  const context = await browser().newContext();
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
