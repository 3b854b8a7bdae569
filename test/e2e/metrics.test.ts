import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { freePort } from '../helpers/free-port.ts';
import { createTestDatabase, onPostgres } from '../helpers/test-database.ts';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Running {
  let text = '';
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', EWA_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    text += chunk;
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** A server's environment on free ports, on the embedded database in a temporary directory or a fresh schema. */
async function serverEnv(t: TestContext, metricsPort: number): Promise<Record<string, string>> {
  const [api, auth, payments] = [await freePort(), await freePort(), await freePort()];
  let database: Record<string, string>;
  if (onPostgres) database = (await createTestDatabase(t)).env;
  else {
    const dataDir = mkdtempSync(join(tmpdir(), 'ewa-metrics-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    database = { EWA_DATA_DIR: dataDir };
  }
  return {
    ...database,
    EWA_SEED_DEMO: 'false',
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(api),
    EWA_AUTH_PORT: String(auth),
    EWA_PAYMENTS_PORT: String(payments),
    EWA_BASE_URL: `http://127.0.0.1:${api}`,
    EWA_AUTH_URL: `http://127.0.0.1:${auth}`,
    EWA_PAYMENTS_URL: `http://127.0.0.1:${payments}`,
    EWA_METRICS_PORT: String(metricsPort),
  };
}

async function waitForHealth(url: string, running: Running, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) throw new Error(`server exited early:\n${running.output()}`);
    try {
      if ((await fetch(`${url}/rest/health`)).status === 401) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no healthy answer within ${timeoutMs} ms:\n${running.output()}`);
}

test('ewa serve with EWA_METRICS_PORT: requests of the three listeners by route, jobs, and a clean stop', async (t) => {
  const metricsPort = await freePort();
  const env = await serverEnv(t, metricsPort);
  const running = start(env);
  t.after(() => running.child.kill('SIGKILL'));
  await waitForHealth(env.EWA_BASE_URL!, running, 60_000);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  assert.ok(running.output().includes(`Metrics             ${metricsUrl}`), running.output());
  assert.equal((await fetch(`${env.EWA_BASE_URL}/rest/accounts/${randomUUID()}`)).status, 401);
  await (await fetch(`${env.EWA_AUTH_URL}/.well-known/openid-configuration`)).text();
  assert.equal((await fetch(`${env.EWA_PAYMENTS_URL}/anything/${randomUUID()}`)).status, 404);
  assert.equal((await fetch(`${env.EWA_BASE_URL}/metrics`)).status, 404, 'not on the public listener');
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
  running.child.kill('SIGTERM');
  assert.equal(await running.exited, 0, running.output());
  await assert.rejects(fetch(metricsUrl), 'the metrics listener stopped with the server');
});

test('ewa serve refuses to start when the metrics port is taken, naming EWA_METRICS_PORT', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const running = start(await serverEnv(t, port));
  t.after(() => running.child.kill('SIGKILL'));
  assert.equal(await running.exited, 1, running.output());
  assert.match(
    running.output(),
    new RegExp(`127\\.0\\.0\\.1:${port} is in use .*set EWA_METRICS_PORT to a free port`),
  );
});
