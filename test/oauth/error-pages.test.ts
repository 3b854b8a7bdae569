import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { renderAuthorizationErrorPage, renderErrorPage } from '../../src/oauth/pages/pages.ts';
import { HttpBrowser } from '../helpers/http-browser.ts';
import { buildListeningApp } from '../helpers/listening-app.ts';
import { createTestClient } from '../helpers/tokens.ts';

// The authorization server's error pages speak to a worker: a plain title and sentence and what to do next; the
// OAuth code (and its description) only in small print for support, with the request id. Statuses are unchanged.
const REDIRECT = 'https://partner.example/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

async function setUp(t: TestContext) {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const authorizationUrl = (overrides: Record<string, string | undefined>) => {
    const url = new URL('/oauth2/auth', app.authUrl);
    const params: Record<string, string | undefined> = {
      client_id: client.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid user:read',
      state: 'state-1',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      ...overrides,
    };
    for (const [key, value] of Object.entries(params))
      if (value !== undefined) url.searchParams.set(key, value);
    return url.toString();
  };
  return { app, client, authorizationUrl };
}

/** A page as a browser gets it: its status, headers, the text of its parts. */
async function pageAt(url: string, init: RequestInit = {}) {
  const response = await fetch(url, {
    redirect: 'manual',
    ...init,
    headers: { accept: 'text/html', ...init.headers },
  });
  const body = await response.text();
  const part = (pattern: RegExp) => pattern.exec(body)?.[1]?.trim();
  return {
    status: response.status,
    headers: response.headers,
    body,
    title: part(/<h1>([\s\S]*?)<\/h1>/),
    message: part(/<div class="error" role="alert">([\s\S]*?)<\/div>/),
    support: part(/<p class="support">([\s\S]*?)<\/p>/),
  };
}

type Page = Awaited<ReturnType<typeof pageAt>>;

/** Plain words first, the code only in the small print, the request id to quote, the pages' security headers. */
function assertPlainPage(
  page: Page,
  expected: { status: number; title: string; code: string },
  label: string,
) {
  assert.equal(page.status, expected.status, `${label}: ${page.body.slice(0, 500)}`);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/, label);
  assert.equal(page.headers.get('location'), null, `${label}: no redirect`);
  assert.equal(page.title, expected.title, label);
  assert.ok(page.message && !page.message.includes(expected.code), `${label}: the message is not the code`);
  assert.match(
    page.body,
    /go back to the app|close this window|reload the page/i,
    `${label}: what to do next`,
  );
  assert.ok(page.support?.includes(`<code>${expected.code}</code>`), `${label}: the code in small print`);
  const requestId = page.headers.get('x-request-id');
  assert.ok(
    requestId && page.support?.includes(`Reference: <code>${requestId}</code>`),
    `${label}: request id`,
  );
  assert.ok(!page.body.slice(0, page.body.indexOf('<p class="support">')).includes(expected.code), label);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /frame-ancestors 'none'/, label);
  assert.match(csp, /script-src 'self'/, label);
  assert.equal(page.headers.get('x-frame-options'), 'DENY', label);
  assert.equal(page.headers.get('cache-control'), 'no-store', label);
}

const INVALID_LINK = 'This sign-in link is not valid';
const EXPIRED = 'This sign-in has expired';

test('the authorization endpoint: unknown client, unregistered redirect URI, malformed request', async (t) => {
  const { app, authorizationUrl } = await setUp(t);
  const cases: [string, string, string, RegExp][] = [
    [
      authorizationUrl({ client_id: 'no-such-client' }),
      'invalid_client',
      'unknown client',
      /not known to us/,
    ],
    [
      authorizationUrl({ redirect_uri: 'https://evil.example/steal' }),
      'invalid_redirect_uri',
      'redirect_uri',
      /has not registered/,
    ],
    [
      authorizationUrl({ client_id: undefined }),
      'invalid_request',
      'no client_id',
      /not valid or has expired/,
    ],
    [`${app.authUrl}/oauth2/auth?client_id=a&client_id=b`, 'invalid_request', 'duplicate', /not valid/],
  ];
  for (const [url, code, label, words] of cases) {
    const page = await pageAt(url);
    assertPlainPage(page, { status: 400, title: INVALID_LINK, code }, label);
    assert.match(page.message!, words, label);
  }
});

