import assert from 'node:assert/strict';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { toAppError } from '../../src/errors/to-app-error.ts';
import { CookieJar } from '../fuzz/auth-world.ts';
import { buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker, workerToken } from '../helpers/factories.ts';
import { advanceBody, createPaidWorkers, postTransfer } from '../helpers/money.ts';
import { onPostgres, POSTGRES_URL, testFileDatabase } from '../helpers/test-database.ts';
import { clientCredentialsRequest, clientToken, createTestClient } from '../helpers/tokens.ts';

const ON_PGLITE =
  'PGlite is one session in this process: no other session can hold a lock, no statement can be cancelled by a ' +
  'timer, and there is no network; a held lock there is the one connection held, covered by the pool test';

/** The test app on a database handle of its own, opened with these settings (its session limits among them). */
async function appWith(t: TestContext, env: Record<string, string>, databaseUrl?: string): Promise<TestApp> {
  // On PostgreSQL, the file's schema through a pool of its own; PGlite in memory is a database of its own anyway.
  const baseEnv = onPostgres ? (await testFileDatabase()).env : { EWA_DATA_DIR: ':memory:' };
  const sharedEnv = databaseUrl ? { ...baseEnv, DATABASE_URL: databaseUrl } : baseEnv;
  const config = loadConfig({ ...sharedEnv, ...env });
  const database = await openDatabase(config.database);
  t.after(() => database.close());
  await migrate(database.db); // on PostgreSQL the schema is migrated already
  return buildTestAppOn(t, { ...database, env: sharedEnv }, env);
}

/** A person, and a request of theirs that reads the database: GET /rest/people/{id}. */
async function personRead(app: TestApp) {
  const worker = await createWorker(app, await createOrganization(app));
  const token = await workerToken(app, worker.personId);
  return () =>
    app.api.inject({ url: `/rest/people/${worker.personId}`, headers: { authorization: `Bearer ${token}` } });
}

function assertServiceUnavailable(response: Awaited<ReturnType<TestApp['api']['inject']>>) {
  assert.equal(response.statusCode, 503, response.body);
  assert.match(String(response.headers['retry-after']), /^[1-9]\d*$/);
  assert.match(String(response.headers['content-type']), /^application\/vnd\.api\+json/);
  const [error] = response.json().errors;
  assert.equal(error.status, '503');
  assert.equal(error.code, 'SERVICE_UNAVAILABLE');
  assert.equal(error.meta.request_id, response.headers['x-request-id']);
}

/** A session of its own on the test schema, for holding locks the server must wait for. */
async function sideSession(t: TestContext, app: TestApp) {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  t.after(() => client.end());
  const schema = app.config.database.kind === 'postgres' ? app.config.database.schema : undefined;
  if (schema) await client.query(`set search_path to ${schema}`);
  return client;
}

/**
 * Transactions holding every connection of the app's pool (PGlite has one) until the returned function is called
 * (15 s at most), so that a request waits for one until its connect timeout.
 */
async function holdEveryConnection(app: TestApp): Promise<() => Promise<void>> {
  const connections = app.config.database.kind === 'postgres' ? app.config.database.poolSize : 1;
  // Every connection opened first, retried: on a busy host opening one can take longer than a short wait, which
  // would fail a holder below instead of the request. Opened ones stay in the pool, idle, for the holders.
  for (let attempt = 1; ; attempt++) {
    try {
      await Promise.all(
        Array.from({ length: connections }, () =>
          // Each holds its connection a moment, so that each opens one of its own.
          app.database.db
            .transaction()
            .execute((tx) => sql`select ${sql.raw(connections > 1 ? 'pg_sleep(0.2)' : '1')}`.execute(tx)),
        ),
      );
      break;
    } catch (error) {
      if (attempt === 20) throw error;
    }
  }
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = Promise.all(
    Array.from({ length: connections }, () =>
      app.database.db.transaction().execute(async (tx) => {
        await sql`select 1`.execute(tx);
        await released;
      }),
    ),
  );
  // Let every holder take its connection before a request asks for one.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const fallback = setTimeout(release, 15_000);
  return async () => {
    clearTimeout(fallback);
    release();
    await holding;
  };
}

test('a pool whose every connection stays in use answers 503 with Retry-After once the wait for one times out', async (t) => {
  const app = await appWith(t, { EWA_DB_CONNECT_TIMEOUT_MS: '300' });
  const read = await personRead(app);
  assert.equal((await read()).statusCode, 200);
  // Transactions holding every connection (PGlite has one) for longer than the wait for one.
  const release = await holdEveryConnection(app);
  let answered: Awaited<ReturnType<typeof read>>;
  try {
    answered = await read();
  } finally {
    await release();
  }
  assertServiceUnavailable(answered);
  assert.equal((await read()).statusCode, 200, 'answers again once a connection is free');
  // Expected while it lasts, and met by every request: a warning with its reason, never an error line.
  const failed = app.logs.filter((line) => line.msg === 'request failed');
  assert.ok(failed.length > 0);
  for (const line of failed) {
    assert.equal(line.level, 40, JSON.stringify(line));
    assert.match(String(line.reason), /no database connection|stayed busy/);
    assert.equal(line.err, undefined);
  }
});

