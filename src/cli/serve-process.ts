import cluster from 'node:cluster';
import { setTimeout as sleep } from 'node:timers/promises';
import packageJson from '../../package.json' with { type: 'json' };
import type { Config } from '../config.ts';
import { ConfigError } from '../config.ts';
import { Scheduler } from '../jobs/scheduler.ts';
import { serverJobs } from '../jobs/server-jobs.ts';
import { type MetricsServer, startMetricsServer } from '../platform/metrics-server.ts';
import { describeDemoSeed, seedDemoDataOnce } from '../seed/demo.ts';
import { buildServer } from '../server.ts';
import { webhookJobs } from '../webhooks/webhook-jobs.ts';
import { type CliContext, writeLine } from './command.ts';
import { type CommandSocket, startCommandSocket } from './command-socket.ts';
import { openMigratedDatabase } from './open-database.ts';
import { isPrimaryMessage, type WorkerMessage } from './worker-messages.ts';

/**
 * One serving process: `ewa serve` itself with one worker, or a worker forked by the primary (serve-primary.ts).
 * A worker says when it is ready, drains when the primary asks, answers the primary's metrics requests instead
 * of listening on EWA_METRICS_PORT, and leaves the banner to the primary.
 */
export async function serveInThisProcess(context: CliContext, config: Config): Promise<number> {
  const worker = cluster.isWorker;
  // Before the database opens: its statements become spans of the requests that run them. Each serving process
  // traces itself; a primary serves nothing to trace.
  const tracing = config.tracing
    ? (await import('../platform/tracing.ts')).Tracing.start(config.tracing, packageJson.version)
    : undefined;
  const { database } = await openMigratedDatabase(context, config);
  if (config.seedDemoData && !worker) {
    // The embedded database is this process's alone (its data directory is locked): nobody else seeds it.
    const soleProcess = database.kind === 'pglite';
    const outcome = await seedDemoDataOnce(database.db, new Date(), config, { soleProcess });
    if (outcome !== 'PRESENT') writeLine(context.stdout, describeDemoSeed(outcome));
  }
  const servers = await buildServer(config, { database, tracing });
  const apps = [servers.api, servers.auth, servers.payments];
  // Every process may run the scheduler: scheduled_runs makes each run happen once across all of them.
  // In UAT on the sandbox's time, re-read before each tick (`ewa sandbox advance` runs the same money jobs).
  const scheduler = new Scheduler({
    db: database.db,
    now: servers.sandbox.now,
    beforeTick: () => servers.sandbox.refresh(),
    logger: servers.api.log,
    tickMs: config.money.schedulerTickMs,
  });
  for (const job of serverJobs(servers.money, config)) scheduler.register(job);
  for (const job of webhookJobs(servers.webhooks, config)) scheduler.register(job);
  let commandSocket: CommandSocket | undefined;
  let metricsServer: MetricsServer | undefined;
  let stopping = false;
  const stop = async (why: string, drainDelayMs: number) => {
    if (stopping) return;
    stopping = true;
    servers.readiness.drain();
    if (!worker) writeLine(context.stdout, `Received ${why}: finishing requests in flight, then stopping.`);
    // Still serving, /readyz 503: the balancer takes this process out of rotation before it stops accepting.
    if (drainDelayMs > 0) await sleep(drainDelayMs);
    const force = setTimeout(() => {
      writeLine(context.stderr, `Requests still open after ${config.shutdownTimeoutMs} ms: exiting anyway.`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    await Promise.all([
      ...apps.map((app) => app.close()),
      scheduler.stop(),
      commandSocket?.close(),
      // Before the database closes: a scrape in flight reads it.
      metricsServer?.close(),
    ]);
    await database.close();
    await tracing?.shutdown();
    // A worker exits only once no connection can be on its way to it (worker-messages.ts, `ewa:closed!`).
    if (worker) await primaryHandsNoMore();
    process.exit(0);
  };
  // `on`, not `once`: Ctrl+C under `npm start` sends SIGINT twice (the terminal's to the group, and npm's own),
  // and a second signal without a listener would kill the process half-way through stopping. The shutdown
  // timeout bounds the stop whatever arrives. A worker leaves Ctrl+C (sent to the whole group) to its primary,
  // which drains every worker; SIGTERM sent to a worker alone stops it at once, and the primary replaces it.
  process.on('SIGINT', () => {
    if (!worker) void stop('SIGINT', config.drainDelayMs);
  });
  process.on('SIGTERM', () => void stop('SIGTERM', worker ? 0 : config.drainDelayMs));
  if (worker) {
    process.on('message', (message: unknown) => {
      if (!isPrimaryMessage(message) || message.type === 'ewa:closed!') return;
      if (message.type === 'ewa:drain') void stop('the primary', message.delayMs);
      else if (message.type === 'ewa:ping') send({ type: 'ewa:pong' });
      else if (servers.metrics)
        void servers.metrics.registry.getMetricsAsJSON().then((metrics) => {
          send({ type: 'ewa:metrics', id: message.id, metrics });
        });
    });
  }
  // The REST listener opens last: once it answers, the other two listen too (health checks and scripts probe it).
  const listeners = [
    [servers.auth, config.auth.port, 'EWA_AUTH_PORT'],
    [servers.payments, config.payments.port, 'EWA_PAYMENTS_PORT'],
    [servers.api, config.api.port, 'EWA_API_PORT'],
  ] as const;
  for (const [app, port, variable] of listeners) {
    try {
      await app.listen({ port, host: config.host });
    } catch (error) {
      await Promise.all(apps.map((each) => each.close()));
      await database.close();
      throw listenFailure(error, {
        host: config.host,
        hostVariable: 'EWA_HOST',
        port,
        portVariable: variable,
      });
    }
  }
  if (servers.metrics && config.metrics && !worker) {
    try {
      metricsServer = await startMetricsServer(servers.metrics, config.metrics);
    } catch (error) {
      await Promise.all(apps.map((each) => each.close()));
      await database.close();
      throw listenFailure(error, {
        host: config.metrics.host,
        hostVariable: 'EWA_METRICS_HOST',
        port: config.metrics.port,
        portVariable: 'EWA_METRICS_PORT',
      });
    }
  }
  const { dataDir } = config.database.kind === 'pglite' ? config.database : { dataDir: ':memory:' };
  const { runCommand } = context;
  if (dataDir !== ':memory:' && runCommand) {
    // `ewa` commands run here while this process holds the embedded database (command-socket.ts).
    commandSocket = await startCommandSocket(dataDir, (request, stdout, stderr) =>
      runCommand(request.argv, {
        ...context,
        stdout,
        stderr,
        cwd: request.cwd,
        database: { config, database },
      }),
    );
  }
  if (config.money.schedulerEnabled) scheduler.start();
  // Every process sends what its own and others' money changes wrote to the outbox (FOR UPDATE SKIP LOCKED).
  servers.money.outbox.start(config.money.outbox.pollMs);
  servers.webhooks.dispatcher.start(config.money.outbox.pollMs);
  if (worker) {
    send({ type: 'ewa:ready' });
    return 0;
  }
  writeLine(context.stdout, runningBanner(config, metricsServer?.port));
  return 0;
}

/**
 * The start's one line when a listener cannot open, naming the setting to change; an error of another kind is
 * returned as it is.
 */
export function listenFailure(
  error: unknown,
  where: { host: string; hostVariable: string; port: number; portVariable: string },
): unknown {
  const { host, hostVariable, port, portVariable } = where;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `${host}:${port} is in use by another process (EADDRINUSE): stop it, or set ${portVariable} to a free port.`,
      );
    case 'EACCES':
      return new ConfigError(
        `${host}:${port}: this user may not listen on port ${port} (EACCES): set ${portVariable} to a port above 1023.`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
      return new ConfigError(
        `${hostVariable} is ${host}, which is not an address of this machine (${(error as NodeJS.ErrnoException).code}): ` +
          'set it to one of its addresses, like 127.0.0.1, or 0.0.0.0 for all of them.',
      );
    default:
      return error;
  }
}

function send(message: WorkerMessage): void {
  process.send?.(message);
}

/** Waits for the primary's `ewa:closed!` (a second at most: a primary that does not answer is gone). */
function primaryHandsNoMore(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve();
    };
    const onMessage = (message: unknown) => {
      if (isPrimaryMessage(message) && message.type === 'ewa:closed!') done();
    };
    const timer = setTimeout(done, 1000);
    process.on('message', onMessage);
    send({ type: 'ewa:closed' });
  });
}

/** What `ewa serve` prints once it serves: where each listener is. */
export function runningBanner(config: Config, metricsPort: number | undefined, workers?: number): string {
  const where = config.database.kind === 'pglite' ? `embedded, in ${config.database.dataDir}` : 'PostgreSQL';
  const processes = workers === undefined ? '' : `, ${workers} workers`;
  return [
    '',
    `EWA Server is running (${config.env}, database: ${where}${processes})`,
    `  REST API            ${config.api.publicUrl}/rest   (reference: ${config.api.publicUrl}/rest/docs)`,
    `  Authorization       ${config.auth.publicUrl}`,
    `  Card tokenization   ${config.payments.publicUrl}`,
    ...(metricsPort !== undefined && config.metrics
      ? [`  Metrics             http://${hostInUrl(config.metrics.host)}:${metricsPort}/metrics`]
      : []),
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** An IPv6 address goes in brackets in a URL. */
function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
