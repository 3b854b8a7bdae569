import { createServer } from 'node:net';
import type { Config } from '../config.ts';
import { dataDirBusy, dataDirOwner } from '../db/data-dir-lock.ts';
import { listenFailure } from './serve-process.ts';

/**
 * Before the database is opened (the embedded one's first start makes it and loads the demo data, seconds of work):
 * each port is bound for a moment and let go, so that one in use stops the start at once, naming its setting,
 * rather than after that work. Listening later can still fail (another process may take the port meanwhile), and
 * says the same. A port in use because this same server runs on this data directory says that instead.
 */
export async function requireFreePorts(config: Config): Promise<void> {
  const wanted = [
    { port: config.api.port, portVariable: 'EWA_API_PORT', host: config.host, hostVariable: 'EWA_HOST' },
    { port: config.auth.port, portVariable: 'EWA_AUTH_PORT', host: config.host, hostVariable: 'EWA_HOST' },
    {
      port: config.payments.port,
      portVariable: 'EWA_PAYMENTS_PORT',
      host: config.host,
      hostVariable: 'EWA_HOST',
    },
    ...(config.metrics
      ? [
          {
            port: config.metrics.port,
            portVariable: 'EWA_METRICS_PORT',
            host: config.metrics.host,
            hostVariable: 'EWA_METRICS_HOST',
          },
        ]
      : []),
  ];
  for (const where of wanted) {
    if (where.port === 0) continue;
    const failure = await bindOnce(where.host, where.port);
    if (failure === undefined) continue;
    const { database } = config;
    if (database.kind === 'pglite') {
      const owner = dataDirOwner(database.dataDir);
      if (owner !== undefined) throw dataDirBusy(database.dataDir, owner);
    }
    throw listenFailure(failure, where);
  }
}

function bindOnce(host: string, port: number): Promise<unknown> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