test('an advance that can get no connection answers 503 after one wait for one, alone or batched', async (t) => {
  // One advance transaction at a time: the first runs alone, the others wait for it and then share one batch.
  const app = await appWith(t, {
    EWA_DB_CONNECT_TIMEOUT_MS: '1000',
    EWA_TRANSFERS_IN_FLIGHT_MAX: '1',
    EWA_LOG_LEVEL: 'debug',
  });
  const workers = await createPaidWorkers(app, 4, new Date());
  const release = await holdEveryConnection(app);
  const started = performance.now();
  let refused: Awaited<ReturnType<typeof postTransfer>>[];
  try {
    refused = await Promise.all(
      workers.map((worker) => postTransfer(app, worker.token, advanceBody(worker), crypto.randomUUID())),
    );
  } finally {
    await release();
  }
  const elapsedMs = performance.now() - started;
  for (const response of refused) assertServiceUnavailable(response);
  // The lone advance waits once for a connection, the batch once more; no request of either waits again to look
  // for an answer or to run alone (which took five waits).
  const batches = app.logs.flatMap((line) => (line.advanceBatch ? [line.advanceBatch] : []));
  assert.deepEqual(
    batches.map((batch) => (batch as { outcome: string }).outcome),
    ['connection-lost'],
  );
  assert.ok(elapsedMs < 3500, `answered after ${Math.round(elapsedMs)} ms, two waits of 1,000 ms`);
});

test('a table lock held past the lock timeout answers 503 with Retry-After while the lock is still held', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  const app = await appWith(t, { EWA_DB_LOCK_TIMEOUT_MS: '300' });
  const read = await personRead(app);
  const locker = await sideSession(t, app);
  await locker.query('begin');
  await locker.query('lock table people in access exclusive mode');
  let lockHeld = true;
  // Without a lock timeout the request would wait for the lock: end it in any case, late, so the test ends.
  const fallback = setTimeout(() => {
    lockHeld = false;
    void locker.query('rollback');
  }, 15_000);
  const response = await read();
  const answeredWhileHeld = lockHeld;
  clearTimeout(fallback);
  if (lockHeld) await locker.query('rollback');
  assert.ok(answeredWhileHeld, 'the request waited until the lock was released');
  assertServiceUnavailable(response);
  assert.equal((await read()).statusCode, 200);
});

test('a statement that runs past statement_timeout is cancelled, and that is 503; sessions carry the limits', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  const app = await appWith(t, {
    EWA_DB_STATEMENT_TIMEOUT_MS: '200',
    EWA_DB_LOCK_TIMEOUT_MS: '150',
    EWA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '5000',
  });
  const settings = await sql<{
    statement_timeout: string;
    lock_timeout: string;
    idle: string;
  }>`select current_setting('statement_timeout') as statement_timeout,
      current_setting('lock_timeout') as lock_timeout,
      current_setting('idle_in_transaction_session_timeout') as idle`.execute(app.database.db);
  assert.deepEqual(settings.rows[0], { statement_timeout: '200ms', lock_timeout: '150ms', idle: '5s' });
  const failure = await sql`select pg_sleep(2)`.execute(app.database.db).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.equal((failure as { code?: string }).code, '57014');
  assert.equal(toAppError(failure).code, 'SERVICE_UNAVAILABLE');
  assert.equal(toAppError(failure).headers?.['Retry-After'], '5');
});

/** A TCP relay to PostgreSQL that can be cut: the database becomes unreachable, as when its host goes away. */
async function cuttableRelay(t: TestContext): Promise<{ url: string; cut: () => Promise<void> }> {
  const target = new URL(POSTGRES_URL!);
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const address = relay.address();
  if (!address || typeof address === 'string') throw new Error('the relay has no port');
  const url = new URL(POSTGRES_URL!);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  let open = true;
  const cut = async () => {
    if (!open) return;
    open = false;
    const closed = new Promise<void>((resolve) => relay.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  t.after(cut);
  return { url: url.toString(), cut };
}

test('a database that cannot be reached answers 503 with Retry-After; health its 500', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  const relay = await cuttableRelay(t);
  const app = await appWith(t, { EWA_DB_CONNECT_TIMEOUT_MS: '1000' }, relay.url);
  const read = await personRead(app);
  const health = { authorization: `Bearer ${await clientToken(app, ['health:read'])}` };
  assert.equal((await read()).statusCode, 200);
  await relay.cut();
  assertServiceUnavailable(await read());
  const down = await app.api.inject({ url: '/rest/health', headers: health });
  assert.equal(down.statusCode, 500, down.body);
  assert.equal(down.json().errors[0].code, 'UNEXPECTED_ERROR');
});

test('the authorization server answers 503 temporarily_unavailable with Retry-After when the database cannot be reached', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  const relay = await cuttableRelay(t);
  const app = await appWith(t, { EWA_DB_CONNECT_TIMEOUT_MS: '1000' }, relay.url);
  // Clients are cached once read and client-credentials tokens are not stored: the second client is read only
  // after the cut, so its request needs the database.
  const [before, after] = [await createTestClient(app), await createTestClient(app)];
  const tokenRequest = (client: { clientId: string; secret: string }) =>
    clientCredentialsRequest(app, client, { scope: 'health:read' });
  assert.equal((await tokenRequest(before)).statusCode, 200);
  await relay.cut();
  const refused = await tokenRequest(after);
  assert.equal(refused.statusCode, 503, refused.body);
  assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(refused.json().error, 'temporarily_unavailable');
  assert.equal(refused.json().error_code, 'temporarily_unavailable');
  assert.doesNotMatch(refused.body, /ECONN|timeout|postgres|sql/i, 'nothing internal is shown');
});

