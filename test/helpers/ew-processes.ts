import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');

/** The public URLs every process of one test shares: tokens name them as audience and issuer. */
export const SHARED_PUBLIC_URLS = {
  EWA_BASE_URL: 'https://api.ewa.test',
  EWA_AUTH_URL: 'https://auth.ewa.test',
  EWA_PAYMENTS_URL: 'https://payments.ewa.test',
};

/** A child process of the `ewa` command, with what it printed kept for the failure message. */
export interface EwaProcess {
  child: ChildProcess;
  /** stdout and stderr together, as printed so far. */
  output(): string;
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** kill -9, and wait until it is gone: no shutdown hook runs, in-flight work is cut off. */
  kill(): Promise<void>;
}

/**
 * Runs `ewa <args>` as a child process: only PATH and the given environment reach it. It keeps the last
 * `keepChars` of what the process printed: the tail is what explains a failure, and a long run must not grow
 * without bound.
 */
export function spawnEwa(args: string[], env: Record<string, string>, keepChars = 20_000): EwaProcess {
  let text = '';
  const child = spawn(process.execPath, [MAIN, ...args], {
    // One process, unless a test asks for workers: on PostgreSQL the default is one per core.
    env: { PATH: process.env.PATH ?? '', EWA_LOG_LEVEL: 'warn', EWA_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    text = (text + chunk).slice(-keepChars);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => text,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ApiProcess extends EwaProcess {
  /** Where this process's REST listener really is (its public URL is the shared one). */
  apiUrl: string;
  /** Where this process's authorization server really is. */
  authUrl: string;
  /** Where this process's card tokenization listener really is. */
  paymentsUrl: string;
  /** SIGTERM: finish requests in flight, close the database, exit 0. */
  stop(): Promise<number | null>;
}

/**
 * `ewa serve` on free ports of 127.0.0.1, ready when /rest/health answers (401 without a token). Several of these
 * on one database are the deployment the money rules must hold in: they share nothing but PostgreSQL.
 */
export async function startApiProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ApiProcess> {
  // A port found free can be taken by another test's server before this one listens on it: then try new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startApiProcessOnce(env, timeoutMs);
    } catch (error) {
      if (attempt >= 3 || !String((error as Error).message).includes('EADDRINUSE')) throw error;
    }
  }
}

async function startApiProcessOnce(env: Record<string, string>, timeoutMs: number): Promise<ApiProcess> {
  const [api, auth, payments] = [await freePort(), await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${api}`;
  const running = spawnEwa(['serve'], {
    EWA_HOST: '127.0.0.1',
    EWA_API_PORT: String(api),
    EWA_AUTH_PORT: String(auth),
    EWA_PAYMENTS_PORT: String(payments),
    ...SHARED_PUBLIC_URLS,
    EWA_SCHEDULER: 'false',
    EWA_SEED_DEMO: 'false',
    ...env,
  });
  try {
    await waitUntilServing(running, apiUrl, timeoutMs);
  } catch (error) {
    await running.kill();
    throw error;
  }
  return {
    ...running,
    apiUrl,
    authUrl: `http://127.0.0.1:${auth}`,
    paymentsUrl: `http://127.0.0.1:${payments}`,
    async stop() {
      if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGTERM');
      return running.exited;
    },
  };
}

/** Resolves once `ewa serve` answers /rest/health at `apiUrl` (401 without a token: up, and asking for one). */
export async function waitUntilServing(
  running: EwaProcess,
  apiUrl: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (running.child.exitCode !== null)
      throw new Error(`ewa serve exited before it was healthy:\n${running.output()}`);
    try {
      if ((await fetch(`${apiUrl}/rest/health`)).status === 401) return;
    } catch {}
    if (Date.now() > deadline)
      throw new Error(`ewa serve gave no healthy answer within ${timeoutMs} ms:\n${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
