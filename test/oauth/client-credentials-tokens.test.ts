import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { ClientCache } from '../../src/oauth/client-cache.ts';
import { ClientCredentialsTokens } from '../../src/oauth/client-credentials-tokens.ts';
import { loadProviderKeys } from '../../src/oauth/provider-setup.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient } from '../helpers/tokens.ts';

type Form = Record<string, string>;

async function tokenRequest(app: ListeningApp, form: Form, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Form };
}

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
});

/** The parts of a token answer that must be the same whichever path issued it (ids and times differ). */
function shapeOf(answer: { status: number; headers: Headers; body: Form }) {
  const token = answer.body.access_token!;
  const claims = decodeJwt(token);
  return {
    status: answer.status,
    headers: ['cache-control', 'content-type', 'access-control-allow-origin'].map((name) =>
      answer.headers.get(name),
    ),
    body: Object.keys(answer.body).sort(),
    expiresIn: answer.body.expires_in,
    scope: answer.body.scope,
    tokenType: answer.body.token_type,
    header: decodeProtectedHeader(token),
    claims: Object.keys(claims).sort(),
    sub: claims.sub,
    clientId: claims.client_id,
    claimScope: claims.scope,
    iss: claims.iss,
    aud: claims.aud,
    lifetime: claims.exp! - claims.iat!,
    jtiLength: String(claims.jti).length,
  };
}

test('the plain client_credentials request gets the token oidc-provider issues for it, and the API takes it', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app);
  // A resource indicator (the API's own URL) is a request the plain path leaves to the provider: same token asked.
  const viaProvider = { resource: app.apiUrl };
  const requests: { form: Form; headers?: Record<string, string> }[] = [
    { form: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret } },
    {
      form: {
        grant_type: 'client_credentials',
        scope: 'health:read',
        client_id: client.clientId,
        client_secret: client.secret,
      },
    },
    {
      form: { grant_type: 'client_credentials', scope: 'client:admin health:read' },
      headers: basic(client.clientId, client.secret),
    },
    {
      form: { grant_type: 'client_credentials', scope: 'health:read', client_id: client.clientId },
      headers: basic(client.clientId, client.secret),
    },
  ];
  for (const { form, headers } of requests) {
    const plain = await tokenRequest(app, form, headers);
    const provider = await tokenRequest(app, { ...form, ...viaProvider }, headers);
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.deepEqual(shapeOf(plain), shapeOf(provider), JSON.stringify(form));
    const health = await fetch(`${app.apiUrl}/rest/health`, {
      headers: { authorization: `Bearer ${plain.body.access_token}` },
    });
    assert.equal(health.status, 200);
  }
});

test('every request the plain path does not take is answered by the provider, as before', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app);
  const other = await createTestClient(app);
  const form = { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret };
  const cases: [string, Promise<{ status: number; body: Form }>, number, string][] = [
    [
      'a wrong secret',
      tokenRequest(app, { ...form, client_secret: `${client.secret}x` }),
      401,
      'invalid_client',
    ],
    ['an unknown client', tokenRequest(app, { ...form, client_id: 'nobody' }), 401, 'invalid_client'],
    [
      "another client's secret",
      tokenRequest(app, { ...form, client_secret: other.secret }),
      401,
      'invalid_client',
    ],
    ['a user scope', tokenRequest(app, { ...form, scope: 'user:read' }), 400, 'invalid_scope'],
    ['an unknown scope', tokenRequest(app, { ...form, scope: 'health:read admin' }), 400, 'invalid_scope'],
    [
      'a secret given two ways',
      tokenRequest(app, form, basic(client.clientId, client.secret)),
      400,
      'invalid_request',
    ],
    [
      'two client ids',
      tokenRequest(
        app,
        { grant_type: 'client_credentials', client_id: other.clientId },
        basic(client.clientId, client.secret),
      ),
      400,
      'invalid_request',
    ],
  ];
  for (const [what, answer, status, error] of cases) {
    const { status: got, body } = await answer;
    assert.equal(got, status, `${what}: ${JSON.stringify(body)}`);
    assert.equal(body.error, error, what);
    assert.equal(body.access_token, undefined, what);
  }
  // A repeated parameter: the provider refuses it.
  const repeated = await fetch(`${app.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}&scope=health:read&scope=client:admin`,
  });
  assert.equal(repeated.status, 400);
  assert.equal(((await repeated.json()) as Form).error, 'invalid_request');
});

test('the plain path answers only the plain case and leaves everything else to the provider', async (t) => {
  const app = await buildListeningApp(t);
  const client = await createTestClient(app);
  const keyless = await createTestClient(app, { scopes: ['openid', 'user:read'] });
  const tokens = new ClientCredentialsTokens({
    issuer: app.config.auth.publicUrl,
    resource: app.config.api.publicUrl,
    ttlSeconds: app.config.oauth.accessTokenTtlSeconds,
    keys: await loadProviderKeys(app.config, { db: app.database.db, now: () => new Date() }),
    clients: new ClientCache(app.database.db, () => []),
  });
  const pairs = (form: Form) => Object.entries(form) as [string, string][];
  const plain = {
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.secret,
  };
  const issued = await tokens.issue({}, pairs(plain));
  assert.equal(issued?.scope, 'client:lookup client:admin health:read');
  assert.equal(issued?.token_type, 'Bearer');
  const untaken: [string, Record<string, string>, Form][] = [
    ['a browser origin', { origin: 'https://partner.example' }, plain],
    ['a DPoP proof', { dpop: 'x.y.z' }, plain],
    ['a resource indicator', {}, { ...plain, resource: app.config.api.publicUrl }],
    ['another grant', {}, { ...plain, grant_type: 'refresh_token' }],
    ['an empty scope', {}, { ...plain, scope: '' }],
    ['a doubled space', {}, { ...plain, scope: 'health:read  client:admin' }],
    ['a repeated scope', {}, { ...plain, scope: 'health:read health:read' }],
    [
      'a client without client scopes',
      {},
      { ...plain, client_id: keyless.clientId, client_secret: keyless.secret },
    ],
    ['a bearer header', { authorization: 'Bearer abc' }, { grant_type: 'client_credentials' }],
    [
      'an encoded basic id',
      basic(`${client.clientId}%41`, client.secret),
      { grant_type: 'client_credentials' },
    ],
  ];
  for (const [what, headers, form] of untaken) {
    assert.equal(await tokens.issue(headers, pairs(form)), undefined, what);
  }
  const duplicated: [string, string][] = [
    ...pairs(plain),
    ['scope', 'health:read'],
    ['scope', 'client:admin'],
  ];
  assert.equal(await tokens.issue({}, duplicated), undefined, 'a repeated parameter');
});
