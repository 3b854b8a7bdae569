import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type HeapConfig, heapConfigOf } from '../config.ts';

/** The V8 flags of `heap` a process was not started with: flags on its command line or in NODE_OPTIONS win. */
export function missingHeapFlags(
  heap: HeapConfig,
  execArgv: readonly string[],
  nodeOptions: string,
): string[] {
  const given = new Set(
    [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split('=')[0]!.replaceAll('_', '-')),
  );
  const wanted: [string, number][] = [
    ['--max-semi-space-size', heap.semiSpaceMb],
    ['--heap-growing-percent', heap.growingPercent],
  ];
  const flags = wanted
    .filter(([name, value]) => value > 0 && !given.has(name))
    .map(([name, value]) => `${name}=${value}`);
  if (heap.wasmLiftoffOnly && !given.has('--liftoff-only') && !given.has('--no-liftoff-only'))
    flags.push('--liftoff-only');
  return flags;
}

/**
 * `ewa serve` starts itself again in place (the same process id, `process.execve`) with the heap flags it lacks,
 * before it loads anything: V8 fixes the young generation's size when the process starts. Cluster workers
 * inherit them (process.execArgv). Where execve is missing (Windows) it serves with V8's own sizing; a bad value
 * is left for loadConfig to report as it reports any other.
 *
 * The new process has Node's compile cache on from its first line (NODE_COMPILE_CACHE, the directory main.ts's
 * enableCompileCache() uses): main.ts, TypeScript too, then comes from the cache, and the type stripper (amaro,
 * about 17 MB of each process's memory) is not loaded at all once the cache is warm.
 */
export function restartWithHeapFlags(env: NodeJS.ProcessEnv): void {
  let heap: HeapConfig;
  try {
    heap = heapConfigOf(env);
  } catch (error) {
    if (error instanceof ConfigError) return;
    throw error;
  }
  const missing = missingHeapFlags(heap, process.execArgv, env.NODE_OPTIONS ?? '');
  if (missing.length === 0 || typeof process.execve !== 'function') return;
  process.execve(
    process.execPath,
    [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)],
    { ...env, NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache') },
  );
}
