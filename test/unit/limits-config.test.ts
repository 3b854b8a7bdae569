import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { sessionLimitOptions } from '../../src/db/session-limits.ts';
import { listenerLimits } from '../../src/platform/listener-limits.ts';

const POSTGRES = { DATABASE_URL: 'postgres://u@db:5432/ewa' };

test('listener and database limits have defaults, and every limit can be set', () => {
  const defaults = loadConfig(POSTGRES);
  assert.deepEqual(defaults.http, {
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 10_000,
    connectionTimeoutMs: 60_000,
    keepAliveTimeoutMs: 72_000,
  });
  assert.deepEqual(defaults.database.limits, {
    statementTimeoutMs: 10_000,
    lockTimeoutMs: 3000,
    idleInTransactionTimeoutMs: 30_000,
    connectTimeoutMs: 5000,
  });
  assert.deepEqual(defaults.loadShedding, { eventLoopDelayMs: 1000, sampleIntervalMs: 1000 });
  // The embedded database runs in the event loop's thread: no shedding unless asked for.
  assert.equal(loadConfig({}).loadShedding.eventLoopDelayMs, 0);
  const set = loadConfig({
    ...POSTGRES,
    EWA_REQUEST_TIMEOUT_MS: '5000',
    EWA_HEADERS_TIMEOUT_MS: '2000',
    EWA_CONNECTION_TIMEOUT_MS: '9000',
    EWA_KEEP_ALIVE_TIMEOUT_MS: '4000',
    EWA_DB_STATEMENT_TIMEOUT_MS: '1500',
    EWA_DB_LOCK_TIMEOUT_MS: '0',
    EWA_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '7000',
    EWA_DB_CONNECT_TIMEOUT_MS: '800',
    EWA_SHED_EVENT_LOOP_DELAY_MS: '250',
    EWA_SHED_SAMPLE_INTERVAL_MS: '500',
  });
  assert.deepEqual(set.http, {
    requestTimeoutMs: 5000,
    headersTimeoutMs: 2000,
    connectionTimeoutMs: 9000,
    keepAliveTimeoutMs: 4000,
  });
  assert.deepEqual(sessionLimitOptions(set.database.limits), [
    '-c statement_timeout=1500',
    '-c lock_timeout=0',
    '-c idle_in_transaction_session_timeout=7000',
  ]);
  assert.equal(set.database.limits.connectTimeoutMs, 800);
  assert.deepEqual(set.loadShedding, { eventLoopDelayMs: 250, sampleIntervalMs: 500 });
  const options = listenerLimits(set.http);
  assert.equal(options.requestTimeout, 5000);
  assert.equal(options.connectionTimeout, 9000);
  assert.equal(options.keepAliveTimeout, 4000);
  assert.equal(options.http?.headersTimeout, 2000);
});

test('a bad limit stops start-up with a message naming it', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ EWA_REQUEST_TIMEOUT_MS: '0' }, /EWA_REQUEST_TIMEOUT_MS must be a whole number from 100/],
    [{ EWA_HEADERS_TIMEOUT_MS: 'soon' }, /EWA_HEADERS_TIMEOUT_MS must be a whole number/],
    [
      { EWA_REQUEST_TIMEOUT_MS: '1000', EWA_HEADERS_TIMEOUT_MS: '2000' },
      /EWA_HEADERS_TIMEOUT_MS must not be more than EWA_REQUEST_TIMEOUT_MS/,
    ],
    [{ EWA_DB_STATEMENT_TIMEOUT_MS: '-1' }, /EWA_DB_STATEMENT_TIMEOUT_MS must be a whole number/],
    [{ EWA_DB_CONNECT_TIMEOUT_MS: '10' }, /EWA_DB_CONNECT_TIMEOUT_MS must be a whole number from 100/],
    [{ EWA_SHED_SAMPLE_INTERVAL_MS: '1' }, /EWA_SHED_SAMPLE_INTERVAL_MS must be a whole number from 10/],
    [{ EWA_CORS_ORIGINS: 'app.example.com' }, /EWA_CORS_ORIGINS entries are origins/],
  ];
  for (const [env, message] of cases)
    assert.throws(
      () => loadConfig(env),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        return true;
      },
    );
});
