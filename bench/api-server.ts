import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { seedDemoDataOnce } from '../src/seed/demo.ts';
import { buildServer } from '../src/server.ts';

/**
 * A benchmark-only server process: the real applications on an in-memory database, with the bearer check on or
 * off (`--no-bearer-check`), so the cost of the check is measured against the same GET without it. Prints
 * "ready <apiPort> <authPort>" when it listens.
 */
const bearerCheck = !process.argv.includes('--no-bearer-check');
const config = loadConfig({
  EWA_DATA_DIR: ':memory:',
  EWA_LOG_LEVEL: 'warn',
  EWA_HOST: '127.0.0.1',
  EWA_API_PORT: '0',
  EWA_AUTH_PORT: '0',
});
const database = await openDatabase(config.database);
await migrate(database.db);
await seedDemoDataOnce(database.db, new Date());
// A route that does no work of its own, so that the check is compared with the framework alone: its worst case.
const servers = await buildServer(config, {
  database,
  bearerCheck,
  extraApiRoutes: async (app) => {
    app.get(
      '/rest/bench-ping',
      { config: { security: [{ kind: 'client', scopes: ['health:read'] }] } },
      async () => ({ data: null }),
    );
  },
});
await servers.api.listen({ port: 0, host: '127.0.0.1' });
await servers.auth.listen({ port: 0, host: '127.0.0.1' });
const port = (app: typeof servers.api) => (app.server.address() as { port: number }).port;
console.log(`ready ${port(servers.api)} ${port(servers.auth)}`);
process.once('SIGTERM', async () => {
  await Promise.all([servers.api.close(), servers.auth.close()]);
  await database.close();
  process.exit(0);
});
