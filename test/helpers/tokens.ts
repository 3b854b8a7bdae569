import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { createClient, type NewClient } from '../../src/oauth/clients.ts';
import type { TestApp } from './build-test-app.ts';

/** A registered confidential client of the test app, with its one-time secret. */
export async function createTestClient(app: TestApp, overrides: Partial<NewClient> = {}) {
  const { client, secret } = await createClient(
    app.database.db,
    {
      name: 'Test Partner',
      isPublic: false,
      redirectUris: ['https://partner.example/callback'],
      scopes: [
        'openid',
        'offline_access',
        'user:read',
        'user:read_write',
        'client:lookup',
        'client:admin',
        'health:read',
      ],
      organizationIds: [],
      ...overrides,
    },
    { sandbox: true },
  );
  return { clientId: client.clientId, secret: secret ?? '' };
}

/** A client_credentials request to the real token endpoint, with `form`'s fields (scope, resource…) added. */
export function clientCredentialsRequest(
  app: TestApp,
  client: { clientId: string; secret: string },
  form: Record<string, string>,
) {
  return app.auth.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      ...form,
    }).toString(),
  });
}

/** A client_credentials access token from the real token endpoint. */
export async function clientToken(
  app: TestApp,
  scopes: string[],
  client?: { clientId: string; secret: string },
) {
  const credentials = client ?? (await createTestClient(app));
  const response = await clientCredentialsRequest(app, credentials, { scope: scopes.join(' ') });
  if (response.statusCode !== 200)
    throw new Error(`token request failed: ${response.statusCode} ${response.body}`);
  return response.json().access_token as string;
}

/** A person of the test app's database with the email `<id>@people.example`, and a password if given. */
export async function createTestPerson(app: TestApp, options: { password?: string } = {}): Promise<string> {
  const id = randomUUID();
  const passwordHash = options.password === undefined ? null : await hashPassword(options.password);
  await app.database.db
    .insertInto('people')
    .values({
      id,
      email: `${id}@people.example`,
      first_name: 'Test',
      last_name: 'Person',
      password_hash: passwordHash,
    })
    .execute();
  return id;
}

/** A user access token minted by the provider, as `ewa tokens issue` does. */
export async function userToken(app: TestApp, personId: string, scopes: string[], clientId?: string) {
  const client = clientId ?? (await createTestClient(app)).clientId;
  // Imported here: it loads oidc-provider, which a test of the server without it must not (provider-on-first-use).
  const { issueUserToken } = await import('../../src/oauth/issue-token.ts');
  const response = await issueUserToken(app.config, app.database.db, { personId, clientId: client, scopes });
  return response.access_token;
}
