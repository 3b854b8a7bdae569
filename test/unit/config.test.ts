import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, DEVELOPMENT_MASTER_KEY, loadConfig } from '../../src/config.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';

const STRONG_KEY = Buffer.alloc(32, 7).toString('base64');

test('defaults: UAT sandbox on the embedded database in ./data, ports 8080-8082', () => {
  const config = loadConfig({});
  assert.equal(config.env, 'uat');
  assert.deepEqual(config.api, { port: 8080, publicUrl: 'http://localhost:8080' });
  assert.deepEqual(config.auth, { port: 8081, publicUrl: 'http://localhost:8081' });
  assert.deepEqual(config.payments, { port: 8082, publicUrl: 'http://localhost:8082' });
  assert.equal(config.database.kind, 'pglite');
  assert.ok(config.database.kind === 'pglite' && config.database.dataDir.endsWith('/data'));
  assert.equal(config.seedDemoData, true);
  assert.equal(config.usesDevelopmentKey, true);
  assert.equal(config.masterKey.length, 32);
  assert.equal(config.oauth.loginFailuresBeforeBackoff, 5);
  assert.equal(config.oauth.loginFailuresPerAddressBeforeBackoff, 20);
});

test('the config is frozen all the way down', () => {
  const config = loadConfig({});
  assert.ok(Object.isFrozen(config));
  assert.ok(Object.isFrozen(config.api));
  assert.throws(() => {
    (config as { env: string }).env = 'production';
  }, TypeError);
});

test('values are read, trimmed and checked; public URLs lose a trailing slash', () => {
  const config = loadConfig({
    EWA_API_PORT: ' 9000 ',
    EWA_BASE_URL: 'https://api.example.com/',
    DATABASE_URL: 'postgres://u@db:5432/ewa',
    EWA_DB_POOL_SIZE: '20',
    EWA_DB_SCHEMA: 'tenant_a',
    EWA_LOG_LEVEL: 'warn',
  });
  assert.equal(config.api.port, 9000);
  assert.equal(config.api.publicUrl, 'https://api.example.com');
  assert.deepEqual(config.database, {
    kind: 'postgres',
    url: 'postgres://u@db:5432/ewa',
    poolSize: 20,
    schema: 'tenant_a',
    limits: {
      statementTimeoutMs: 10_000,
      lockTimeoutMs: 3000,
      idleInTransactionTimeoutMs: 30_000,
      connectTimeoutMs: 5000,
    },
  });
  assert.equal(config.logLevel, 'warn');
});

test('a bad value stops start-up with a message naming the variable and what is allowed', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ EWA_ENV: 'staging' }, /EWA_ENV must be one of uat, production \(got "staging"\)/],
    [{ EWA_API_PORT: '80a' }, /EWA_API_PORT must be a whole number from 0 to 65535/],
    [{ EWA_AUTH_PORT: '70000' }, /EWA_AUTH_PORT must be a whole number from 0 to 65535/],
    [
      { EWA_API_PORT: '9000', EWA_AUTH_PORT: '9000' },
      /^EWA_AUTH_PORT \(9000\) is the port of EWA_API_PORT: each listener needs a port of its own\.$/,
    ],
    [{ EWA_PAYMENTS_PORT: '8080' }, /^EWA_PAYMENTS_PORT \(8080\) is the port of EWA_API_PORT/],
    [{ EWA_HOST: 'local host' }, /EWA_HOST must be an IP address or a host name to listen on/],
    [
      { EWA_BASE_URL: 'localhost:8080' },
      /EWA_BASE_URL must be an absolute URL starting with http:\/\/ or https:\/\/\.$/,
    ],
    [{ EWA_PAYMENTS_URL: 'ftp://x' }, /EWA_PAYMENTS_URL must be an absolute URL/],
    [
      { DATABASE_URL: 'mysql://x' },
      /DATABASE_URL must be an absolute URL starting with postgres:\/\/ or postgresql:\/\/\.$/,
    ],
    [
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:notaport/test' },
      /^DATABASE_URL starts with postgres: but is not a URL that can be read: check the host, that the port is a number/,
    ],
    [
      { DATABASE_URL: 'postgres://x', EWA_DB_POOL_SIZE: '0' },
      /EWA_DB_POOL_SIZE must be a whole number from 1 to 500/,
    ],
    [
      { DATABASE_URL: 'postgres://x', EWA_DB_SCHEMA: 'x;drop' },
      /EWA_DB_SCHEMA must be a lower-case SQL identifier/,
    ],
    [
      { REDIS_URL: 'http://x' },
      /^REDIS_URL must be an absolute URL starting with redis:\/\/ or rediss:\/\/\.$/,
    ],
    [{ REDIS_URL: 'redis://' }, /^REDIS_URL names no host/],
    [
      { REDIS_URL: 'redis://127.0.0.1:6379/abc' },
      /^REDIS_URL's database must be a number, like redis:\/\/127\.0\.0\.1\/0 \(got "abc"\)\.$/,
    ],
    [{ REDIS_URL: 'redis://127.0.0.1:6379/1/2' }, /^REDIS_URL's database must be a number/],
    [{ EWA_LOG_LEVEL: 'loud' }, /EWA_LOG_LEVEL must be one of/],
    [{ EWA_SEED_DEMO: 'yes' }, /EWA_SEED_DEMO must be true or false/],
    [{ EWA_MASTER_KEY: 'c2hvcnQ=' }, /EWA_MASTER_KEY must be 32 bytes encoded in base64/],
    [{ EWA_BODY_LIMIT_BYTES: '10' }, /EWA_BODY_LIMIT_BYTES must be a whole number from 1024/],
    [{ EWA_HEALTH_DB_TIMEOUT_MS: '-1' }, /EWA_HEALTH_DB_TIMEOUT_MS must be a whole number/],
    [{ EWA_SHUTDOWN_TIMEOUT_MS: 'soon' }, /EWA_SHUTDOWN_TIMEOUT_MS must be a whole number/],
    [
      { EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '8', EWA_LOGIN_FAILURES_PER_ADDRESS_BEFORE_BACKOFF: '6' },
      /EWA_LOGIN_FAILURES_PER_ADDRESS_BEFORE_BACKOFF must be a whole number from 8 to 100000/,
    ],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  }
});

