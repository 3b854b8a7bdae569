import packageJson from '../../package.json' with { type: 'json' };
import { ConfigError, loadConfig } from '../config.ts';
import { Scheduler } from '../jobs/scheduler.ts';
import { serverJobs } from '../jobs/server-jobs.ts';
import { type MetricsServer, startMetricsServer } from '../platform/metrics-server.ts';
import { describeDemoSeed, seedDemoDataOnce } from '../seed/demo.ts';
import { buildServer } from '../server.ts';
import { webhookJobs } from '../webhooks/webhook-jobs.ts';
import { type Command, writeLine } from './command.ts';
import { type CommandSocket, startCommandSocket } from './command-socket.ts';
import { openMigratedDatabase } from './open-database.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Start the REST API, authorization server and card tokenization listeners',
  help: [
    'Usage: ewa serve',
    '',
    'Opens the database (creating the embedded one on first start), applies migrations, seeds the sandbox',
    'demo data once (EWA_SEED_DEMO) and listens on EWA_API_PORT, EWA_AUTH_PORT and EWA_PAYMENTS_PORT;',
    'with EWA_METRICS_PORT set, also on that port for Prometheus (GET /metrics, docs/operators/metrics.md).',
    'SIGINT or SIGTERM stops accepting, finishes requests in flight, closes the database and exits 0.',
  ].join('\n'),
  options: {},
  async run(_flags, _positionals, context) {
    const config = loadConfig(context.env);
    // Before the database opens: its statements become spans of the requests that run them.
    const tracing = config.tracing
      ? (await import('../platform/tracing.ts')).Tracing.start(config.tracing, packageJson.version)
      : undefined;
    const { database } = await openMigratedDatabase(context, config);
    if (config.seedDemoData) {
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
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      writeLine(context.stdout, `Received ${signal}: finishing requests in flight, then stopping.`);
      const force = setTimeout(() => {
        writeLine(
          context.stderr,
          `Requests still open after ${config.shutdownTimeoutMs} ms: exiting anyway.`,
        );
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
      process.exit(0);
    };
    // `on`, not `once`: Ctrl+C under `npm start` sends SIGINT twice (the terminal's to the group, and npm's own),
    // and a second signal without a listener would kill the process half-way through stopping. The shutdown
    // timeout bounds the stop whatever arrives.
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    const listeners = [
      [servers.api, config.api.port, 'EWA_API_PORT'],
      [servers.auth, config.auth.port, 'EWA_AUTH_PORT'],
      [servers.payments, config.payments.port, 'EWA_PAYMENTS_PORT'],
    ] as const;
    for (const [app, port, variable] of listeners) {
      try {
        await app.listen({ port, host: config.host });
      } catch (error) {
        await Promise.all(apps.map((each) => each.close()));
        await database.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        throw new ConfigError(
          `${config.host}:${port} is in use by another process (EADDRINUSE): stop it, or set ${variable} to a free port.`,
        );
      }
    }
    if (servers.metrics && config.metrics) {
      try {
        metricsServer = await startMetricsServer(servers.metrics, config.metrics);
      } catch (error) {
        await Promise.all(apps.map((each) => each.close()));
        await database.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        throw new ConfigError(
          `${config.metrics.host}:${config.metrics.port} is in use by another process (EADDRINUSE): stop it, or set EWA_METRICS_PORT to a free port.`,
        );
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
    const where =
      config.database.kind === 'pglite' ? `embedded, in ${config.database.dataDir}` : 'PostgreSQL';
    writeLine(
      context.stdout,
      [
        '',
        `EWA Server is running (${config.env}, database: ${where})`,
        `  REST API            ${config.api.publicUrl}/rest   (reference: ${config.api.publicUrl}/rest/docs)`,
        `  Authorization       ${config.auth.publicUrl}`,
        `  Card tokenization   ${config.payments.publicUrl}`,
        ...(metricsServer && config.metrics
          ? [`  Metrics             http://${hostInUrl(config.metrics.host)}:${metricsServer.port}/metrics`]
          : []),
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
    return 0;
  },
};

/** An IPv6 address goes in brackets in a URL. */
function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
