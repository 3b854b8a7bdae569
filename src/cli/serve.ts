import cluster from 'node:cluster';
import { checkWorkerCount, loadConfig } from '../config.ts';
import { type Command, type Flags, UsageError } from './command.ts';
import { requireFreePorts } from './free-ports.ts';
import { serveInThisProcess } from './serve-process.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Start the REST API, authorization server and card tokenization listeners',
  help: [
    'Usage: ewa serve [--workers N]',
    '',
    'Opens the database (creating the embedded one on first start), applies migrations, seeds the sandbox',
    'demo data once (EWA_SEED_DEMO) and listens on EWA_API_PORT, EWA_AUTH_PORT and EWA_PAYMENTS_PORT;',
    'with EWA_METRICS_PORT set, also on that port for Prometheus (GET /metrics, docs/operators/metrics.md).',
    'GET /livez and /readyz on each listener are for load balancers.',
    '',
    '  --workers N   processes that serve (node:cluster), sharing the ports; default EWA_WORKERS, else the',
    '                number of cores on PostgreSQL and 1 on the embedded database (which allows only 1).',
    '                With 2 or more, a primary process replaces a worker that dies and restarts them one',
    '                at a time on SIGHUP, with no request lost.',
    '',
    'SIGINT or SIGTERM: /readyz answers 503 for EWA_DRAIN_DELAY_MS, then every process stops accepting,',
    'finishes its requests in flight, closes the database and exits 0.',
  ].join('\n'),
  options: { workers: { type: 'string' } },
  async run(flags, _positionals, context) {
    const config = loadConfig(context.env);
    // A worker runs the same command line as its primary: it serves, whatever --workers says.
    if (cluster.isWorker) {
      try {
        return await serveInThisProcess(context, config);
      } catch (error) {
        // Its channel to the primary would keep a worker that failed to start alive: let it exit with its code.
        process.channel?.unref();
        throw error;
      }
    }
    const workers = workerCount(flags, config);
    // Only a primary loads its code (and prom-client, which it always uses): a worker never does.
    if (workers > 1) return (await import('./serve-primary.ts')).runPrimary(context, config, workers);
    // Before the database: the embedded one's first start is seconds of work a port in use would waste. (With
    // workers, each says so itself; see serve-primary.ts.)
    await requireFreePorts(config);
    return serveInThisProcess(context, config);
  },
};

function workerCount(flags: Flags, config: ReturnType<typeof loadConfig>): number {
  const { workers } = flags;
  if (typeof workers !== 'string') return config.workers.count;
  if (!/^\d+$/.test(workers) || Number(workers) < 1 || Number(workers) > 256)
    throw new UsageError(`--workers must be a whole number from 1 to 256 (got "${workers}").`);
  checkWorkerCount(Number(workers), config.database, '--workers');
  return Number(workers);
}