test('production refuses the sandbox rail, which moves no money', () => {
  const production = {
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    DATABASE_URL: 'postgres://db/ewa',
    EWA_MASTER_KEY: STRONG_KEY,
  };
  assert.throws(() => loadConfig(production), /EWA_ENV=production needs EWA_RAIL=ach/);
  assert.throws(() => loadConfig({ ...production, EWA_RAIL: 'sandbox' }), /needs EWA_RAIL=ach/);
  assert.throws(() => loadConfig({ ...production, EWA_RAIL: 'ach' }), /EWA_ACH_IMMEDIATE_DESTINATION/);
  // Every identity setting must be the bank's own: one left to its sandbox default is named.
  const { EWA_ACH_ODFI: _odfi, ...withoutOdfi } = PRODUCTION_RAIL_ENV;
  assert.throws(
    () => loadConfig({ ...production, ...withoutOdfi }),
    /needs your bank's settings.*set EWA_ACH_ODFI \(/,
  );
  assert.throws(
    () => loadConfig({ ...production, ...PRODUCTION_RAIL_ENV, EWA_ACH_IMMEDIATE_DESTINATION: '110000000' }),
    /sandbox's test bank/,
  );
  assert.equal(loadConfig({ ...production, ...PRODUCTION_RAIL_ENV }).money.rail, 'ach');
});

test('production refuses the embedded database, the development key and demo data', () => {
  const production = { EWA_ENV: 'production', EWA_SEED_DEMO: 'false', ...PRODUCTION_RAIL_ENV };
  assert.throws(() => loadConfig({ ...production, EWA_MASTER_KEY: STRONG_KEY }), /needs DATABASE_URL/);
  assert.throws(
    () => loadConfig({ ...production, DATABASE_URL: 'postgres://db/ewa' }),
    /refuses the development EWA_MASTER_KEY/,
  );
  assert.throws(
    () =>
      loadConfig({
        ...production,
        DATABASE_URL: 'postgres://db/ewa',
        EWA_MASTER_KEY: DEVELOPMENT_MASTER_KEY,
      }),
    /development EWA_MASTER_KEY/,
  );
  assert.throws(
    () =>
      loadConfig({
        ...production,
        DATABASE_URL: 'postgres://db/ewa',
        EWA_MASTER_KEY: STRONG_KEY,
        EWA_SEED_DEMO: 'true',
      }),
    /EWA_SEED_DEMO must be false/,
  );
  const config = loadConfig({ ...production, DATABASE_URL: 'postgres://db/ewa', EWA_MASTER_KEY: STRONG_KEY });
  assert.equal(config.env, 'production');
  assert.equal(config.seedDemoData, false);
  assert.equal(config.usesDevelopmentKey, false);
});

test('EWA_TRUST_PROXY: off by default, true, or proxy addresses and ranges', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ EWA_TRUST_PROXY: 'true' }).trustProxy, true);
  assert.deepEqual(loadConfig({ EWA_TRUST_PROXY: '10.0.0.0/8, 2001:db8::1' }).trustProxy, [
    '10.0.0.0/8',
    '2001:db8::1',
  ]);
  assert.throws(() => loadConfig({ EWA_TRUST_PROXY: 'proxy.example' }), /EWA_TRUST_PROXY is true, false/);
  assert.throws(() => loadConfig({ EWA_TRUST_PROXY: '10.0.0.0/33' }), /EWA_TRUST_PROXY/);
});

