import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as oidc from 'openid-client';
import { eventually } from '../helpers/eventually.ts';
import { authorize, HttpBrowser } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

async function personWithPassword(app: ListeningApp) {
  const id = await createTestPerson(app, { password: PASSWORD });
  const person = await app.database.db
    .selectFrom('people')
    .select('email')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { id, email: person.email! };
}

async function relyingParty(app: ListeningApp, client: { clientId: string; secret: string }) {
  return oidc.discovery(
    new URL(app.authUrl),
    client.clientId,
    client.secret,
    oidc.ClientSecretPost(client.secret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
}

test('authorization code + PKCE with openid-client: sign in, allow, exchange, use, refresh, revoke', async (t) => {
  const app = await buildListeningApp(t, { EWA_REVOCATION_POLL_MS: '100' });
  const person = await personWithPassword(app);
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const rp = await relyingParty(app, client);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: REDIRECT,
    scope: 'openid offline_access user:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
  });
  const result = await authorize(new HttpBrowser(app.authUrl), url.toString(), {
    ...person,
    password: PASSWORD,
  });
  assert.ok(
    result.url.startsWith(`${REDIRECT}?`),
    `${result.url} ${result.status} ${result.body.slice(result.body.indexOf('<main>'), result.body.indexOf('<main>') + 800)}`,
  );
  const tokens = await oidc.authorizationCodeGrant(rp, new URL(result.url), {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  assert.equal(typeof tokens.refresh_token, 'string');
  assert.equal(tokens.claims()?.sub, person.id);
  assert.equal(typeof (tokens as unknown as { created_at: number }).created_at, 'number');
  for (const token of [tokens.access_token, tokens.refresh_token!, tokens.id_token!])
    assert.ok(Buffer.byteLength(token) < 4096);

  // The user token reaches the bearer check: valid, but health is for client tokens.
  const headers = { authorization: `Bearer ${tokens.access_token}` };
  const forbidden = await app.api.inject({ url: '/rest/health', headers });
  assert.equal(forbidden.statusCode, 403);
  assert.equal(forbidden.json().errors[0].code, 'FORBIDDEN');

  const info = await oidc.fetchUserInfo(rp, tokens.access_token, person.id);
  assert.equal(info.sub, person.id);

  const refreshed = await oidc.refreshTokenGrant(rp, tokens.refresh_token!);
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'refresh tokens rotate');
  await oidc.tokenRevocation(rp, refreshed.access_token);
  await eventually(
    async () =>
      (
        await app.api.inject({
          url: '/rest/health',
          headers: { authorization: `Bearer ${refreshed.access_token}` },
        })
      ).statusCode === 401,
  );
  const revoked = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: `Bearer ${refreshed.access_token}` },
  });
  assert.equal(revoked.statusCode, 401);
  assert.equal(revoked.json().errors[0].code, 'INVALID_TOKEN');
});
