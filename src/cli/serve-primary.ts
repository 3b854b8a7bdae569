import cluster, { type Worker } from 'node:cluster';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import type { Config } from '../config.ts';
import { type MetricsServer, startMetricsServer } from '../platform/metrics-server.ts';
import { describeDemoSeed, seedDemoDataOnce } from '../seed/demo.ts';
import { type CliContext, writeLine } from './command.ts';
import { openMigratedDatabase } from './open-database.ts';
import { listenFailure, runningBanner } from './serve-process.ts';
import { isWorkerMessage, type PrimaryMessage } from './worker-messages.ts';

/** A worker that is not ready this long after it was forked is given up (a rolling restart then stops). */
const READY_TIMEOUT_MS = 120_000;
/** Replacing a worker that died waits 0.5 s, doubling at each death in a row up to this: never a hot loop. */
const REPLACE_DELAY_MAX_MS = 30_000;
const REPLACE_DELAY_FIRST_MS = 500;
/** A worker that served this long before it died resets the doubling: it was not a crash loop. */
const STABLE_AFTER_MS = 60_000;
/**
 * In a rolling restart, how long the old worker keeps serving once its replacement is ready, answering each request
 * with `Connection: close`, so that kept-alive connections move to the other workers before its listeners close.
 */
const ROLLING_HANDOVER_MS = 1000;
/** How long a scrape waits for the workers' metrics; a worker that has not answered by then is left out. */
const SCRAPE_TIMEOUT_MS = 2000;

interface Slot {
  worker: Worker;
  readyAtMs: number | undefined;
  /** When it last showed its event loop runs (ready, or an answer to a ping). */
  answeredAtMs: number;
  /** Killed by the primary for not answering (#watch). */
  stalled?: boolean;
  /** Asked to stop by the primary: its exit is expected, not replaced. */
  retiring: boolean;
  /**
   * Replaced if it dies before it is ready: a replacement of a worker that died is. A worker of the first start or of
   * a rolling restart is not: its caller reports the failure instead.
   */
  replaceIfEarlyDeath: boolean;
}

/**
 * The primary of `ewa serve --workers N` (node:cluster): it serves nothing itself. It migrates and seeds once,
 * forks N workers that share the three ports (the primary accepts connections and hands them round), replaces
 * a worker that dies, restarts them one at a time on SIGHUP, drains them all on SIGTERM or SIGINT, and serves the
 * workers' metrics added together on EWA_METRICS_PORT.
 */
export async function runPrimary(context: CliContext, config: Config, workerCount: number): Promise<number> {
  const { database } = await openMigratedDatabase(context, config);
  try {
    if (config.seedDemoData) {
      const outcome = await seedDemoDataOnce(database.db, new Date(), config, { soleProcess: false });
      if (outcome !== 'PRESENT') writeLine(context.stdout, describeDemoSeed(outcome));
    }
  } finally {
    await database.close();
  }
  const primary = new Primary(context, config);
  // Installed before the workers start: SIGHUP's default would end the primary. It restarts nothing until started.
  let started = false;
  process.on('SIGHUP', () => {
    if (started) void primary.rollingRestart();
  });
  let metricsServer: MetricsServer | undefined;
  const stop = (signal: string) => {
    void primary.stop(signal).then(async (code) => {
      await metricsServer?.close();
      process.exit(code);
    });
  };
  // Before the workers start: a stop asked while they start drains them once they are ready.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  if (!(await primary.start(workerCount))) return 1;
  if (primary.stopping) return 0;
  started = true;
  if (config.metrics) {
    try {
      metricsServer = await startMetricsServer(primary.metrics, config.metrics);
    } catch (error) {
      await primary.stop('a failed start', 0);
      throw listenFailure(error, {
        host: config.metrics.host,
        hostVariable: 'EWA_METRICS_HOST',
        port: config.metrics.port,
        portVariable: 'EWA_METRICS_PORT',
      });
    }
  }
  writeLine(context.stdout, runningBanner(config, metricsServer?.port, workerCount));
  return 0;
}

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** Counters and histograms only: what may be added to a host's totals after the worker that counted it is gone. */
function countsOf(metrics: WorkerMetrics): WorkerMetrics {
  return metrics.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
}

