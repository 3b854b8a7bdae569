import type { TestContext } from 'node:test';
import { buildTestApp, FIXED_NOW, type TestApp } from './build-test-app.ts';
import { clientToken, createTestClient } from './tokens.ts';

/**
 * An operator's client on the app (admin:operator only, no redirect URI: it signs nobody in), its token, and `call`
 * sending a request to /admin with it (a JSON:API body when given; `accept` for the CSV reports).
 */
export async function operatorClient(app: TestApp) {
  const client = await createTestClient(app, {
    name: 'Operator',
    scopes: ['admin:operator'],
    redirectUris: [],
  });
  const token = await clientToken(app, ['admin:operator'], client);
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, accept?: string) =>
    app.api.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(accept ? { accept } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/vnd.api+json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return { clientId: client.clientId, token, call };
}

/** A test app whose clock the test moves (`clock.now`, FIXED_NOW at first), with an operator's client (above). */
export async function operatorApp(t: TestContext) {
  const clock = { now: FIXED_NOW };
  const app = await buildTestApp(t, {}, { now: () => clock.now });
  return { app, clock, ...(await operatorClient(app)) };
}
