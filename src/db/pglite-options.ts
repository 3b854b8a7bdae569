import type { PGliteOptions } from '@electric-sql/pglite';

/** The embedded database's shared buffers: WebAssembly memory of the process that holds it (a development database). */
const PGLITE_SHARED_BUFFERS = '16MB';

/** bigint columns hold minor units; JavaScript numbers are exact up to 2^53, far above any amount we hold. */
export function parseBigint(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} exceeds the safe integer range`);
  return value;
}

/**
 * The options every embedded database opens with, in the serving process or in a process of its own. Imports PGlite:
 * a process on PostgreSQL never calls it.
 */
export async function embeddedOptions(): Promise<PGliteOptions> {
  const { PGlite, types } = await import('@electric-sql/pglite');
  return {
    parsers: { [types.INT8]: parseBigint },
    // PostgreSQL's default of 128 MB of shared buffers is the process's own memory here, all of it touched
    // sooner or later; a development database fits in far less (docs/design/performance.md#memory).
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  };
}
