import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { finishRun } from '../../src/jobs/scheduled-run.ts';
import type { Metrics } from '../../src/platform/metrics.ts';
import { startMetricsServer } from '../../src/platform/metrics-server.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';
import { advanceBody, createPaidWorker, postTransfer } from '../helpers/money.ts';

const METRICS_ON = { EWA_METRICS_PORT: '0' };

/** The value of each sample of `name` in the scrape, by its label text (`listener="api",…`). */
async function samples(metrics: Metrics | undefined, name: string): Promise<Map<string, number>> {
  assert.ok(metrics, 'the app has metrics');
  const found = new Map<string, number>();
  for (const line of (await metrics.scrape()).split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match && match[1] === name) found.set(match[2] ?? '', Number(match[3]));
  }
  return found;
}

async function sample(metrics: Metrics | undefined, name: string, labels = ''): Promise<number | undefined> {
  return (await samples(metrics, name)).get(labels);
}

/** A clock the test moves; the app's money clock follows it. */
function movableClock(start: Date) {
  let current = start.getTime();
  return { now: () => new Date(current), move: (ms: number) => (current += ms) };
}

test('requests on the three listeners are counted and timed by route pattern and status, never by path', async (t) => {
  const app = await buildTestApp(t, METRICS_ON);
  const accountPath = `/rest/accounts/${randomUUID()}`;
  assert.equal((await app.api.inject({ url: accountPath })).statusCode, 401);
  assert.equal((await app.api.inject({ url: accountPath })).statusCode, 401);
  await app.auth.inject({ url: '/.well-known/openid-configuration' });
  const card = await app.payments.inject({ method: 'POST', url: '/v2/cards/generic', payload: {} });
  const api401 = 'listener="api",method="GET",route="/rest/accounts/:account_id",status="401"';
  assert.equal(await sample(app.metrics, 'ewa_http_requests_total', api401), 2);
  assert.equal(await sample(app.metrics, 'ewa_http_request_duration_seconds_count', api401), 2);
  assert.equal(
    await sample(app.metrics, 'ewa_http_request_duration_seconds_bucket', `${api401},le="+Inf"`),
    2,
  );
  const payments = `listener="payments",method="POST",route="/v2/cards/generic",status="${card.statusCode}"`;
  assert.equal(await sample(app.metrics, 'ewa_http_requests_total', payments), 1);
  const listeners = [...(await samples(app.metrics, 'ewa_http_requests_total')).keys()].map(
    (labels) => /listener="(\w+)"/.exec(labels)?.[1],
  );
  assert.deepEqual([...new Set(listeners)].sort(), ['api', 'auth', 'payments']);
  // A thousand different unknown paths: one series, not a thousand.
  const before = (await samples(app.metrics, 'ewa_http_requests_total')).size;
  for (let i = 0; i < 1000; i++) await app.payments.inject({ url: `/nowhere/${i}/${randomUUID()}` });
  const after = await samples(app.metrics, 'ewa_http_requests_total');
  assert.equal(after.size, before + 1);
  assert.equal(after.get('listener="payments",method="GET",route="(unmatched)",status="404"'), 1000);
  // The same on the REST listener, whose unknown paths answer a JSON:API 404.
  for (let i = 0; i < 50; i++) await app.api.inject({ url: `/rest/nowhere-${i}/${randomUUID()}` });
  const api404 = [...(await samples(app.metrics, 'ewa_http_requests_total'))].filter(
    ([labels]) => labels.startsWith('listener="api"') && labels.endsWith('status="404"'),
  );
  assert.deepEqual(api404, [['listener="api",method="GET",route="(unmatched)",status="404"', 50]]);
  const text = await app.metrics?.scrape();
  assert.doesNotMatch(String(text), /nowhere|\/rest\/accounts\/[0-9a-f]{8}-/);
});

