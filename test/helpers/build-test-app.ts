import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { buildServer, type ServerDeps, type Servers } from '../../src/server.ts';
import { checkResponseAgainstOwnDocument, checkResponseAgainstReference } from './contract.ts';
import { testFileDatabase } from './test-database.ts';

/** The instant every test app believes it is, unless a test moves it. */
export const FIXED_NOW = new Date('2026-03-11T15:30:00.000Z');
export const BASE_URL = 'https://api.ewa.test';

export interface TestApp extends Servers {
  config: Config;
  database: Database;
  /** Every log line the three listeners wrote, parsed. */
  logs: Record<string, unknown>[];
}

/** Ids that say which request they belong to: req-0001, req-0002, … */
export function sequentialIds(prefix: string): () => string {
  let next = 0;
  return () => `${prefix}-${String(++next).padStart(4, '0')}`;
}

/** What a test may change about the app beyond its environment: extra routes, and a clock it can move. */
export interface TestAppOptions {
  extraApiRoutes?: ServerDeps['extraApiRoutes'];
  now?: () => Date;
  /** The payment rail instead of EWA_RAIL's. */
  rail?: ServerDeps['rail'];
  /**
   * Behave as production where the code asks (`config.env`), on any test database: production's configuration
   * itself needs PostgreSQL, a master key and a bank (config.test.ts checks those).
   */
  asProduction?: boolean;
}

/** Older tests pass extra routes alone as the third argument. */
type TestAppExtras = TestAppOptions | ServerDeps['extraApiRoutes'];

function optionsOf(extras: TestAppExtras): TestAppOptions {
  return typeof extras === 'function' ? { extraApiRoutes: extras } : (extras ?? {});
}

/**
 * Builds the real applications on the test file's migrated database (in-memory PGlite, or a schema of its own
 * on the PostgreSQL of DATABASE_URL), with log lines captured and request ids predictable. Closed when the test
 * ends.
 */
export async function buildTestApp(
  t: TestContext,
  env: Record<string, string> = {},
  extras?: TestAppExtras,
): Promise<TestApp> {
  return buildTestAppOn(t, await testFileDatabase(), env, extras);
}

/** The same, on a database the test opened itself (to close and reopen it, as a restart does). */
export async function buildTestAppOn(
  t: TestContext,
  database: Database & { env: Record<string, string> },
  env: Record<string, string> = {},
  extras?: TestAppExtras,
): Promise<TestApp> {
  const { extraApiRoutes, now, rail, asProduction } = optionsOf(extras);
  const loaded = loadConfig({
    EWA_BASE_URL: BASE_URL,
    EWA_LOG_LEVEL: 'info',
    EWA_SEED_DEMO: 'false',
    // Off unless a test turns it on (load-shedding.test.ts): on a host busy with other work, a test process's own
    // event loop can lag past the production threshold and answer an unrelated test 503.
    EWA_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...database.env,
    ...env,
  });
  const config: Config = asProduction ? { ...loaded, env: 'production' } : loaded;
  const logs: Record<string, unknown>[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const servers = await buildServer(config, {
    database,
    logStream,
    newId: sequentialIds('req'),
    ...(extraApiRoutes ? { extraApiRoutes } : {}),
    ...(now ? { now } : {}),
    ...(rail ? { rail } : {}),
  });
  t.after(() => Promise.all([servers.api.close(), servers.auth.close(), servers.payments.close()]));
  checkEveryResponseAgainstReference(servers.api);
  return { ...servers, config, database, logs };
}

/**
 * The contract test: every response a test draws from the REST listener through `inject` is validated against the
 * published description's schema for that operation and status, and its Content-Type against the one our own
 * OpenAPI document declares; the first mismatch fails the test.
 */
function checkEveryResponseAgainstReference(api: FastifyInstance): void {
  const inject = api.inject.bind(api) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const checked = async (options: InjectOptions | string) => {
    const response = await inject(options);
    const method = typeof options === 'string' ? 'GET' : (options.method ?? 'GET');
    const url = typeof options === 'string' ? options : String(options.url ?? options.path ?? '/');
    const contentType = String(response.headers['content-type'] ?? '');
    checkResponseAgainstReference(method, url, response.statusCode, contentType, response.body);
    checkResponseAgainstOwnDocument(
      api.swagger() as unknown as Parameters<typeof checkResponseAgainstOwnDocument>[0],
      method,
      url,
      response.statusCode,
      contentType,
    );
    return response;
  };
  (api as unknown as { inject: typeof checked }).inject = checked;
}