test('an expired, unknown or finished sign-in: the interaction pages and the resume of the authorization', async (t) => {
  const { app, authorizationUrl } = await setUp(t);
  for (const path of ['/interaction/no-such-interaction', '/interaction/no-such-interaction/signup']) {
    const page = await pageAt(`${app.authUrl}${path}`);
    assertPlainPage(page, { status: 400, title: EXPIRED, code: 'invalid_request' }, path);
    assert.match(page.message!, /took too long, was already finished/);
  }
  const posted = await pageAt(`${app.authUrl}/interaction/no-such-interaction/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'csrf=x&email=a%40b.example&password=x',
  });
  assertPlainPage(posted, { status: 400, title: EXPIRED, code: 'invalid_request' }, 'POST login');

  // The provider's resume without its cookie: session_not_found, in the same words.
  const resume = await pageAt(`${app.authUrl}/oauth2/auth/no-such-interaction`);
  assertPlainPage(resume, { status: 400, title: EXPIRED, code: 'invalid_request' }, 'resume');

  // A real interaction opened in another browser (its cookie is not there): expired too, not the sign-in.
  const browser = new HttpBrowser(app.authUrl);
  const login = await browser.follow(authorizationUrl({}));
  assert.match(login.url, /\/interaction\//);
  const elsewhere = await pageAt(login.url);
  assertPlainPage(elsewhere, { status: 400, title: EXPIRED, code: 'invalid_request' }, 'another browser');
});

test('a path nothing serves under the pages is a plain 404; a wrong method a plain 405', async (t) => {
  const { app } = await setUp(t);
  const missing = await pageAt(`${app.authUrl}/interaction/some-id/nothing/here`);
  assertPlainPage(missing, { status: 404, title: 'Page not found', code: 'not_found' }, '404');
  assert.match(missing.support!, /Nothing is served at/);
  const method = await pageAt(`${app.authUrl}/oauth2/auth`, { method: 'DELETE' });
  assertPlainPage(method, { status: 405, title: 'Page not found', code: 'invalid_request' }, '405');
  // POST is not served on the browser endpoints (oidc-provider would answer a bare text 404): a 405 page too.
  for (const path of ['/oauth2/auth', '/oauth2/sessions/logout']) {
    const post = await pageAt(`${app.authUrl}${path}`, { method: 'POST' });
    assertPlainPage(post, { status: 405, title: 'Page not found', code: 'invalid_request' }, `POST ${path}`);
  }
});

test('the logout endpoint: a bad sign-out link says so in plain words', async (t) => {
  const { app } = await setUp(t);
  const page = await pageAt(`${app.authUrl}/oauth2/sessions/logout?id_token_hint=not-a-token`);
  assertPlainPage(
    page,
    { status: 400, title: 'This sign-out link is not valid', code: 'invalid_request' },
    'logout',
  );
  assert.match(page.message!, /you may still be signed in/);
});

test('everything on an error page is escaped', () => {
  const markup = renderAuthorizationErrorPage({
    code: '<img src=x onerror=alert(1)>',
    detail: '"><script>alert(1)</script>',
    requestId: "req'<b>",
  });
  assert.doesNotMatch(markup, /<script>alert|<img src=x|<b>/);
  assert.match(markup, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(markup, /req&#39;&lt;b&gt;/);
  const older = renderErrorPage('temporarily_unavailable', 'The server is busy. <b>Try</b> again.');
  assert.match(older, /<h1>Sign-in is busy right now<\/h1>/);
  assert.match(older, /&lt;b&gt;Try&lt;\/b&gt;/);
});
