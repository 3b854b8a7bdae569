import { type Config, type DatabaseConfig, loadConfig } from '../config.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { migrate, readMigrations } from '../db/migrate.ts';
import { type CliContext, writeLine } from './command.ts';

/**
 * Opens the configured database for a command and brings its schema up to date. With the embedded database
 * this fails with a clear message while a server holds it (see data-dir-lock.ts); `ewa` forwards its commands to
 * that server instead (forward-to-server.ts), which runs them here on its own open database.
 */
export async function openMigratedDatabase(
  context: CliContext,
  config: Config = loadConfig(context.env),
): Promise<{ config: Config; database: Database; applied: string[] }> {
  // Inside the running server: its database, migrated when it started.
  if (context.database) return { ...context.database, applied: [] };
  const database = await openDatabase(config.database);
  try {
    const applied = await migrate(database.db);
    return { config, database, applied };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Runs `work` on the migrated database and closes it afterwards, whatever happens. */
export async function withMigratedDatabase<T>(
  context: CliContext,
  work: (opened: { config: Config; database: Database }) => Promise<T>,
  config: Config = loadConfig(context.env),
): Promise<T> {
  if (context.database) return work(context.database);
  const { database, applied } = await openMigratedDatabase(context, config);
  if (applied[0] !== undefined && applied[0] === readMigrations()[0]?.name) {
    const note = newDatabaseNote(config.database);
    if (note) writeLine(context.stderr, note);
  }
  try {
    return await work({ config, database });
  } finally {
    await database.close();
  }
}

/**
 * Said when a command found its database empty and made its tables: a command not given the settings of the server
 * it was meant for (its data directory, its DATABASE_URL) opens another database, and would otherwise answer only
 * that a person or a client it names does not exist. Nothing to say of a database in memory: each is new.
 */
export function newDatabaseNote(database: DatabaseConfig): string | undefined {
  if (database.kind === 'pglite' && database.dataDir === ':memory:') return undefined;
  const where =
    database.kind === 'pglite'
      ? `the embedded database in ${database.dataDir} (EWA_DATA_DIR)`
      : `${postgresName(database.url)}${database.schema ? `, schema ${database.schema}` : ''} (DATABASE_URL${database.schema ? ', EWA_DB_SCHEMA' : ''})`;
  return (
    `ewa: ${where} was empty, and now has only the tables this command made in it. A server's database is another ` +
    'one unless this command is given the same settings as the server.'
  );
}

/** A PostgreSQL URL's database and host, without its user or password. */
function postgresName(url: string): string {
  try {
    const parsed = new URL(url);
    const name = decodeURIComponent(parsed.pathname.slice(1));
    return `PostgreSQL database ${name || '(the default)'} on ${parsed.host || 'the local socket'}`;
  } catch {
    return 'the PostgreSQL database';
  }
}
