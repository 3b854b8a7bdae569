import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { spawnEwa, startApiProcess } from '../helpers/ew-processes.ts';
import { freePort } from '../helpers/free-port.ts';
import { createTestDatabase, onPostgres } from '../helpers/test-database.ts';

/** The embedded database in a temporary directory, or a fresh schema on PostgreSQL. */
async function databaseEnv(t: TestContext): Promise<Record<string, string>> {
  if (onPostgres) return (await createTestDatabase(t)).env;
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-metrics-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  return { EWA_DATA_DIR: dataDir };
}

test('ewa serve with EWA_METRICS_PORT: requests of the three listeners by route, jobs, and a clean stop', async (t) => {
  const metricsPort = await freePort();
  // The scheduler runs, as in production: its jobs are measured too.
  const server = await startApiProcess({
    ...(await databaseEnv(t)),
    EWA_METRICS_PORT: String(metricsPort),
    EWA_SCHEDULER: 'true',
  });
  t.after(() => server.kill());
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  assert.ok(server.output().includes(`Metrics             ${metricsUrl}`), server.output());
  assert.equal((await fetch(`${server.apiUrl}/rest/accounts/${randomUUID()}`)).status, 401);
  await (await fetch(`${server.authUrl}/.well-known/openid-configuration`)).text();
  assert.equal((await fetch(`${server.paymentsUrl}/anything/${randomUUID()}`)).status, 404);
  assert.equal((await fetch(`${server.apiUrl}/metrics`)).status, 404, 'not on the public listener');
  const scrape = async () => {
    const response = await fetch(metricsUrl);
    assert.equal(response.status, 200);
    return response.text();
  };
  let text = await scrape();
  assert.match(
    text,
    /^ewa_http_requests_total\{listener="api",method="GET",route="\/rest\/accounts\/:account_id",status="401"\} 1$/m,
  );
  assert.match(
    text,
    /^ewa_http_requests_total\{listener="auth",method="GET",route="[^"]+",status="200"\} 1$/m,
  );
  assert.match(
    text,
    /^ewa_http_requests_total\{listener="payments",method="GET",route="\(unmatched\)",status="404"\} 1$/m,
  );
  assert.match(text, /^ewa_outbox_depth\{topic="rail.payment"\} 0$/m);
  assert.match(text, /^ewa_metrics_database_up 1$/m);
  // The scheduler ticks at start: settle-due has run once.
  await eventually(async () =>
    /ewa_scheduled_job_last_success_age_seconds\{job="settle-due"\}/.test(await scrape()),
  );
  text = await scrape();
  assert.match(text, /^ewa_scheduled_job_last_success_age_seconds\{job="settle-due"\} \d/m);
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/`)).status, 404);
  assert.equal(await server.stop(), 0, server.output());
  await assert.rejects(fetch(metricsUrl), 'the metrics listener stopped with the server');
});

test('ewa serve refuses to start when the metrics port is taken, naming EWA_METRICS_PORT', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const running = spawnEwa(['serve'], {
    ...(await databaseEnv(t)),
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(await freePort()),
    EWA_AUTH_PORT: String(await freePort()),
    EWA_PAYMENTS_PORT: String(await freePort()),
    EWA_METRICS_PORT: String(port),
    EWA_SEED_DEMO: 'false',
  });
  t.after(() => running.kill());
  assert.equal(await running.exited, 1, running.output());
  assert.match(
    running.output(),
    new RegExp(`127\\.0\\.0\\.1:${port} is in use .*set EWA_METRICS_PORT to a free port`),
  );
});

test('an EWA_HOST that is not an address of this machine stops the start in one line naming it', async (t) => {
  const running = spawnEwa(['serve'], {
    ...(await databaseEnv(t)),
    EWA_HOST: '192.0.2.1', // TEST-NET-1: never an address of a test machine
    EWA_API_PORT: String(await freePort()),
    EWA_AUTH_PORT: String(await freePort()),
    EWA_PAYMENTS_PORT: String(await freePort()),
    EWA_SEED_DEMO: 'false',
  });
  t.after(() => running.kill());
  assert.equal(await running.exited, 1, running.output());
  assert.equal(
    running.output().trim(),
    'ewa serve: EWA_HOST is 192.0.2.1, which is not an address of this machine (EADDRNOTAVAIL): set it to one of ' +
      'its addresses, like 127.0.0.1, or 0.0.0.0 for all of them.',
  );
});
