import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** initdb took 3.5–4 s on a 2-core machine; far longer means it is stuck, and the start fails saying so. */
const INITDB_TIMEOUT_MS = 120_000;
/** The most of the child's stderr kept for the error. */
const STDERR_KEPT_BYTES = 4096;

const CHILD = fileURLToPath(new URL('./pglite-initdb-child.ts', import.meta.url));

export interface InitdbOrder {
  /** The directory the cluster is made in; it must not hold one. */
  where: string;
  /** The template file to keep the fresh cluster as, or undefined for none. */
  templateFile: string | undefined;
  startParams: string[] | undefined;
}

/**
 * Makes a cluster on disk with initdb in a process of its own. WebAssembly memory is never given back while its
 * module lives, and initdb's second PostgreSQL beside the first set a serving process's peak and left it about
 * 100 MB larger for its whole life (docs/design/performance.md#memory); a child's memory goes when it exits.
 */
export function initdbInChildProcess(order: InitdbOrder, timeoutMs = INITDB_TIMEOUT_MS): Promise<void> {
  const argument = JSON.stringify({
    where: order.where,
    templateFile: order.templateFile ?? null,
    startParams: order.startParams ?? null,
  });
  // --liftoff-only: V8's optimizing compiler would take hundreds of MB, and a core, for a run of seconds.
  const child = fork(CHILD, [argument], {
    execArgv: ['--liftoff-only'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < STDERR_KEPT_BYTES) stderr += chunk.slice(0, STDERR_KEPT_BYTES - stderr.length);
  });
  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`initdb of the embedded database could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const why = timedOut
        ? `it took longer than ${timeoutMs} ms`
        : stderr.trim() || `it ended with ${signal ?? `exit code ${code}`}`;
      reject(new Error(`initdb of the embedded database in ${order.where} failed: ${why}`));
    });
  });
}
