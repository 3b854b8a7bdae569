import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type TestContext, test } from 'node:test';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { createClient } from '../../src/oauth/clients.ts';
import { eventually } from '../helpers/eventually.ts';
import { type ApiProcess, spawnEwa, startApiProcess } from '../helpers/ew-processes.ts';
import { freePort } from '../helpers/free-port.ts';
import { authorizationUrl, formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { redisAnswers, TEST_REDIS_URL } from '../helpers/redis.ts';
import { onPostgres, openTestDatabase } from '../helpers/test-database.ts';

// `ewa serve --workers 2` on PostgreSQL: one primary, two workers sharing the ports. Every request below opens a
// connection of its own, so that the primary hands them round the workers, and a test can tell which worker
// answered from the `pid` of the access log's lines.

interface Answer {
  status: number;
  body: string;
}

/** One request on a connection of its own (no keep-alive): the primary gives each new connection to a worker. */
function freshRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    sent.on('error', reject);
    // A request that hangs is a failure too, not a test that never ends.
    sent.setTimeout(10_000, () => sent.destroy(new Error(`no answer within 10 s: ${url}`)));
    sent.end(options.body);
  });
}

/** The pids of the workers that logged each request, as they are logged (the access log's `pid`). */
function answeringPids(server: ApiProcess): { seen: Map<string, Set<number>> } {
  const seen = new Map<string, Set<number>>();
  createInterface({ input: server.child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    try {
      const entry = JSON.parse(line) as { pid?: number; path?: string };
      const { path } = entry;
      if (entry.pid === undefined || path === undefined) return;
      if (!seen.has(path)) seen.set(path, new Set());
      seen.get(path)!.add(entry.pid);
    } catch {}
  });
  return { seen };
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number)
      .sort();
  } catch {
    return []; // ps exits 1 when there are none
  }
}

const tally = (statuses: number[]) =>
  JSON.stringify(
    Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])),
  );

const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