class Primary {
  readonly #context: CliContext;
  readonly #config: Config;
  readonly #slots = new Map<number, Slot>();
  #stopping: Promise<number> | undefined;
  #restarting = false;
  #deathsInARow = 0;
  readonly #watchdog: NodeJS.Timeout;
  #watchedAtMs = performance.now();
  readonly #replacements = new Set<NodeJS.Timeout>();
  readonly #registry = new Registry();
  readonly #restarts = new Counter({
    name: 'ewa_worker_restarts_total',
    help: 'Workers started again by the primary: after one died (reason="died"), after one was killed for not answering (reason="stalled"), or in a rolling restart (reason="rolling").',
    labelNames: ['reason'],
    registers: [this.#registry],
  });
  #scrapeId = 0;
  readonly #scrapes = new Map<number, (metrics: WorkerMetrics) => void>();
  /** Each worker's counts as it last answered: used while it does not answer, and kept once it is gone. */
  readonly #lastCounts = new Map<number, WorkerMetrics>();
  /** The counts of the workers that are gone, added together, so that the host's counters never step down. */
  #departedCounts: WorkerMetrics = [];

  constructor(context: CliContext, config: Config) {
    this.#context = context;
    this.#config = config;
    const slots = this.#slots;
    new Gauge({
      name: 'ewa_primary_resident_memory_bytes',
      help: "The primary's own resident memory (process_resident_memory_bytes is its workers' summed).",
      registers: [this.#registry],
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'ewa_workers_ready',
      help: 'Workers of this primary that are serving.',
      registers: [this.#registry],
      collect() {
        this.set([...slots.values()].filter((slot) => slot.readyAtMs !== undefined && !slot.retiring).length);
      },
    });
    cluster.on('message', (worker, message: unknown) => {
      if (!isWorkerMessage(message)) return;
      const slot = this.#slots.get(worker.id);
      if (slot) slot.answeredAtMs = performance.now();
      if (message.type === 'ewa:metrics') this.#scrapes.get(message.id)?.(message.metrics);
      else if (message.type === 'ewa:ready' && slot) slot.readyAtMs = performance.now();
    });
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    const stallMs = config.workerStallTimeoutMs;
    this.#watchdog = setInterval(() => this.#watch(stallMs), Math.min(5000, stallMs / 4));
    this.#watchdog.unref();
  }

  /**
   * Pings every serving worker; one that has not answered for `stallMs` is killed, and #exited starts another.
   * Its connections would otherwise wait on it forever: the primary hands each new one to the next worker in turn.
   */
  #watch(stallMs: number): void {
    const now = performance.now();
    // The primary's own loop held up (the machine stalled, a swap storm): the workers' answers may be waiting in
    // its channel behind this timer, and are not late. They are timed again from now.
    const primaryLate = now - this.#watchedAtMs > stallMs / 2;
    this.#watchedAtMs = now;
    for (const slot of this.#slots.values()) {
      if (primaryLate) slot.answeredAtMs = now;
      const { worker } = slot;
      if (slot.readyAtMs === undefined || slot.retiring || this.#stopping || worker.isDead()) continue;
      if (now - slot.answeredAtMs < stallMs) {
        this.#send(worker, { type: 'ewa:ping' });
        continue;
      }
      this.#say(
        this.#context.stderr,
        `Worker ${worker.process.pid} has not answered for ${Math.round((now - slot.answeredAtMs) / 1000)} s (EWA_WORKER_STALL_TIMEOUT_MS): killing it.`,
      );
      slot.answeredAtMs = now; // one kill a stall, even if the signal takes a moment
      slot.stalled = true;
      worker.process.kill('SIGKILL');
    }
  }

  /** Forks the first workers and waits until each is ready; false (all stopped) when one fails to start. */
  async start(count: number): Promise<boolean> {
    const started = await Promise.allSettled(Array.from({ length: count }, () => this.#fork()));
    if (started.every((outcome) => outcome.status === 'fulfilled')) return true;
    this.#say(this.#context.stderr, 'A worker did not start (its message is above): stopping.');
    await this.stop('a failed start', 0);
    return false;
  }

  /** The metrics of every worker added together (or the highest, for what they read from the shared database). */
  readonly metrics = {
    contentType: this.#registry.contentType,
    scrape: async (): Promise<string> => {
      const workers = [...this.#slots.values()].filter((slot) => slot.worker.isConnected());
      const replies = await Promise.all(
        workers.map(async ({ worker }) => {
          const reply = await this.#workerMetrics(worker);
          if (reply) this.#lastCounts.set(worker.id, countsOf(reply));
          // A worker that did not answer in time: its counts as they last were, its gauges left out.
          return reply ?? this.#lastCounts.get(worker.id);
        }),
      );
      const all = [
        await this.#registry.getMetricsAsJSON(),
        this.#departedCounts,
        ...replies.filter((reply) => reply !== undefined),
      ];
      return AggregatorRegistry.aggregate(all).metrics();
    },
  };

  /** SIGHUP: one worker at a time, start its replacement, wait until it is ready, then drain the old one. */
  async rollingRestart(): Promise<void> {
    if (this.#stopping) return;
    if (this.#restarting) {
      this.#say(this.#context.stderr, 'SIGHUP: a rolling restart is already running.');
      return;
    }
    this.#restarting = true;
    this.#say(this.#context.stdout, 'SIGHUP: restarting the workers one at a time.');
    try {
      for (const slot of [...this.#slots.values()]) {
        if (this.#stopping) return;
        if (slot.retiring || !slot.worker.isConnected()) continue;
        try {
          await this.#fork();
        } catch (error) {
          // Stopped while it started: not a failure to report.
          if (this.#stopping) return;
          this.#say(
            this.#context.stderr,
            `SIGHUP: a new worker did not start (${(error as Error).message}): the old workers keep serving.`,
          );
          return;
        }
        this.#restarts.inc({ reason: 'rolling' });
        await this.#retire(slot, ROLLING_HANDOVER_MS);
      }
      this.#say(this.#context.stdout, 'SIGHUP: every worker was restarted.');
    } finally {
      this.#restarting = false;
    }
  }

  /** Asked to stop: it drains and exits, whatever else was under way. */
  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  /** Drains every worker (each waits `drainDelayMs` with /readyz 503, then finishes its requests); 0 when all exit 0. */
  stop(why: string, drainDelayMs = this.#config.drainDelayMs): Promise<number> {
    this.#stopping ??= (async () => {
      if (why.startsWith('SIG'))
        this.#say(this.#context.stdout, `Received ${why}: draining the workers, then stopping.`);
      for (const timer of this.#replacements) clearTimeout(timer);
      clearInterval(this.#watchdog);
      const codes = await Promise.all(
        [...this.#slots.values()].map((slot) => this.#retire(slot, drainDelayMs)),
      );
      return codes.every((code) => code === 0) ? 0 : 1;
    })();
    return this.#stopping;
  }

  #fork(replaceIfEarlyDeath = false): Promise<Worker> {
    const worker = cluster.fork();
    const slot: Slot = {
      worker,
      readyAtMs: undefined,
      answeredAtMs: performance.now(),
      retiring: false,
      replaceIfEarlyDeath,
    };
    this.#slots.set(worker.id, slot);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        worker.process.kill('SIGKILL');
        reject(new Error(`not ready within ${READY_TIMEOUT_MS / 1000} s`));
      }, READY_TIMEOUT_MS);
      const onMessage = (message: unknown) => {
        if (!isWorkerMessage(message) || message.type !== 'ewa:ready') return;
        clearTimeout(timer);
        worker.off('exit', onExit);
        worker.off('message', onMessage);
        resolve(worker);
      };
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        reject(new Error(`it exited before it was ready (${signal ?? `exit code ${code}`})`));
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });
  }

  /** Asks a worker to drain and waits for its exit; kills it if it outlives its own shutdown timeout. */
  #retire(slot: Slot, drainDelayMs: number): Promise<number> {
    const { worker } = slot;
    slot.retiring = true;
    if (worker.isDead()) return Promise.resolve(worker.process.exitCode ?? 1);
    return new Promise((resolve) => {
      const limitMs = drainDelayMs + this.#config.shutdownTimeoutMs + 5000;
      const limit = setTimeout(() => {
        this.#say(
          this.#context.stderr,
          `Worker ${worker.process.pid} did not stop within ${limitMs / 1000} s of being asked: killing it.`,
        );
        worker.process.kill('SIGKILL');
      }, limitMs);
      const drain = () => this.#send(worker, { type: 'ewa:drain', delayMs: drainDelayMs });
      const onReady = (message: unknown) => {
        if (isWorkerMessage(message) && message.type === 'ewa:ready') drain();
      };
      worker.once('exit', (code) => {
        clearTimeout(limit);
        worker.off('message', onReady);
        resolve(code ?? 1);
      });
      // A worker still starting (SIGTERM during a rolling restart) has no ear for it yet: asked once it is ready.
      if (slot.readyAtMs === undefined) worker.on('message', onReady);
      else drain();
    });
  }

  /** A worker that is gone leaves its last counts to the host's: a counter that stepped down would read as a reset. */
  async #keepCountsOf(worker: Worker): Promise<void> {
    const counts = this.#lastCounts.get(worker.id);
    this.#lastCounts.delete(worker.id);
    if (counts === undefined) return;
    this.#departedCounts = await AggregatorRegistry.aggregate([
      this.#departedCounts,
      counts,
    ]).getMetricsAsJSON();
  }

  #exited(worker: Worker, code: number | null, signal: string | null): void {
    void this.#keepCountsOf(worker);
    const slot = this.#slots.get(worker.id);
    this.#slots.delete(worker.id);
    if (!slot || slot.retiring || this.#stopping) return;
    if (slot.readyAtMs === undefined && !slot.replaceIfEarlyDeath) return;
    const servedMs = slot.readyAtMs === undefined ? 0 : performance.now() - slot.readyAtMs;
    if (servedMs >= STABLE_AFTER_MS) this.#deathsInARow = 0;
    const delayMs = Math.min(REPLACE_DELAY_MAX_MS, REPLACE_DELAY_FIRST_MS * 2 ** this.#deathsInARow);
    this.#deathsInARow += 1;
    this.#say(
      this.#context.stderr,
      `Worker ${worker.process.pid} stopped unexpectedly (${signal ?? `exit code ${code}`}): starting another in ${delayMs} ms.`,
    );
    const timer = setTimeout(() => {
      this.#replacements.delete(timer);
      if (this.#stopping) return;
      this.#restarts.inc({ reason: slot.stalled ? 'stalled' : 'died' });
      this.#fork(true).catch(() => {
        // Its exit was seen by #exited, which schedules the next try with a longer delay.
      });
    }, delayMs);
    this.#replacements.add(timer);
  }

  async #workerMetrics(worker: Worker): Promise<WorkerMetrics | undefined> {
    const id = ++this.#scrapeId;
    try {
      return await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), SCRAPE_TIMEOUT_MS);
        this.#scrapes.set(id, (metrics) => {
          clearTimeout(timer);
          resolve(metrics);
        });
        this.#send(worker, { type: 'ewa:metrics?', id });
      });
    } finally {
      this.#scrapes.delete(id);
    }
  }

  #send(worker: Worker, message: PrimaryMessage): void {
    // A worker that just died has no channel: its exit is handled on its own.
    if (!worker.isConnected()) return;
    worker.send(message, undefined, {}, () => {
      // A channel that closed meanwhile: the worker is exiting, and its exit is handled on its own.
    });
  }

  #say(stream: NodeJS.WritableStream, line: string): void {
    writeLine(stream, `[primary ${process.pid}] ${line}`);
  }
}
