import type { TestContext } from 'node:test';
import { buildTestApp, FIXED_NOW } from './build-test-app.ts';
import { clientToken, createTestClient } from './tokens.ts';

/**
 * A test app whose clock the test moves (`clock.now`, FIXED_NOW at first) and an operator's client token, with
 * `call` sending a request to /admin (a JSON:API body when given; `accept` for the CSV reports).
 */
export async function operatorApp(t: TestContext) {
  const clock = { now: FIXED_NOW };
  const app = await buildTestApp(t, {}, { now: () => clock.now });
  const client = await createTestClient(app, {
    name: 'Operator',
    scopes: ['admin:operator'],
    redirectUris: [],
  });
  const token = await clientToken(app, ['admin:operator'], client);
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, accept?: string) =>
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
  return { app, clock, call };
}
