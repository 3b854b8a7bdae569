import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { DEMO, seedDemoDataOnce } from '../src/seed/demo.ts';
import { buildServer } from '../src/server.ts';

/**
 * The bearer check's cost measured inside one process: two apps (check on, check off) on one database, the same
 * no-work route, served alternately in blocks through the real request path (inject), so that load from the rest
 * of the machine falls on both alike. Returns requests per second of each.
 */
export async function bearerCostInProcess(
  blocks = 20,
  perBlock = 2_000,
): Promise<{ on: number; off: number }> {
  const config = loadConfig({ EWA_DATA_DIR: ':memory:', EWA_LOG_LEVEL: 'warn' });
  const database = await openDatabase(config.database);
  await migrate(database.db);
  await seedDemoDataOnce(database.db, new Date());
  const ping = async (
    app: Parameters<NonNullable<Parameters<typeof buildServer>[1]['extraApiRoutes']>>[0],
  ) => {
    app.get(
      '/rest/bench-ping',
      { config: { security: [{ kind: 'client', scopes: ['health:read'] }] } },
      async () => ({ data: null }),
    );
  };
  const on = await buildServer(config, { database, extraApiRoutes: ping });
  const off = await buildServer(config, { database, bearerCheck: false, extraApiRoutes: ping });
  const { confidential } = DEMO.clients;
  const token = (
    await on.auth.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        scope: 'health:read',
        client_id: confidential.clientId,
        client_secret: confidential.secret,
      }).toString(),
    })
  ).json().access_token as string;
  const headers = { authorization: `Bearer ${token}` };
  const block = async (app: typeof on.api) => {
    const started = performance.now();
    for (let i = 0; i < perBlock; i++) {
      const response = await app.inject({ url: '/rest/bench-ping', headers });
      if (response.statusCode !== 200) throw new Error(`unexpected ${response.statusCode}`);
    }
    return performance.now() - started;
  };
  await block(on.api); // warm-up
  await block(off.api);
  let onMs = 0;
  let offMs = 0;
  for (let i = 0; i < blocks; i++) {
    onMs += await block(on.api);
    offMs += await block(off.api);
  }
  for (const servers of [on, off])
    await Promise.all([servers.api.close(), servers.auth.close(), servers.payments.close()]);
  await database.close();
  const rate = (ms: number) => Math.round((blocks * perBlock) / (ms / 1000));
  return { on: rate(onMs), off: rate(offMs) };
}
