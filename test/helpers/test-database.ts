import { randomBytes } from 'node:crypto';
import { after, type TestContext } from 'node:test';
import pg from 'pg';
import { type DatabaseConfig, loadConfig } from '../../src/config.ts';
import { type Database, type Db, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

/** The PostgreSQL the suite runs against when DATABASE_URL is set; otherwise every test uses in-memory PGlite. */
export const POSTGRES_URL = process.env.DATABASE_URL || undefined;
export const onPostgres = POSTGRES_URL !== undefined;

export interface TestDatabaseTarget {
  config: DatabaseConfig;
  /** The environment variables that point a CLI process or a server at this same database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

/**
 * An empty database of its own: a fresh in-memory PGlite, or a fresh schema in the PostgreSQL of DATABASE_URL,
 * so that runs never see each other's rows.
 */
export async function createTestDatabaseTarget(): Promise<TestDatabaseTarget> {
  // The configuration a server given `env` would open, with its default session limits.
  if (!POSTGRES_URL) {
    const env = { EWA_DATA_DIR: ':memory:' };
    return { config: loadConfig(env).database, env, drop: async () => {} };
  }
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  const env = { DATABASE_URL: POSTGRES_URL, EWA_DB_SCHEMA: schema, EWA_DB_POOL_SIZE: '5' };
  return {
    config: loadConfig(env).database,
    env,
    drop: () => adminQuery(`drop schema if exists ${schema} cascade`),
  };
}

/** An empty database target for one test, dropped when that test ends. */
export async function createTestDatabase(t: TestContext): Promise<TestDatabaseTarget> {
  const target = await createTestDatabaseTarget();
  t.after(() => target.drop());
  return target;
}

export type TestDatabase = Database & { env: Record<string, string> };

async function openMigrated(target: TestDatabaseTarget): Promise<TestDatabase> {
  const database = await openDatabase(target.config);
  await migrate(database.db);
  return { ...database, env: target.env };
}

/** A migrated database of this test's own, closed and dropped when the test ends. */
export async function openTestDatabase(t: TestContext): Promise<TestDatabase> {
  const target = await createTestDatabase(t);
  const database = await openMigrated(target);
  t.after(() => database.close());
  return database;
}

/**
 * Two handles on one migrated database, as two processes hold them. On PostgreSQL they are separate pools; an
 * in-memory PGlite cannot be opened twice, so there both are the same handle.
 */
export async function openTwoHandles(t: TestContext): Promise<[Db, Db]> {
  const target = await createTestDatabase(t);
  const first = await openDatabase(target.config);
  t.after(() => first.close());
  await migrate(first.db);
  if (!onPostgres) return [first.db, first.db];
  const second = await openDatabase(target.config);
  t.after(() => second.close());
  return [first.db, second.db];
}

let fileDatabase: Promise<{ database: TestDatabase; target: TestDatabaseTarget }> | undefined;

/**
 * The migrated database shared by the tests of one file (each file runs in a process of its own). Tests build
 * their own rows and never depend on another test's.
 */
export function testFileDatabase(): Promise<TestDatabase> {
  fileDatabase ??= createTestDatabaseTarget().then(async (target) => ({
    database: await openMigrated(target),
    target,
  }));
  return fileDatabase.then(({ database }) => database);
}

after(async () => {
  if (!fileDatabase) return;
  const { database, target } = await fileDatabase;
  await database.close();
  await target.drop();
});
