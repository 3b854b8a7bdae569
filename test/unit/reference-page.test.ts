/**
 * The reference page's sign-in in the sandbox: its redirect URI is added to the demo clients, only where the
 * client's type allows it; in production nothing demo-specific is registered or prefilled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { clientMetadata } from '../../src/oauth/client-metadata.ts';
import type { OAuthClient } from '../../src/oauth/clients.ts';
import { referencePageSignIn } from '../../src/oauth/reference-page.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';

const STRONG_KEY = Buffer.alloc(32, 7).toString('base64');

function publicClient(redirectUris: string[]): OAuthClient {
  return {
    clientId: DEMO.clients.public.clientId,
    name: 'Demo',
    isPublic: true,
    redirectUris,
    scopes: ['user:read'],
    organizationIds: [],
    partner: null,
    logoUri: null,
    policyUri: null,
    tosUri: null,
    jwksUri: null,
    jwks: null,
    authMethod: 'none',
    createdAt: new Date(0),
  };
}

test('in the sandbox the page signs in with the demo clients, coming back to its oauth2-redirect page', () => {
  const page = referencePageSignIn(loadConfig({ EWA_BASE_URL: 'http://localhost:8080' }));
  assert.deepEqual(page, {
    redirectUri: 'http://localhost:8080/rest/docs/static/oauth2-redirect.html',
    origin: 'http://localhost:8080',
    clientIds: [DEMO.clients.public.clientId, DEMO.clients.confidential.clientId],
    prefilledClientId: DEMO.clients.public.clientId,
  });
});

test('in production nothing demo-specific is registered or prefilled', () => {
  const config = loadConfig({
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    DATABASE_URL: 'postgres://db/ewa',
    EWA_MASTER_KEY: STRONG_KEY,
    ...PRODUCTION_RAIL_ENV,
  });
  assert.equal(referencePageSignIn(config), undefined);
});

test('an added redirect URI is kept only where the client type allows it, so the client stays valid', () => {
  const native = ['com.example.ewa:/callback'];
  const uris = (client: OAuthClient, extra: string) => clientMetadata(client, null, [extra]).redirect_uris;
  const loopback = 'http://127.0.0.1:8080/rest/docs/static/oauth2-redirect.html';
  assert.deepEqual(uris(publicClient(native), loopback), [...native, loopback]);
  assert.deepEqual(uris(publicClient(native), 'http://sandbox.example:8080/x'), native);
  assert.deepEqual(uris(publicClient(native), 'https://sandbox.example/x'), [
    ...native,
    'https://sandbox.example/x',
  ]);
  assert.deepEqual(uris(publicClient(['https://app.example/cb']), 'http://sandbox.example:8080/x'), [
    'https://app.example/cb',
    'http://sandbox.example:8080/x',
  ]);
  assert.deepEqual(uris(publicClient([]), loopback), [], 'a client that signs no one in gets none');
});