test('an advance makes the outbox depth and lag rise and a pending transfer appear, until dispatched', async (t) => {
  const clock = movableClock(FIXED_NOW);
  const app = await buildTestApp(t, METRICS_ON, { now: clock.now });
  const rail = 'topic="rail.payment"';
  assert.equal(await sample(app.metrics, 'ewa_metrics_database_up'), 1);
  assert.equal(await sample(app.metrics, 'ewa_outbox_depth', rail), 0);
  assert.equal(await sample(app.metrics, 'ewa_outbox_depth', 'topic="webhook.delivery"'), 0);
  assert.equal(await sample(app.metrics, 'ewa_outbox_lag_seconds', rail), 0);
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  assert.equal((await postTransfer(app, worker.token, advanceBody(worker))).statusCode, 200);
  assert.equal(await sample(app.metrics, 'ewa_outbox_depth', rail), 1);
  assert.equal(await sample(app.metrics, 'ewa_transfers', 'status="PENDING"'), 1);
  clock.move(30_000);
  const lag = (await sample(app.metrics, 'ewa_outbox_lag_seconds', rail)) ?? 0;
  assert.ok(lag >= 29 && lag <= 40, `lag ${lag}`);
  await app.money.outbox.dispatchDue(clock.now());
  assert.equal(await sample(app.metrics, 'ewa_outbox_depth', rail), 0);
  assert.equal(await sample(app.metrics, 'ewa_outbox_lag_seconds', rail), 0);
});

test('scheduled-work lag: the time since each job last succeeded, beside its interval', async (t) => {
  const clock = movableClock(FIXED_NOW);
  const app = await buildTestApp(t, METRICS_ON, { now: clock.now });
  assert.equal(await sample(app.metrics, 'ewa_scheduled_job_interval_seconds', 'job="settle-due"'), 60);
  assert.equal(await sample(app.metrics, 'ewa_scheduled_job_interval_seconds', 'job="payroll"'), 3600);
  // Nothing is due for the ACH files on the sandbox rail: no interval to be late against.
  assert.equal(await sample(app.metrics, 'ewa_scheduled_job_interval_seconds', 'job="ach-files"'), undefined);
  assert.equal(
    await sample(app.metrics, 'ewa_scheduled_job_last_success_age_seconds', 'job="settle-due"'),
    undefined,
  );
  const ranAt = new Date(clock.now().getTime() - 90_000);
  await app.database.db
    .insertInto('scheduled_runs')
    .values({ job_name: 'settle-due', run_key: 'k', state: 'RUNNING', started_at: ranAt })
    .execute();
  assert.ok(await finishRun(app.database.db, 'settle-due', 'k', ranAt, 'DONE', undefined));
  const age = async () =>
    (await sample(app.metrics, 'ewa_scheduled_job_last_success_age_seconds', 'job="settle-due"')) ?? 0;
  const first = await age();
  assert.ok(first >= 89 && first < 100, `age ${first}`);
  clock.move(60_000);
  const later = await age();
  assert.ok(later >= first + 59, `age ${later} after ${first}`);
});

test('pool gauges show connections lent and waiting; a busy database is left out of the scrape within its time limit', async (t) => {
  const app = await buildTestApp(t, { ...METRICS_ON, EWA_HEALTH_DB_TIMEOUT_MS: '300' });
  const { db } = app.database;
  const max = (await sample(app.metrics, 'ewa_db_pool_connections_max')) ?? 0;
  assert.equal(
    max,
    app.database.kind === 'pglite'
      ? 1
      : app.config.database.kind === 'postgres'
        ? app.config.database.poolSize
        : 0,
  );
  // The sandbox clock and the revocation list poll the database now and then: a connection may be lent for a moment.
  const idle = async () =>
    (await sample(app.metrics, 'ewa_db_pool_connections_in_use')) === 0 &&
    (await sample(app.metrics, 'ewa_db_pool_waiting')) === 0;
  await eventually(idle);
  assert.ok(await idle(), 'no connection in use');
  // Every connection held by a transaction, and one more query waiting for one.
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = 0;
  const holders = Array.from({ length: max }, () =>
    db.transaction().execute(async (tx) => {
      await tx.selectFrom('scheduled_runs').select('job_name').execute();
      held += 1;
      await gate;
    }),
  );
  while (held < max) await new Promise((resolve) => setTimeout(resolve, 10));
  const waiter = db.selectFrom('scheduled_runs').select('job_name').execute();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const started = Date.now();
  assert.equal(await sample(app.metrics, 'ewa_db_pool_connections_in_use'), max);
  assert.ok(((await sample(app.metrics, 'ewa_db_pool_waiting')) ?? 0) >= 1);
  assert.equal(await sample(app.metrics, 'ewa_metrics_database_up'), 0);
  assert.equal(await sample(app.metrics, 'ewa_outbox_depth', 'topic="rail.payment"'), undefined);
  assert.ok(Date.now() - started < 4000, 'the scrapes did not wait for the database');
  release();
  await Promise.all([...holders, waiter]);
  assert.equal(await sample(app.metrics, 'ewa_metrics_database_up'), 1);
  await eventually(idle);
  assert.ok(await idle(), 'every connection back in the pool');
});

