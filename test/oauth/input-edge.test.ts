import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

// Every string that reaches the authorization server is checked where it arrives: a refused character or a
// malformed encoding is 400 in the shape of where it was sent (the OAuth error JSON from an endpoint, an HTML page
// from a page), never a 500 and never a database message. Unexpected errors are generic and logged with their id.
const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';
/** A refused character of each class of the input rule. */
const REFUSED = { nul: '\u0000', bell: '\u0007', newline: '\n', bidi: '\u202e', zeroWidth: '\u200b' };

async function setUp(t: TestContext) {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  return { app, client };
}

const errorLines = (app: ListeningApp) => app.logs.filter((line) => Number(line.level) >= 50);

async function formPost(
  app: ListeningApp,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${app.authUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { response, text: await response.text() };
}

function assertOAuthInvalidRequest(answer: { response: Response; text: string }, status = 400, label = '') {
  assert.equal(answer.response.status, status, `${label}: ${answer.text}`);
  assert.match(answer.response.headers.get('content-type') ?? '', /^application\/json/, label);
  const body = JSON.parse(answer.text) as Record<string, string>;
  assert.equal(body.error, 'invalid_request', label);
  assert.equal(body.error_code, 'invalid_request', label);
  assert.equal(typeof body.error_description, 'string', label);
  assert.ok(answer.response.headers.get('x-request-id'), label);
}

function assertHtmlPage(answer: { response: Response; text: string }, status: number, label = '') {
  assert.equal(answer.response.status, status, `${label}: ${answer.text.slice(0, 300)}`);
  assert.match(answer.response.headers.get('content-type') ?? '', /^text\/html/, label);
  assert.match(answer.text, /^<!doctype html>/, label);
  assert.doesNotMatch(
    answer.text,
    /UTF8|byte sequence|relation|postgres|stack/i,
    `${label}: nothing internal`,
  );
}

test('refused characters in OAuth parameters are invalid_request at every endpoint', async (t) => {
  const { app, client } = await setUp(t);
  const secret = `client_id=${client.clientId}&client_secret=${encodeURIComponent(client.secret)}`;
  for (const [name, character] of Object.entries(REFUSED)) {
    const bad = encodeURIComponent(`a${character}b`);
    const cases: [string, string, Record<string, string>?][] = [
      ['/oauth2/token', `grant_type=client_credentials&client_id=${bad}&client_secret=x`],
      ['/oauth2/token', `grant_type=client_credentials&${secret}&scope=${bad}`],
      ['/oauth2/token', `grant_type=refresh_token&${secret}&refresh_token=${bad}`],
      ['/oauth2/revoke', `${secret}&token=${bad}`],
      ['/oauth2/introspect', `${secret}&token=${bad}`],
      ['/oauth2/introspect', `${secret}&token=x&token_type_hint=${bad}`],
      [
        '/oauth2/token',
        'grant_type=client_credentials',
        { authorization: `Basic ${Buffer.from(`a${character}b:secret`).toString('base64')}` },
      ],
      ['/oauth2/token', `grant_type=client_credentials&${secret}&${bad}=1`],
    ];
    for (const [path, body, headers] of cases) {
      assertOAuthInvalidRequest(await formPost(app, path, body, headers), 400, `${name} ${path} ${body}`);
    }
  }
  assert.deepEqual(errorLines(app), [], 'a refused request is not an error of ours');
});

test('malformed form bodies at the endpoints: bad escapes and invalid UTF-8 are 400, other charsets 415', async (t) => {
  const { app, client } = await setUp(t);
  const secret = `client_id=${client.clientId}&client_secret=${encodeURIComponent(client.secret)}`;
  const base = `grant_type=client_credentials&${secret}`;
  for (const body of [
    `${base}&scope=%zz`,
    `${base}&scope=health%3`,
    `${base}&scope=%FF`,
    `${base}&scope=%C3%28`,
    `${base}&scope=%ED%A0%80`,
    Buffer.concat([Buffer.from(`${base}&scope=`), Buffer.from([0xff, 0xfe])]),
  ]) {
    assertOAuthInvalidRequest(await formPost(app, '/oauth2/token', body), 400, String(body));
  }
  const latin1 = await formPost(app, '/oauth2/token', `${base}&scope=health%3Aread`, {
    'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1',
  });
  assertOAuthInvalidRequest(latin1, 415, 'charset');
  const utf8 = await formPost(app, '/oauth2/token', `${base}&scope=health%3Aread`, {
    'content-type': 'application/x-www-form-urlencoded;charset=UTF-8',
  });
  assert.equal(utf8.response.status, 200, `an explicit UTF-8 charset is accepted: ${utf8.text}`);
  assert.deepEqual(errorLines(app), []);
});

test('the authorization endpoint refuses them with an error page and redirects nowhere', async (t) => {
  const { app, client } = await setUp(t);
  const valid: Record<string, string> = {
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid user:read',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  };
  for (const parameter of ['client_id', 'redirect_uri', 'state', 'scope', 'nonce']) {
    for (const [name, character] of Object.entries(REFUSED)) {
      const url = new URL('/oauth2/auth', app.authUrl);
      for (const [key, value] of Object.entries({ ...valid, [parameter]: `x${character}y` }))
        url.searchParams.set(key, value);
      const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
      const answer = { response, text: await response.text() };
      assertHtmlPage(answer, 400, `${parameter} ${name}`);
      assert.equal(response.headers.get('location'), null);
    }
  }
  for (const query of ['client_id=%FF', 'client_id=%zz', 'client_id=a&scope=%ED%A0%80']) {
    const response = await fetch(`${app.authUrl}/oauth2/auth?${query}`, { redirect: 'manual' });
    assertHtmlPage({ response, text: await response.text() }, 400, query);
  }
  assert.deepEqual(errorLines(app), []);
});

/** The sign-in page of a fresh interaction, in its own browser. */
async function signInPage(app: ListeningApp, clientId: string) {
  const browser = new HttpBrowser(app.authUrl);
  const url = new URL('/oauth2/auth', app.authUrl);
  for (const [key, value] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid user:read',
    state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(key, value);
  const page = await browser.follow(url.toString());
  return { browser, page };
}

test('sign-in and sign-up forms refuse them with an HTML page, passwords included', async (t) => {
  const { app, client } = await setUp(t);
  const email = `${await createTestPerson(app, { password: PASSWORD })}@people.example`;
  const { browser, page } = await signInPage(app, client.clientId);
  const csrf = hiddenField(page.body, 'csrf');
  const tries = async () =>
    (await app.database.db.selectFrom('login_throttle').select('key').execute()).length;
  const triesBefore = await tries();
  const signup = await browser.follow(page.url.replace(/\/?$/, '/signup'));
  for (const [name, character] of Object.entries(REFUSED)) {
    for (const form of [
      { email: `a${character}b@people.example`, password: PASSWORD },
      { email, password: `${PASSWORD}${character}` },
    ]) {
      const answer = await browser.follow(formAction(page.body), { form: { csrf, ...form } });
      assertHtmlPage({ response: answer.response, text: answer.body }, 400, `sign-in ${name}`);
      assert.match(answer.body, /contains a/, 'the page says what is wrong');
    }
    for (const form of [
      { email: `a${character}b@people.example`, employee_id: 'E1', password: PASSWORD },
      { email, employee_id: `E${character}1`, password: PASSWORD },
      { email, employee_id: 'E1', password: `${PASSWORD}${character}` },
    ]) {
      const answer = await browser.follow(formAction(signup.body), {
        form: { csrf: hiddenField(signup.body, 'csrf'), ...form },
      });
      assertHtmlPage({ response: answer.response, text: answer.body }, 400, `sign-up ${name}`);
    }
  }
  // Malformed bodies, and another media type, on a page: an HTML page too.
  const post = async (body: string | Buffer, type = 'application/x-www-form-urlencoded') => {
    const response = await fetch(`${app.authUrl}${formAction(page.body)}`, {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    });
    return { response, text: await response.text() };
  };
  assertHtmlPage(await post(`csrf=${csrf}&email=%zz&password=x`), 400, 'bad escape');
  assertHtmlPage(await post(Buffer.from([0x65, 0x3d, 0xff])), 400, 'invalid UTF-8');
  assertHtmlPage(await post('email=x', 'application/x-www-form-urlencoded; charset=latin1'), 415, 'charset');
  assertHtmlPage(await post('{"email":"x"}', 'application/json'), 415, 'JSON');
  assert.deepEqual(errorLines(app), [], 'a refused form is not an error of ours');
  assert.equal(await tries(), triesBefore, 'a refused form is not a try');
});

test('an unexpected error on a page is a generic HTML page with the request id, logged with its cause', async (t) => {
  const { app, client } = await setUp(t);
  const email = `${await createTestPerson(app, { password: PASSWORD })}@people.example`;
  const { browser, page } = await signInPage(app, client.clientId);
  // The sign-in's own table gone: the database fails under the page.
  await sql`alter table login_throttle rename to login_throttle_away`.execute(app.database.db);
  t.after(() => sql`alter table login_throttle_away rename to login_throttle`.execute(app.database.db));
  const answer = await browser.follow(formAction(page.body), {
    form: { csrf: hiddenField(page.body, 'csrf'), email, password: PASSWORD },
  });
  assertHtmlPage({ response: answer.response, text: answer.body }, 500, 'unexpected');
  const requestId = answer.response.headers.get('x-request-id')!;
  assert.ok(answer.body.includes(requestId), 'the page shows the request id to quote');
  const [line, ...more] = errorLines(app);
  assert.equal(more.length, 0);
  assert.equal(line?.request_id, requestId, 'the error line carries the request id');
  assert.match(JSON.stringify(line?.err), /login_throttle/, 'and the cause');
});

test("an unexpected error inside an endpoint is server_error, logged with the request's id", async (t) => {
  const { app, client } = await setUp(t);
  const form = `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${encodeURIComponent(client.secret)}&scope=health%3Aread`;
  const token = JSON.parse((await formPost(app, '/oauth2/token', form)).text).access_token as string;
  await sql`alter table oauth_revocations rename to oauth_revocations_away`.execute(app.database.db);
  t.after(() => sql`alter table oauth_revocations_away rename to oauth_revocations`.execute(app.database.db));
  const answer = await formPost(
    app,
    '/oauth2/introspect',
    `token=${token}&client_id=${client.clientId}&client_secret=${encodeURIComponent(client.secret)}`,
  );
  assert.equal(answer.response.status, 500);
  assert.equal(JSON.parse(answer.text).error, 'server_error');
  assert.doesNotMatch(answer.text, /oauth_revocations|relation/);
  const requestId = answer.response.headers.get('x-request-id')!;
  const lines = errorLines(app);
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0]!.request_id, requestId);
  assert.match(JSON.stringify(lines[0]!.err), /oauth_revocations/);
});

test('an id taken from inside a JWT with a refused character names nothing: invalid_client, not 500', async (t) => {
  const { app } = await setUp(t);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  // The provider reads the client of a client assertion from its subject before it can check the signature.
  const assertion = [
    part({ alg: 'ES256', typ: 'JWT' }),
    part({ iss: 'a\u0000b', sub: 'a\u0000b', aud: `${app.authUrl}/oauth2/token`, jti: 'j1', exp: now + 60 }),
    'c2lnbmF0dXJl',
  ].join('.');
  const answer = await formPost(
    app,
    '/oauth2/token',
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    }).toString(),
  );
  assert.equal(answer.response.status, 401, answer.text);
  assert.equal(JSON.parse(answer.text).error, 'invalid_client');
  assert.deepEqual(errorLines(app), []);
});
