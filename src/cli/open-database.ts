import { type Config, loadConfig } from '../config.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import type { CliContext } from './command.ts';

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
  const { database } = await openMigratedDatabase(context, config);
  try {
    return await work({ config, database });
  } finally {
    await database.close();
  }
}