test('the metrics are off by default, never on the public listeners, and their port serves GET /metrics alone', async (t) => {
  assert.equal(loadConfig({}).metrics, undefined);
  const off = await buildTestApp(t);
  assert.equal(off.metrics, undefined);
  const app: TestApp = await buildTestApp(t, { ...METRICS_ON, EWA_HEALTH_DB_TIMEOUT_MS: '2000' });
  assert.deepEqual(app.config.metrics, { port: 0, host: '127.0.0.1' });
  for (const listener of [app.api, app.auth, app.payments]) {
    const response = await listener.inject({ url: '/metrics' });
    assert.equal(response.statusCode, 404);
    assert.doesNotMatch(response.body, /ewa_http_requests_total/);
  }
  assert.ok(app.metrics && app.config.metrics);
  const server = await startMetricsServer(app.metrics, app.config.metrics);
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.port}`;
  const scraped = await fetch(`${base}/metrics`);
  assert.equal(scraped.status, 200);
  assert.match(String(scraped.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
  const body = await scraped.text();
  for (const name of [
    'ewa_http_requests_total',
    'ewa_db_pool_waiting',
    'ewa_outbox_depth',
    'ewa_scheduled_job_interval_seconds',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_p99_seconds',
  ])
    assert.match(body, new RegExp(`^# TYPE ${name} `, 'm'));
  for (const [method, path] of [
    ['GET', '/'],
    ['GET', '/metrics/x'],
    ['GET', '/rest/health'],
    ['POST', '/metrics'],
  ] as const) {
    const response = await fetch(`${base}${path}`, { method });
    assert.equal(response.status, 404, `${method} ${path}`);
    await response.text();
  }
});

test('EWA_METRICS_PORT and EWA_METRICS_HOST are checked, naming the variable', () => {
  const refused = (env: Record<string, string>, pattern: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
    );
  refused({ EWA_METRICS_PORT: 'nine' }, /^EWA_METRICS_PORT must be a port number .*\(got "nine"\)/);
  refused({ EWA_METRICS_PORT: '65536' }, /^EWA_METRICS_PORT must be a port number/);
  refused({ EWA_METRICS_PORT: '-1' }, /^EWA_METRICS_PORT must be a port number/);
  refused({ EWA_METRICS_PORT: '8080' }, /^EWA_METRICS_PORT \(8080\) is the port of EWA_API_PORT/);
  refused({ EWA_METRICS_HOST: '0.0.0.0' }, /^EWA_METRICS_HOST is set but EWA_METRICS_PORT is not/);
  refused(
    { EWA_METRICS_PORT: '9464', EWA_METRICS_HOST: 'not a host' },
    /^EWA_METRICS_HOST must be an IP address/,
  );
  assert.deepEqual(loadConfig({ EWA_METRICS_PORT: '9464', EWA_METRICS_HOST: '0.0.0.0' }).metrics, {
    port: 9464,
    host: '0.0.0.0',
  });
});