test('the rail settings: an ACH identity that does not fit its file field stops the start, naming the variable', () => {
  assert.equal(loadConfig({}).money.rail, 'sandbox');
  const ach = loadConfig({ EWA_RAIL: 'ach' }).money.ach;
  assert.equal(ach.immediateDestination, '110000000');
  assert.throws(() => loadConfig({ EWA_RAIL: 'wire' }), /EWA_RAIL must be one of sandbox, ach/);
  for (const [name, value, message] of [
    [
      'EWA_ACH_IMMEDIATE_DESTINATION',
      '12345678',
      /EWA_ACH_IMMEDIATE_DESTINATION must be a 9-digit routing number/,
    ],
    ['EWA_ACH_IMMEDIATE_DESTINATION', '110000001', /fails the routing-number checksum/],
    ['EWA_ACH_ODFI', '1100000', /EWA_ACH_ODFI must be the originating bank's 8-digit id/],
    ['EWA_ACH_COMPANY_ID', 'abc', /EWA_ACH_COMPANY_ID must be 10 digits, capitals or spaces/],
    ['EWA_ACH_IMMEDIATE_ORIGIN', '12345678', /or a 9-digit number \(written with a leading space\)/],
    ['EWA_ACH_COMPANY_NAME', 'A NAME LONGER THAN 16', /EWA_ACH_COMPANY_NAME must be up to 16/],
  ] as const) {
    assert.throws(() => loadConfig({ EWA_RAIL: 'ach', [name]: value }), message);
    // Without ACH the identity is not used, so it is not checked.
    assert.doesNotThrow(() => loadConfig({ [name]: value }));
  }
  // A 9-digit number takes the leading space Nacha writes it with, which a setting (trimmed) could not carry.
  const nineDigits = loadConfig({
    EWA_RAIL: 'ach',
    EWA_ACH_IMMEDIATE_ORIGIN: '123456789',
    EWA_ACH_COMPANY_ID: ' 987654321 ',
  }).money.ach;
  assert.equal(nineDigits.immediateOrigin, ' 123456789');
  assert.equal(nineDigits.companyIdentification, ' 987654321');
  assert.throws(
    () => loadConfig({ EWA_RAIL_TIMEOUT_SECONDS: '60', EWA_OUTBOX_LEASE_SECONDS: '60' }),
    /EWA_RAIL_TIMEOUT_SECONDS \(60\) must be shorter than EWA_OUTBOX_LEASE_SECONDS \(60\)/,
  );
});

test('production needs https public URLs, naming each that is not', () => {
  const production = {
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    DATABASE_URL: 'postgres://db/ewa',
    EWA_MASTER_KEY: STRONG_KEY,
    ...PRODUCTION_RAIL_ENV,
  };
  assert.doesNotThrow(() => loadConfig(production));
  assert.throws(
    () => loadConfig({ ...production, EWA_AUTH_URL: 'http://auth.example.com', EWA_PAYMENTS_URL: '' }),
    {
      message:
        'EWA_ENV=production needs https public URLs (TLS may end at a proxy in front): EWA_AUTH_URL is ' +
        'http://auth.example.com, EWA_PAYMENTS_URL is http://localhost:8082.',
    },
  );
});

test("production with ACH must name its own bank, not the sandbox's", () => {
  const production = {
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    DATABASE_URL: 'postgres://db/ewa',
    EWA_MASTER_KEY: STRONG_KEY,
    EWA_RAIL: 'ach',
  };
  assert.throws(() => loadConfig(production), /needs your bank's settings.*EWA_ACH_IMMEDIATE_DESTINATION,/);
  assert.equal(
    loadConfig({ ...production, ...PRODUCTION_RAIL_ENV }).money.ach.immediateDestination,
    PRODUCTION_RAIL_ENV.EWA_ACH_IMMEDIATE_DESTINATION,
  );
});

test('tracing: off without an OTLP endpoint; the traces endpoint wins over the general one, which takes /v1/traces', () => {
  assert.equal(loadConfig({}).tracing, undefined);
  assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing, {
    endpoint: 'http://collector:4318/v1/traces',
    serviceName: 'ewa-server',
    sampleRatio: 1,
  });
  const both = loadConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/in',
    OTEL_SERVICE_NAME: 'ewa-eu',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  }).tracing;
  assert.deepEqual(both, { endpoint: 'https://traces.example/in', serviceName: 'ewa-eu', sampleRatio: 0.25 });
  for (const bad of ['1.5', '-0.1', 'half', '0x1', '']) {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_SAMPLER_ARG: bad };
    if (bad === '') assert.equal(loadConfig(env).tracing?.sampleRatio, 1);
    else assert.throws(() => loadConfig(env), /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
  }
  assert.throws(
    () => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
    /OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute URL/,
  );
});
