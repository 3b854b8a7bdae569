import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import packageJson from '../../package.json' with { type: 'json' };
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { buildServer } from '../../src/server.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { openTestDatabase } from '../helpers/test-database.ts';
import { clientToken } from '../helpers/tokens.ts';

test('GET /rest/health answers 200 application/json with the package version', async (t) => {
  const app = await buildTestApp(t);
  const token = await clientToken(app, ['health:read']);
  const response = await app.api.inject({
    url: '/rest/health',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  assert.deepEqual(response.json(), { status: 'UP', version: packageJson.version });
});

test("GET /rest/health is the description's 500 UNEXPECTED_ERROR, saying why, when the database does not answer in time", async (t) => {
  const app = await buildTestApp(t, { EWA_HEALTH_DB_TIMEOUT_MS: '300' });
  const { api, database, config } = app;
  const headers = { authorization: `Bearer ${await clientToken(app, ['health:read'])}` };
  assert.equal((await api.inject({ url: '/rest/health', headers })).statusCode, 200);
  // Transactions holding every connection of the pool (PGlite has one) keep the ping waiting.
  const connections = config.database.kind === 'postgres' ? config.database.poolSize : 1;
  const hold = () =>
    database.db.transaction().execute(async (tx) => {
      await sql`select 1`.execute(tx);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    });
  const busy = Promise.all(Array.from({ length: connections }, hold));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const started = performance.now();
  const response = await api.inject({ url: '/rest/health', headers });
  const elapsedMs = performance.now() - started;
  await busy;
  const error = assertErrorAnswer(response, 500, 'UNEXPECTED_ERROR');
  assert.equal(error.detail, 'The database did not answer in time.');
  assert.ok(elapsedMs < 1200, `answered after ${elapsedMs} ms, when the database was free again`);
  // A warning with its cause in one line, no stack: a load balancer probes every few seconds while it lasts.
  const warnings = app.logs.filter((line) => line.msg === 'health check: database did not answer');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.level, 40);
  assert.equal(typeof warnings[0]!.reason, 'string');
  assert.equal(warnings[0]!.err, undefined);
  assert.deepEqual(
    app.logs.filter((line) => Number(line.level) >= 50),
    [],
    'no error line with a stack for each probe',
  );
  assert.equal(
    (await api.inject({ url: '/rest/health', headers })).statusCode,
    200,
    'healthy again once the database answers',
  );
});

test('GET /rest/health is 500 UNEXPECTED_ERROR when the database is gone', async (t) => {
  const database = await openTestDatabase(t);
  const config = loadConfig({ ...database.env, EWA_LOG_LEVEL: 'silent' });
  const closing = await openDatabase(config.database);
  await migrate(closing.db); // on PGlite this is a database of its own
  const servers = await buildServer(config, { database: closing });
  t.after(() => Promise.all([servers.api.close(), servers.auth.close()]));
  const token = await clientToken({ ...servers, config, database: closing, logs: [] }, ['health:read']);
  const headers = { authorization: `Bearer ${token}` };
  assert.equal((await servers.api.inject({ url: '/rest/health', headers })).statusCode, 200);
  await closing.close();
  const response = await servers.api.inject({ url: '/rest/health', headers });
  assertErrorAnswer(response, 500, 'UNEXPECTED_ERROR');
});
