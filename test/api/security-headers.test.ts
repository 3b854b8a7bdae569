import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker, workerToken } from '../helpers/factories.ts';
import { formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp } from '../helpers/listening-app.ts';
import { clientToken, createTestClient, createTestPerson } from '../helpers/tokens.ts';

const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

/** Nobody may frame the page, and the browser may not guess its type. */
function assertNotFramable(headers: Headers, what: string) {
  const policy = headers.get('content-security-policy') ?? '';
  assert.match(policy, /(^|;)\s*frame-ancestors 'none'/, `${what}: ${policy}`);
  assert.equal(headers.get('x-frame-options'), 'DENY', what);
  assert.equal(headers.get('x-content-type-options'), 'nosniff', what);
}

test("the sign-in, sign-up and consent pages refuse every frame (frame-ancestors 'none', X-Frame-Options: DENY)", async (t) => {
  const app = await buildListeningApp(t);
  const personId = await createTestPerson(app, { password: PASSWORD });
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const verifier = randomBytes(32).toString('base64url');
  const authorization = new URL('/oauth2/auth', app.authUrl);
  authorization.search = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid user:read',
    state: 'state-1',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    prompt: 'consent',
  }).toString();
  const browser = new HttpBrowser(app.authUrl);

  const signIn = await browser.follow(authorization.toString());
  assert.match(signIn.body, /autocomplete="current-password"/, 'the sign-in page');
  assertNotFramable(signIn.response.headers, 'sign-in page');
  const signUp = await browser.follow(signIn.url.replace(/\/?$/, '/signup'));
  assert.match(signUp.body, /name="employee_id"/, 'the sign-up page');
  assertNotFramable(signUp.response.headers, 'sign-up page');
  const consent = await browser.follow(formAction(signIn.body), {
    form: { csrf: hiddenField(signIn.body, 'csrf'), email: `${personId}@people.example`, password: PASSWORD },
  });
  assert.match(consent.body, /name="decision"/, 'the consent page');
  assertNotFramable(consent.response.headers, 'consent page');
  // Not in the sandbox: it is not served over HTTPS.
  assert.equal(consent.response.headers.get('strict-transport-security'), null);
});

test('every listener says nosniff, errors included', async (t) => {
  const app = await buildTestApp(t);
  const answers = [
    await app.api.inject({ url: '/rest/health' }),
    await app.api.inject({ url: '/rest/nothing-here' }),
    await app.auth.inject({ url: '/.well-known/openid-configuration' }),
    await app.auth.inject({ method: 'POST', url: '/oauth2/token', payload: '' }),
    await app.auth.inject({ url: '/nothing-here' }),
    await app.payments.inject({
      method: 'POST',
      url: '/v2/cards/generic',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    }),
    await app.payments.inject({ url: '/nothing-here' }),
  ];
  for (const answer of answers) {
    assert.equal(answer.headers['x-content-type-options'], 'nosniff', answer.raw.req.url);
    assert.equal(answer.headers['x-frame-options'], 'DENY', answer.raw.req.url);
  }
});

test('every /rest and /admin answer is Cache-Control: no-store, but the documentation', async (t) => {
  const app = await buildTestApp(t);
  const worker = await createWorker(app, await createOrganization(app));
  const user = { authorization: `Bearer ${await workerToken(app, worker.personId)}` };
  const client = { authorization: `Bearer ${await clientToken(app, ['health:read'])}` };
  const personal = [
    await app.api.inject({ url: `/rest/people/${worker.personId}`, headers: user }),
    await app.api.inject({ url: `/rest/jobs/${worker.jobId}`, headers: user }),
    await app.api.inject({ url: '/rest/health', headers: client }),
    await app.api.inject({ url: `/rest/people/${crypto.randomUUID()}`, headers: user }),
    await app.api.inject({ url: '/rest/people/not-mine' }),
    await app.api.inject({ url: '/admin/organizations' }),
    await app.api.inject({ url: '/rest/nothing-here' }),
    await app.payments.inject({
      method: 'POST',
      url: '/v2/cards/generic',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    }),
  ];
  assert.equal(personal[0]!.statusCode, 200);
  for (const answer of personal)
    assert.equal(answer.headers['cache-control'], 'no-store', answer.raw.req.url);
  for (const url of ['/rest/docs', '/rest/docs/static/index.html', '/rest/errors', '/rest/openapi.json']) {
    const answer = await app.api.inject({ url });
    assert.ok(answer.statusCode < 400, `${url}: ${answer.statusCode}`);
    assert.notEqual(answer.headers['cache-control'], 'no-store', url);
    assert.equal(answer.headers['x-content-type-options'], 'nosniff', url);
  }
});
