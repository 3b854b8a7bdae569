import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../test/helpers/free-port.ts';
import { peakRssMb } from './peak-rss.ts';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  authUrl: string;
  paymentsUrl: string;
  /** Milliseconds from spawn to the first answer from /rest/health (401 without a token). */
  readyMs: number;
  stop(): Promise<void>;
}

/** Peak resident sets (MB) of every process of each server stopped since the last takeServerPeaks(). */
const stoppedPeaks: number[][] = [];

/** The peak resident set of each process of each server stopped since the last call, largest first. */
export function takeServerPeaks(): number[] {
  return stoppedPeaks
    .splice(0)
    .flat()
    .sort((a, b) => b - a);
}

/**
 * API processes `ewa serve` runs in the scenarios that honour it (reads): EWA_BENCH_WORKERS, default 1. Above 1 the
 * server is started with `--workers N`; the count is the one place a benchmark says how many cores the server uses.
 */
export function benchWorkers(): number {
  const workers = Number(process.env.EWA_BENCH_WORKERS ?? '1');
  if (!Number.isInteger(workers) || workers < 1)
    throw new Error('EWA_BENCH_WORKERS must be a whole number ≥ 1');
  return workers;
}

export interface ServerOptions {
  /** `ewa serve --workers N` when above 1. */
  workers?: number;
  /** A directory to write the server process's CPU profile to when it stops (`node --cpu-prof`). */
  cpuProfileDir?: string;
}

/** Starts `ewa serve` as a user would, and waits for its health check to answer. */
export async function startServer(
  env: Record<string, string>,
  options: ServerOptions = {},
): Promise<ServerProcess> {
  const [api, auth, payments] = [await freePort(), await freePort(), await freePort()];
  const baseUrl = `http://127.0.0.1:${api}`;
  const authUrl = `http://127.0.0.1:${auth}`;
  const started = performance.now();
  const nodeFlags = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const workers = options.workers ?? 1;
  const serveFlags = workers > 1 ? ['--workers', String(workers)] : [];
  const child = spawn(process.execPath, [...nodeFlags, MAIN, 'serve', ...serveFlags], {
    env: {
      PATH: process.env.PATH ?? '',
      EWA_LOG_LEVEL: 'warn',
      EWA_HOST: '127.0.0.1',
      EWA_API_PORT: String(api),
      EWA_AUTH_PORT: String(auth),
      EWA_PAYMENTS_PORT: String(payments),
      EWA_BASE_URL: baseUrl,
      EWA_AUTH_URL: authUrl,
      // Unset, `ewa serve` on PostgreSQL starts a worker per core: every scenario says how many it measures.
      EWA_WORKERS: String(workers),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error('the server exited before it was healthy');
    try {
      if ((await fetch(`${baseUrl}/rest/health`)).status === 401) break; // up, asking for a token
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const readyMs = performance.now() - started;
  return {
    child,
    baseUrl,
    authUrl,
    paymentsUrl: `http://127.0.0.1:${payments}`,
    readyMs,
    async stop() {
      // Read while they run: VmHWM is each process's peak since it started, the primary's and each worker's.
      if (child.exitCode === null) stoppedPeaks.push(peakRssMb(child.pid ?? -1));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
