import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { buildTestAppOn } from '../helpers/build-test-app.ts';
import { freePort } from '../helpers/free-port.ts';
import { formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { createTestDatabaseTarget } from '../helpers/test-database.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

const REDIRECT = 'https://partner.example/callback';

test('a restart in the middle of a sign-in loses nothing: session, interaction, grant and keys survive', async (t) => {
  const target = await createTestDatabaseTarget();
  t.after(() => target.drop());
  // The embedded database must outlive the process that wrote it: files in a folder, not memory.
  const dir = mkdtempSync(join(tmpdir(), 'ewa-restart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = target.config.kind === 'pglite' ? { ...target.config, dataDir: dir } : target.config;
  const env = target.config.kind === 'pglite' ? { EWA_DATA_DIR: dir } : target.env;
  const port = await freePort();
  const authUrl = `http://127.0.0.1:${port}`;
  const start = async () => {
    const database: Database = await openDatabase(config);
    await migrate(database.db);
    const app = await buildTestAppOn(t, { ...database, env }, { EWA_AUTH_URL: authUrl });
    await app.auth.listen({ port, host: '127.0.0.1' });
    return app;
  };

  let app = await start();
  const personId = await createTestPerson(app, { password: 'correct horse battery' });
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const browser = new HttpBrowser(authUrl);
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  const url = new URL('/oauth2/auth', authUrl);
  for (const [key, value] of Object.entries({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid offline_access user:read',
    state: 'before-restart',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    prompt: 'consent',
  }))
    url.searchParams.set(key, value);
  const login = await browser.follow(url.toString());
  const consent = await browser.follow(formAction(login.body), {
    form: {
      csrf: hiddenField(login.body, 'csrf'),
      email: `${personId}@people.example`,
      password: 'correct horse battery',
    },
  });
  assert.match(consent.body, /name="decision"/);

  await Promise.all([app.api.close(), app.auth.close(), app.payments.close()]);
  await app.database.close();
  app = await start();
  t.after(() => app.database.close());

  const done = await browser.follow(formAction(consent.body), {
    form: { csrf: hiddenField(consent.body, 'csrf'), decision: 'allow' },
  });
  const callback = new URL(done.url);
  assert.equal(callback.searchParams.get('state'), 'before-restart');
  const response = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      client_id: client.clientId,
      client_secret: client.secret,
    }),
  });
  assert.equal(response.status, 200);
  const tokens = (await response.json()) as { access_token: string; refresh_token: string };
  assert.ok(tokens.refresh_token);
  assert.equal(
    (
      await app.api.inject({
        url: '/rest/health',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      })
    ).statusCode,
    403,
  );
});