test('a sign-in page whose interaction cannot be read for want of the database is 503 with Retry-After, not an expired sign-in', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  const relay = await cuttableRelay(t);
  const app = await appWith(t, { EWA_DB_CONNECT_TIMEOUT_MS: '1000' }, relay.url);
  const redirect = 'https://partner.example/callback';
  const client = await createTestClient(app, { redirectUris: [redirect] });
  const jar = new CookieJar();
  const started = await app.auth.inject({
    url: `/oauth2/auth?${new URLSearchParams({
      client_id: client.clientId,
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'openid user:read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    })}`,
  });
  jar.store(started);
  const uid = /\/interaction\/([^/?]+)/.exec(String(started.headers.location))?.[1];
  assert.ok(uid, `no interaction: ${started.statusCode} ${started.headers.location}`);
  const page = () =>
    app.auth.inject({ url: `/interaction/${uid}`, headers: { cookie: jar.header(), accept: 'text/html' } });
  assert.equal((await page()).statusCode, 200);
  await relay.cut();
  const refused = await page();
  assert.equal(refused.statusCode, 503, refused.body);
  assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
  assert.match(String(refused.headers['content-type']), /^text\/html/);
  assert.match(refused.body, /temporarily_unavailable/);
  assert.doesNotMatch(refused.body, /ECONN|postgres|sql/i, 'nothing internal is shown');
});

test('advances batched together roll back as a whole when a lock times out: nothing is left, and retries succeed', {
  skip: onPostgres ? false : ON_PGLITE,
}, async (t) => {
  // One advance transaction at a time: the first runs alone, the others wait and then share one batch.
  const app = await appWith(t, {
    EWA_DB_LOCK_TIMEOUT_MS: '300',
    EWA_TRANSFERS_IN_FLIGHT_MAX: '1',
    EWA_LOG_LEVEL: 'debug',
  });
  const workers = await createPaidWorkers(app, 6, new Date());
  const keys = workers.map(() => crypto.randomUUID());
  const send = () =>
    Promise.all(workers.map((worker, i) => postTransfer(app, worker.token, advanceBody(worker), keys[i])));
  const footprint = async () => {
    const { db } = app.database;
    const people = workers.map((worker) => worker.personId);
    const transfers = await db
      .selectFrom('transfers')
      .select('id')
      .where('person_id', 'in', people)
      .execute();
    const answers = await db.selectFrom('idempotency_keys').select('key').where('key', 'in', keys).execute();
    const debited = await db
      .selectFrom('paychecks')
      .select((eb) => eb.fn.sum<number>('total_debited_minor').as('sum'))
      .where(
        'job_id',
        'in',
        workers.map((worker) => worker.jobId),
      )
      .executeTakeFirstOrThrow();
    const entries = await db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return {
      transfers: transfers.length,
      answers: answers.length,
      debited: Number(debited.sum ?? 0),
      entries: Number(entries.n),
    };
  };
  const before = await footprint();

  // The advances read freely but cannot write their ledger entries (the last thing their one write statement does).
  const locker = await sideSession(t, app);
  await locker.query('begin');
  await locker.query('lock table ledger_entries in exclusive mode');
  const fallback = setTimeout(() => void locker.query('rollback'), 20_000);
  let refused: Awaited<ReturnType<typeof send>>;
  try {
    refused = await send();
  } finally {
    clearTimeout(fallback);
    await locker.query('rollback').catch(() => {});
  }
  for (const response of refused) assertServiceUnavailable(response);
  const batches = app.logs.flatMap((line) => (line.advanceBatch ? [line.advanceBatch] : []));
  assert.ok(
    batches.some((batch) => (batch as { outcome: string }).outcome === 'ran-alone'),
    'a batch was tried and rolled back',
  );
  assert.deepEqual(await footprint(), before, 'nothing of the refused advances is left');

  const retried = await send();
  for (const response of retried) assert.equal(response.statusCode, 200, response.body);
  const after = await footprint();
  assert.equal(after.transfers, before.transfers + workers.length, 'one advance per key');
  assert.equal(after.answers, workers.length);
});
