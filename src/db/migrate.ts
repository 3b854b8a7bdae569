import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { UNLIMITED_TRANSACTION } from './session-limits.ts';
import { withTransaction } from './transaction.ts';

export const MIGRATIONS_DIR = join(import.meta.dirname, '..', 'migrations');
const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;
/** Any fixed number: it names the lock that lets one process at a time migrate a database. */
const MIGRATION_LOCK_KEY = 7_310_402_024;

export interface Migration {
  readonly name: string;
  readonly script: string;
  readonly checksum: string;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * PostgreSQL creates tables in the first schema of the search path that exists; with none it fails deep inside the
 * first migration. Said first, by name: EWA_DB_SCHEMA (or the role's search_path) names a schema nobody made.
 */
async function requireSchema(db: Db): Promise<void> {
  const { rows } = await sql<{ schema: string | null; path: string }>`
    select current_schema() as schema, current_setting('search_path') as path`.execute(db);
  const [row] = rows;
  if (row && row.schema === null)
    throw new MigrationError(
      `No schema on the search path (${row.path}) exists in this database, so there is nowhere to create the ` +
        'tables. Create it first (for EWA_DB_SCHEMA=name: create schema name), or unset EWA_DB_SCHEMA to use the ' +
        'default schema.',
    );
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  return files.map((file) => {
    if (!FILE_NAME.test(file)) {
      throw new MigrationError(`Migration file ${file} must be named NNNN_lower_snake_case.sql.`);
    }
    const script = readFileSync(join(dir, file), 'utf8');
    return {
      name: file.replace(/\.sql$/, ''),
      script,
      checksum: createHash('sha256').update(script).digest('hex'),
    };
  });
}

/**
 * Applies pending migrations in name order, each in its own transaction together with its record, so a failing
 * migration leaves neither its changes nor a record behind. A transaction-scoped lock makes concurrent starts
 * against one PostgreSQL take turns; the second process finds the work done.
 */
export async function migrate(
  db: Db,
  options: { dir?: string; onApplied?: (name: string) => void } = {},
): Promise<string[]> {
  const migrations = readMigrations(options.dir);
  const applied: string[] = [];
  for (;;) {
    const next = await withTransaction(db, async (tx) => {
      // A migration may rebuild a large table, and waits for another process's migration to end: no session limit.
      await UNLIMITED_TRANSACTION.execute(tx);
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(tx);
      await requireSchema(tx);
      await sql`create table if not exists schema_migrations (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`.execute(tx);
      const done = await tx.selectFrom('schema_migrations').select(['name', 'checksum']).execute();
      const pending = pendingMigration(migrations, done);
      if (!pending) return undefined;
      try {
        await sql.raw(pending.script).execute(tx);
      } catch (error) {
        throw new MigrationError(`Migration ${pending.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      await tx
        .insertInto('schema_migrations')
        .values({ name: pending.name, checksum: pending.checksum })
        .execute();
      return pending.name;
    });
    if (!next) return applied;
    applied.push(next);
    options.onApplied?.(next);
  }
}

function pendingMigration(
  migrations: readonly Migration[],
  done: readonly { name: string; checksum: string }[],
): Migration | undefined {
  const byName = new Map(done.map((row) => [row.name, row.checksum]));
  for (const row of done) {
    const known = migrations.find((migration) => migration.name === row.name);
    if (!known) {
      throw new MigrationError(
        `The database has migration ${row.name}, which this version does not know: is it older?`,
      );
    }
    if (known.checksum !== row.checksum) {
      throw new MigrationError(
        `Migration ${row.name} was changed after it was applied; add a new migration instead.`,
      );
    }
  }
  return migrations.find((migration) => !byName.has(migration.name));
}
