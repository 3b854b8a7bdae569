import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { type EwaProcess, spawnEwa, waitUntilServing } from '../helpers/ew-processes.ts';
import { freePort } from '../helpers/free-port.ts';

/** `ewa serve` at the log level a user sees, with all it printed kept: the test reads its first lines. */
function start(env: Record<string, string>): EwaProcess {
  return spawnEwa(['serve'], { EWA_LOG_LEVEL: 'info', ...env }, Number.POSITIVE_INFINITY);
}

test('npm start path: first start creates the database, seeds, serves three listeners and stops cleanly', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-serve-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const [api, auth, payments] = [await freePort(), await freePort(), await freePort()];
  const env = {
    EWA_DATA_DIR: dataDir,
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(api),
    EWA_AUTH_PORT: String(auth),
    EWA_PAYMENTS_PORT: String(payments),
    EWA_BASE_URL: `http://127.0.0.1:${api}`,
    EWA_AUTH_URL: `http://127.0.0.1:${auth}`,
    EWA_PAYMENTS_URL: `http://127.0.0.1:${payments}`,
  };
  const running = start(env);
  t.after(() => running.child.kill('SIGKILL'));
  await waitUntilServing(running, env.EWA_BASE_URL, 60_000);
  const output = running.output();
  assert.match(output, /Seeded the sandbox demo data\./);
  for (const url of [env.EWA_BASE_URL, env.EWA_AUTH_URL, env.EWA_PAYMENTS_URL])
    assert.ok(output.includes(url), url);
  assert.match(output, /Press Ctrl\+C to stop/);
  assert.ok(existsSync(join(dataDir, 'pgdata')), 'the embedded database lives in the data directory');
  if (process.platform === 'linux') {
    // Started again in place with the V8 flags; on the embedded database, its WebAssembly is never optimized.
    const args = readFileSync(`/proc/${running.child.pid}/cmdline`, 'utf8').split('\0');
    assert.ok(args.includes('--liftoff-only'), args.join(' '));
    assert.ok(args.includes('--max-semi-space-size=4'), args.join(' '));
  }
  assert.equal((await fetch(`${env.EWA_AUTH_URL}/anything`)).status, 404);

  // The README tour: a token for the demo client, then the health check with it.
  const tokenResponse = await fetch(`${env.EWA_AUTH_URL}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'health:read',
      client_id: DEMO.clients.confidential.clientId,
      client_secret: DEMO.clients.confidential.secret,
    }),
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token: token, created_at: createdAt } = (await tokenResponse.json()) as {
    access_token: string;
    created_at: number;
  };
  assert.equal(typeof createdAt, 'number');
  const health = await fetch(`${env.EWA_BASE_URL}/rest/health`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'UP', version: '0.1.0' });
  assert.equal((await fetch(`${env.EWA_PAYMENTS_URL}/anything`)).status, 404);

  // A command run in this process (not through `ewa`, which would hand it to the server) cannot open the database.
  let stderr = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      stderr += chunk;
      done();
    },
  });
  const code = await runCli(['migrate'], { env: { EWA_DATA_DIR: dataDir }, stdout: sink, stderr: sink });
  assert.equal(code, 1);
  assert.match(stderr, /is open in process \d+ .*`ewa` runs its commands through it; or stop it first/s);

  // A request in flight when SIGTERM arrives still gets its answer.
  const socket = connect(api, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let reply = '';
  socket.on('data', (chunk) => {
    reply += chunk;
  });
  const body = '{"data":{}}';
  socket.write(
    `POST /rest/nothing HTTP/1.1\r\nHost: x\r\nContent-Type: application/vnd.api+json\r\nContent-Length: ${body.length}\r\n\r\n{"da`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  running.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.end(body.slice(4));
  const exitCode = await running.exited;
  assert.match(reply, /^HTTP\/1.1 404/);
  assert.match(reply, /"code":"NOT_FOUND"/);
  assert.equal(exitCode, 0, running.output());
  assert.equal(existsSync(join(dataDir, 'owner.pid')), false, 'the lock is released');

  // Access log lines: request id, method, route, status, latency.
  const lines = running
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const access = lines.find((line) => line.msg === 'request completed' && line.route === '/rest/health');
  assert.ok(access, 'an access log line for /rest/health');
  for (const key of ['request_id', 'method', 'route', 'status', 'latency_ms']) assert.ok(key in access, key);

  // Later starts find the database and seed nothing again.
  const again = start(env);
  t.after(() => again.child.kill('SIGKILL'));
  await waitUntilServing(again, env.EWA_BASE_URL, 30_000);
  assert.doesNotMatch(again.output(), /Seeded/);
  again.child.kill('SIGINT');
  assert.equal(await again.exited, 0);
});

test('a port in use stops the start in one line before the embedded database is made', async (t) => {
  const { createServer } = await import('node:net');
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  const parent = mkdtempSync(join(tmpdir(), 'ewa-serve-'));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const dataDir = join(parent, 'data');
  const running = start({
    EWA_DATA_DIR: dataDir,
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(await freePort()),
    EWA_AUTH_PORT: String(port),
    EWA_PAYMENTS_PORT: String(await freePort()),
  });
  t.after(() => running.child.kill('SIGKILL'));
  assert.equal(await running.exited, 1, running.output());
  assert.equal(
    running.output().trim(),
    `ewa serve: 127.0.0.1:${port} is in use by another process (EADDRINUSE): stop it, or set EWA_AUTH_PORT to a free port.`,
  );
  assert.ok(!existsSync(dataDir), 'nothing was made');
});
