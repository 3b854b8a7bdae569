import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import { type DatabaseReading, type MetricsOptions, readDatabaseMetrics } from './metrics-database.ts';

export type { MetricsOptions } from './metrics-database.ts';

import { observe, RequestMetrics, type RequestSeries } from './metrics-http.ts';

/** The three public listeners, as the `listener` label names them. */
export type ListenerName = 'api' | 'auth' | 'payments';

/** The `route` of a request no route matched: one value however many paths are tried. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** A WeakMap key for a request whose route context has no config (none is known to; a missing key would throw). */
const NO_ROUTE_CONFIG = {};

/**
 * Every metric of one process, on a registry of its own (never prom-client's global one, so that two servers in
 * one process, as in the tests, keep theirs apart). HTTP metrics are counted as requests end; the database,
 * pool and scheduler gauges are read when Prometheus scrapes, so that they cost nothing between scrapes.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #requests = new RequestMetrics();
  readonly #options: MetricsOptions;
  /** The reading in flight: the gauges of one scrape share it, and a slow one is not started again beside itself. */
  #reading: Promise<DatabaseReading> | undefined;

  constructor(options: MetricsOptions) {
    this.#options = options;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#requests.register(this.registry);
    this.#poolGauges(registers);
    this.#databaseGauges(registers);
  }

  /** Counts requests of one listener: one counter increment and one histogram observation per response. */
  readonly httpPlugin = fp(
    async (app: FastifyInstance, { listener }: { listener: ListenerName }) => {
      // Series by route config (one object per route), method and status: after the first request of each, a
      // response costs three map look-ups and no label string built or hashed.
      const byRoute = new WeakMap<object, Map<string, Map<number, RequestSeries>>>();
      const seriesOf = (request: FastifyRequest, reply: FastifyReply): RequestSeries => {
        const config = (request.routeOptions.config ?? NO_ROUTE_CONFIG) as object & { url?: string };
        let byMethod = byRoute.get(config);
        if (!byMethod) {
          byMethod = new Map();
          byRoute.set(config, byMethod);
        }
        let byStatus = byMethod.get(request.method);
        if (!byStatus) {
          byStatus = new Map();
          byMethod.set(request.method, byStatus);
        }
        let series = byStatus.get(reply.statusCode);
        if (!series) {
          // The pattern, never the path: `/rest/accounts/:id`, and one value for every path no route matched.
          series = this.#requests.series({
            listener,
            method: request.method,
            route: config.url ?? UNMATCHED_ROUTE,
            status: String(reply.statusCode),
          });
          byStatus.set(reply.statusCode, series);
        }
        return series;
      };
      app.addHook('onResponse', async (request, reply) => {
        const series = seriesOf(request, reply);
        series.requests += 1;
        observe(series.duration, reply.elapsedTime / 1000);
      });
    },
    { name: 'metrics', fastify: '5.x' },
  );

  readonly contentType = this.registry.contentType;

  /** The text Prometheus scrapes. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  #poolGauges(registers: Registry[]): void {
    const { database } = this.#options;
    const gauge = (name: string, help: string, read: (stats: ReturnType<Database['poolStats']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(database.poolStats()));
        },
      });
    gauge('ewa_db_pool_connections_in_use', 'Database connections lent out to work now.', (s) => s.inUse);
    gauge('ewa_db_pool_connections_idle', 'Database connections open and free.', (s) => s.idle);
    gauge(
      'ewa_db_pool_connections_max',
      'The most connections the pool opens (EWA_DB_POOL_SIZE).',
      (s) => s.max,
    );
    gauge(
      'ewa_db_pool_waiting',
      'Work waiting for a database connection; above 0 for long, the pool is too small or the database slow.',
      (s) => s.waiting,
    );
  }

  #databaseGauges(registers: Registry[]): void {
    const read = () => this.#read();
    new Gauge({
      name: 'ewa_metrics_database_up',
      // With workers, the primary adds their metrics together: the lowest answer for this, the highest for the
      // database's own figures, which every worker reads alike, rather than their sum.
      aggregator: 'min',
      help: '1 when the database part of this scrape was read within its time limit, else 0 (its gauges are then left out).',
      registers,
      async collect() {
        this.set((await read()).ok ? 1 : 0);
      },
    });
    new Gauge({
      name: 'ewa_outbox_depth',
      aggregator: 'max',
      help: 'Messages in the outbox not yet sent, by topic (rail.payment, webhook.delivery).',
      labelNames: ['topic'],
      registers,
      async collect() {
        this.reset();
        for (const topic of (await read()).outbox ?? []) this.set({ topic: topic.topic }, topic.depth);
      },
    });
    new Gauge({
      name: 'ewa_outbox_lag_seconds',
      aggregator: 'max',
      help: 'How long the oldest message that is due has waited to be sent, by topic; 0 when none is due.',
      labelNames: ['topic'],
      registers,
      async collect() {
        this.reset();
        for (const topic of (await read()).outbox ?? []) this.set({ topic: topic.topic }, topic.lagSeconds);
      },
    });
    new Gauge({
      name: 'ewa_transfers',
      aggregator: 'max',
      help: 'Transfers by status; only PENDING is counted (from its partial index): the others grow without end.',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        const { pendingTransfers } = await read();
        if (pendingTransfers !== undefined) this.set({ status: 'PENDING' }, pendingTransfers);
      },
    });
    new Gauge({
      name: 'ewa_scheduled_job_last_success_age_seconds',
      aggregator: 'max',
      help: 'Time since the latest successful run of each scheduled job ended; absent until its first success.',
      labelNames: ['job'],
      registers,
      async collect() {
        this.reset();
        for (const job of (await read()).jobs ?? []) {
          if (job.lastSuccessAgeSeconds !== undefined) this.set({ job: job.name }, job.lastSuccessAgeSeconds);
        }
      },
    });
    const { jobs, now } = this.#options;
    new Gauge({
      name: 'ewa_scheduled_job_interval_seconds',
      aggregator: 'max',
      help: 'How often each scheduled job falls due: its last-success age should stay below about twice this.',
      labelNames: ['job'],
      registers,
      collect() {
        this.reset();
        const at = now();
        // A job with nothing due (ach-files on the sandbox rail) has no interval to be late against.
        for (const job of jobs)
          if (job.intervalSeconds !== undefined && job.runKeyAt(at) !== undefined)
            this.set({ job: job.name }, job.intervalSeconds);
      },
    });
  }

  #read(): Promise<DatabaseReading> {
    this.#reading ??= readDatabaseMetrics(this.#options).finally(() => {
      this.#reading = undefined;
    });
    return withDeadline(this.#reading, this.#options.databaseTimeoutMs);
  }
}

/** The reading, or `{ ok: false }` once `timeoutMs` has passed or if it fails: a scrape never waits longer. */
async function withDeadline(reading: Promise<DatabaseReading>, timeoutMs: number): Promise<DatabaseReading> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<DatabaseReading>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false }), timeoutMs);
  });
  try {
    return await Promise.race([reading.catch((): DatabaseReading => ({ ok: false })), late]);
  } finally {
    clearTimeout(timer);
  }
}