test('ewa serve --workers 2 on PostgreSQL: both serve, limits, revocations and the sign-in throttle are shared, a dead worker is replaced, SIGHUP restarts with no failed request, SIGTERM drains', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (the embedded database allows one process)');
    return;
  }
  const withRedis = await redisAnswers();
  const database = await openTestDatabase(t);
  const { client: signInClient } = await createClient(
    database.db,
    {
      name: 'Sign-in partner',
      isPublic: false,
      redirectUris: [REDIRECT],
      scopes: ['openid', 'user:read'],
      organizationIds: [],
    },
    { sandbox: true },
  );
  const { client: healthClient, secret } = await createClient(
    database.db,
    {
      name: 'Health partner',
      isPublic: false,
      redirectUris: [REDIRECT],
      scopes: ['health:read'],
      organizationIds: [],
    },
    { sandbox: true },
  );
  const email = `${randomUUID()}@people.example`;
  await database.db
    .insertInto('people')
    .values({
      id: randomUUID(),
      email,
      first_name: 'Test',
      last_name: 'Person',
      password_hash: await hashPassword(PASSWORD),
    })
    .execute();
  const metricsPort = await freePort();
  const server = await startApiProcess({
    ...database.env,
    EWA_WORKERS: '2',
    EWA_LOG_LEVEL: 'info',
    EWA_TRUST_PROXY: 'true',
    EWA_REVOCATION_POLL_MS: '100',
    EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '4',
    EWA_DRAIN_DELAY_MS: '1500',
    EWA_METRICS_PORT: String(metricsPort),
    ...(withRedis ? { REDIS_URL: TEST_REDIS_URL } : {}),
  });
  t.after(() => server.kill());
  const primaryPid = server.child.pid!;
  const { seen } = answeringPids(server);
  const metrics = async () => (await freshRequest(`http://127.0.0.1:${metricsPort}/metrics`)).body;
  const metricValue = async (name: string) =>
    Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await metrics())?.[1]);
  // Up once the first worker answers; the metrics port opens when both are.
  await eventually(async () => (await metricValue('ewa_workers_ready').catch(() => 0)) === 2, 30_000);
  let workers = childPids(primaryPid);
  assert.equal(workers.length, 2, server.output());

  await t.test('both workers answer, and the primary adds their metrics together', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => freshRequest(`${server.apiUrl}/livez`)),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(20).fill(200),
    );
    await eventually(async () => (seen.get('/livez')?.size ?? 0) === 2);
    assert.deepEqual([...(seen.get('/livez') ?? [])].sort(), workers, 'each worker answered some');
    assert.equal(await metricValue('ewa_workers_ready'), 2);
    assert.match(
      await metrics(),
      /ewa_http_requests_total\{listener="api",method="GET",route="\/livez",status="200"\} (2\d|[3-9]\d)/,
    );
  });

  await t.test(
    'the primary, started again in place, and each worker run with the heap flags (EWA_V8_*)',
    () => {
      for (const pid of [primaryPid, ...workers]) {
        const args = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
        assert.match(args, /--max-semi-space-size=4 --heap-growing-percent=20 /, `process ${pid}: ${args}`);
      }
    },
  );

  await t.test('a card token limit per address is counted once across the workers (Redis)', async (st) => {
    if (!withRedis) {
      st.skip(`needs Redis at ${TEST_REDIS_URL} (set EWA_TEST_REDIS_URL)`);
      return;
    }
    // An address of this run alone, so that no other run's count in the shared Redis meets it.
    const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const statuses = [];
    for (let i = 0; i < 12; i++) {
      const answer = await freshRequest(`${server.apiUrl}/cards/generic`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: '{}',
      });
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses.slice(0, 4), [400, 400, 400, 400], tally(statuses));
    assert.deepEqual(statuses.slice(4), Array(8).fill(429), tally(statuses));
    assert.equal(seen.get('/cards/generic')?.size, 2, 'both workers counted');
  });

  await t.test('a token revoked through one worker is refused by every worker', async () => {
    const basic = `Basic ${Buffer.from(`${healthClient.clientId}:${secret}`).toString('base64')}`;
    const form = { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' };
    const issued = await freshRequest(`${server.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: form,
      body: 'grant_type=client_credentials&scope=health%3Aread',
    });
    assert.equal(issued.status, 200, issued.body);
    const token = (JSON.parse(issued.body) as { access_token: string }).access_token;
    const health = () =>
      freshRequest(`${server.apiUrl}/rest/health`, { headers: { authorization: `Bearer ${token}` } });
    const before = await Promise.all(Array.from({ length: 10 }, health));
    assert.deepEqual(
      before.map((answer) => answer.status),
      Array(10).fill(200),
    );
    const revoked = await freshRequest(`${server.authUrl}/oauth2/revoke`, {
      method: 'POST',
      headers: form,
      body: `token=${token}`,
    });
    assert.equal(revoked.status, 200, revoked.body);
    // One poll of EWA_REVOCATION_POLL_MS (100 ms here) and a margin.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const after = await Promise.all(Array.from({ length: 10 }, health));
    assert.deepEqual(
      after.map((answer) => answer.status),
      Array(10).fill(401),
    );
    assert.equal(seen.get('/rest/health')?.size, 2, 'both workers refused it');
  });

  await t.test(
    'the sign-in throttle is one across the workers: 30 wrong passwords at once, 5 checked',
    async () => {
      // Thirty posts at once open as many connections, which the primary hands round the two workers.
      const browser = new HttpBrowser(server.authUrl);
      const page = await browser.follow(authorizationUrl(server.authUrl, signInClient.clientId, REDIRECT));
      const form = { csrf: hiddenField(page.body, 'csrf'), email, password: 'wrong password' };
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          browser.follow(formAction(page.body), { form, headers: { 'x-forwarded-for': '192.0.2.77' } }),
        ),
      );
      const statuses = answers.map((answer) => answer.response.status);
      assert.equal(statuses.filter((status) => status === 401).length, 5, tally(statuses));
      assert.equal(statuses.filter((status) => status === 429).length, 25, tally(statuses));
    },
  );

  await t.test(
    "a worker killed with SIGKILL is replaced, and the host's counters do not step down",
    async () => {
      const livez = async () =>
        Number(
          /ewa_http_requests_total\{listener="api",method="GET",route="\/livez",status="200"\} (\d+)/.exec(
            await metrics(),
          )?.[1],
        );
      const counted = await livez();
      assert.ok(counted >= 20, String(counted));
      const [victim] = workers;
      process.kill(victim!, 'SIGKILL');
      await eventually(async () => {
        const now = childPids(primaryPid);
        return now.length === 2 && !now.includes(victim!) && (await metricValue('ewa_workers_ready')) === 2;
      }, 20_000);
      workers = childPids(primaryPid);
      assert.equal(workers.length, 2);
      assert.ok(!workers.includes(victim!));
      assert.match(
        server.output(),
        new RegExp(`Worker ${victim} stopped unexpectedly \\(SIGKILL\\): starting another in`),
      );
      assert.match(await metrics(), /ewa_worker_restarts_total\{reason="died"\} 1/);
      // The dead worker's counts stay in the host's: a counter that fell would read to Prometheus as a reset, and
      // the whole remaining total as new requests.
      assert.ok((await livez()) >= counted, `${await livez()} after ${counted}`);
    },
  );

  await t.test(
    'SIGHUP restarts the workers one at a time under steady load, with no failed request',
    async () => {
      const failures: string[] = [];
      let answered = 0;
      let loading = true;
      // Half the load on connections kept alive, as a load balancer's are: a worker that stops must not cut one
      // under a request (it answers with Connection: close before its listeners close).
      const keptAlive = new Agent({ keepAlive: true, maxSockets: 4 });
      t.after(() => keptAlive.destroy());
      const load = async (index: number) => {
        while (loading) {
          try {
            const answer = await freshRequest(`${server.apiUrl}/rest/health`, {
              ...(index % 2 === 0 ? { agent: keptAlive } : {}),
            });
            // No token: 401 is the answer of a healthy worker; anything else failed.
            if (answer.status === 401) answered += 1;
            else failures.push(`${answer.status} ${answer.body.slice(0, 200)}`);
          } catch (error) {
            failures.push(String(error));
          }
        }
      };
      const loops = Array.from({ length: 8 }, (_, index) => load(index));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const old = workers;
      server.child.kill('SIGHUP');
      await eventually(async () => server.output().includes('SIGHUP: every worker was restarted.'), 60_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      loading = false;
      await Promise.all(loops);
      t.diagnostic(`${answered} requests answered during the rolling restart`);
      assert.deepEqual(failures, []);
      assert.ok(answered > 50, `only ${answered} requests were answered`);
      workers = childPids(primaryPid);
      assert.equal(workers.length, 2);
      assert.ok(
        workers.every((pid) => !old.includes(pid)),
        'both workers are new',
      );
    },
  );

  await t.test(
    'SIGTERM: /readyz answers 503 while draining, /livez 200, then the primary exits 0',
    async () => {
      assert.equal((await freshRequest(`${server.apiUrl}/readyz`)).status, 200);
      server.child.kill('SIGTERM');
      await eventually(async () => (await freshRequest(`${server.apiUrl}/readyz`)).status === 503, 1500);
      const draining = await freshRequest(`${server.apiUrl}/readyz`);
      assert.deepEqual([draining.status, JSON.parse(draining.body)], [503, { status: 'DRAINING' }]);
      assert.equal((await freshRequest(`${server.apiUrl}/livez`)).status, 200);
      assert.equal(await server.exited, 0, server.output());
      assert.deepEqual(childPids(primaryPid), []);
    },
  );
});

test('/readyz answers 503 while PostgreSQL is unreachable, and 200 again when it is back', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL');
    return;
  }
  const { createServer, connect } = await import('node:net');
  const database = await openTestDatabase(t);
  const target = new URL(database.env.DATABASE_URL!);
  // A TCP proxy in front of PostgreSQL: closing it takes the database away from the server, and only from it.
  const sockets = new Set<import('node:net').Socket>();
  let open = true;
  const proxy = createServer((incoming) => {
    if (!open) {
      incoming.destroy();
      return;
    }
    const outgoing = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [incoming, outgoing]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    incoming.pipe(outgoing).pipe(incoming);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => proxy.close());
  const proxied = new URL(target);
  proxied.host = `127.0.0.1:${(proxy.address() as import('node:net').AddressInfo).port}`;
  const server = await startApiProcess({
    ...database.env,
    DATABASE_URL: proxied.toString(),
    EWA_HEALTH_DB_TIMEOUT_MS: '300',
    EWA_DB_CONNECT_TIMEOUT_MS: '300',
  });
  t.after(() => server.kill());
  const ready = async () => (await freshRequest(`${server.apiUrl}/readyz`)).status;
  assert.equal(await ready(), 200);
  open = false;
  for (const socket of sockets) socket.destroy();
  await eventually(async () => (await ready()) === 503, 10_000);
  const away = await freshRequest(`${server.apiUrl}/readyz`);
  assert.deepEqual([away.status, JSON.parse(away.body)], [503, { status: 'DATABASE_UNAVAILABLE' }]);
  assert.equal((await freshRequest(`${server.apiUrl}/livez`)).status, 200, 'alive all the same');
  open = true;
  await eventually(async () => (await ready()) === 200, 10_000);
  assert.equal(await ready(), 200);
  assert.equal(await server.stop(), 0, server.output());
});

test('the embedded database runs one worker: --workers 2 or EWA_WORKERS=2 stop with one line', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-workers-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  for (const [args, env, setting] of [
    [['serve', '--workers', '2'], {}, '--workers'],
    [['serve'], { EWA_WORKERS: '2' }, 'EWA_WORKERS'],
  ] as const) {
    const running = spawnEwa([...args], { EWA_DATA_DIR: dataDir, ...env });
    assert.equal(await running.exited, 1, running.output());
    assert.equal(
      running.output(),
      `ewa serve: ${setting}=2 needs DATABASE_URL: the embedded database is opened by one process only, so it runs one worker.\n`,
    );
  }
});

test('one process (the embedded database, or EWA_WORKERS=1): /readyz 503 for EWA_DRAIN_DELAY_MS after SIGTERM, then exit 0', async (t: TestContext) => {
  let database: Record<string, string>;
  if (onPostgres) database = (await openTestDatabase(t)).env;
  else {
    const dataDir = mkdtempSync(join(tmpdir(), 'ewa-drain-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    database = { EWA_DATA_DIR: dataDir };
  }
  const server = await startApiProcess({ ...database, EWA_DRAIN_DELAY_MS: '1500' });
  t.after(() => server.kill());
  for (const url of [server.apiUrl, server.authUrl]) {
    const ready = await freshRequest(`${url}/readyz`);
    assert.deepEqual([ready.status, JSON.parse(ready.body)], [200, { status: 'READY' }], url);
  }
  server.child.kill('SIGTERM');
  await eventually(async () => (await freshRequest(`${server.apiUrl}/readyz`)).status === 503, 1500);
  assert.equal((await freshRequest(`${server.apiUrl}/livez`)).status, 200, 'still serving while it drains');
  assert.equal(await server.exited, 0, server.output());
});

test('a worker that cannot start stops the whole start with its message, exit 1, rather than being restarted', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL');
    return;
  }
  const { createServer } = await import('node:net');
  const database = await openTestDatabase(t);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const apiPort = (taken.address() as import('node:net').AddressInfo).port;
  const running = spawnEwa(['serve', '--workers', '2'], {
    ...database.env,
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(apiPort),
    EWA_AUTH_PORT: String(await freePort()),
    EWA_PAYMENTS_PORT: String(await freePort()),
    EWA_SCHEDULER: 'false',
  });
  t.after(() => running.kill());
  assert.equal(await running.exited, 1, running.output());
  assert.match(
    running.output(),
    new RegExp(`127\\.0\\.0\\.1:${apiPort} is in use by another process \\(EADDRINUSE\\)`),
  );
  assert.match(running.output(), /A worker did not start \(its message is above\): stopping\./);
});

test('SIGTERM while a rolling restart starts a worker: that worker is drained once it is ready, and the primary exits 0', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL');
    return;
  }
  const database = await openTestDatabase(t);
  const server = await startApiProcess({
    ...database.env,
    EWA_WORKERS: '2',
    EWA_SHUTDOWN_TIMEOUT_MS: '3000',
  });
  t.after(() => server.kill());
  const primaryPid = server.child.pid!;
  await eventually(async () => childPids(primaryPid).length === 2, 30_000);
  server.child.kill('SIGHUP');
  // The new worker is forked at once and takes a second or more to be ready: stop while it starts.
  await eventually(async () => childPids(primaryPid).length === 3, 10_000);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.output());
  assert.doesNotMatch(server.output(), /did not start/);
  assert.deepEqual(childPids(primaryPid), []);
});

test('a worker that stops answering its primary is killed after EWA_WORKER_STALL_TIMEOUT_MS and replaced; the other keeps serving', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL');
    return;
  }
  const database = await openTestDatabase(t);
  const metricsPort = await freePort();
  const server = await startApiProcess({
    ...database.env,
    EWA_WORKERS: '2',
    EWA_WORKER_STALL_TIMEOUT_MS: '2000',
    EWA_METRICS_PORT: String(metricsPort),
  });
  t.after(() => server.kill());
  const primaryPid = server.child.pid!;
  await eventually(async () => childPids(primaryPid).length === 2, 30_000);
  // Both answer their pings meanwhile: neither is taken for stuck while it serves.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const [victim, survivor] = childPids(primaryPid);
  assert.equal(childPids(primaryPid).length, 2, server.output());
  // The primary itself held up past the limit: its workers' answers wait in its channel, and nobody is killed.
  process.kill(primaryPid, 'SIGSTOP');
  await new Promise((resolve) => setTimeout(resolve, 3000));
  process.kill(primaryPid, 'SIGCONT');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.deepEqual(childPids(primaryPid), [victim, survivor]);
  assert.doesNotMatch(server.output(), /has not answered/);
  // Stopped, as a worker whose event loop never comes back is: the primary would hand it every other connection.
  process.kill(victim!, 'SIGSTOP');
  await eventually(async () => {
    const now = childPids(primaryPid);
    return now.length === 2 && !now.includes(victim!);
  }, 20_000);
  assert.ok(childPids(primaryPid).includes(survivor!), 'the worker that answered was left alone');
  assert.match(server.output(), new RegExp(`Worker ${victim} has not answered for \\d+ s`));
  assert.match(server.output(), new RegExp(`Worker ${victim} stopped unexpectedly \\(SIGKILL\\)`));
  await eventually(async () => (await freshRequest(`${server.apiUrl}/readyz`)).status === 200, 20_000);
  const statuses = [];
  for (let i = 0; i < 10; i++) statuses.push((await freshRequest(`${server.apiUrl}/livez`)).status);
  assert.deepEqual(statuses, Array(10).fill(200));
  const metrics = (await freshRequest(`http://127.0.0.1:${metricsPort}/metrics`)).body;
  assert.match(metrics, /^ewa_worker_restarts_total\{reason="stalled"\} 1$/m);
  assert.ok(Number(/^ewa_primary_resident_memory_bytes (\d+)$/m.exec(metrics)?.[1]) > 10_000_000, metrics);
});
