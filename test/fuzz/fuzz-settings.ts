import fc from 'fast-check';

/**
 * How the fuzz suite runs, from the environment, so that CI replays the same requests on every run and a
 * person can dig deeper locally:
 * - EWA_FUZZ_SEED: the base seed (each operation's property gets a seed derived from it and its name, so
 *   adding an operation does not change the requests sent to the others);
 * - EWA_FUZZ_RUNS: random requests per operation (examples of the listed classes come on top);
 * - EWA_FUZZ_ANSWER_MS: the longest an answer may take; a bound on hangs, not a benchmark;
 * - EWA_FUZZ_ONLY: fuzz only the operations whose name contains this text (to replay one failure quickly).
 */
function integerFromEnv(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(text)})`);
  return value;
}

export const FUZZ_SEED = integerFromEnv('EWA_FUZZ_SEED', 17_2026, 0, 2 ** 31 - 1);
export const FUZZ_RUNS = integerFromEnv('EWA_FUZZ_RUNS', 10, 1, 1_000_000);
/**
 * 2 s is the bound. It is far above what any request needs here (tens of milliseconds, an argon2 hash
 * at sign-in), so that a loaded CI machine does not trip it; it catches requests that hang or do unbounded
 * work.
 */
export const ANSWER_MS = integerFromEnv('EWA_FUZZ_ANSWER_MS', 2000, 100, 600_000);
const ONLY = process.env.EWA_FUZZ_ONLY ?? '';

/** Whether this operation is fuzzed in this run (EWA_FUZZ_ONLY). */
export function selected(name: string): boolean {
  return ONLY === '' || name.includes(ONLY);
}

/** FNV-1a: a stable number for a name, to derive one seed per property from the base seed. */
function hashOf(name: string): number {
  let hash = 0x811c9dc5;
  for (const unit of Buffer.from(name)) hash = Math.imul(hash ^ unit, 0x01000193) >>> 0;
  return hash;
}

/**
 * The fast-check parameters of one property. The failure report fast-check prints carries the seed and path
 * of the shrunk counterexample; the message we add names the base seed and the operation, to replay it alone:
 * `EWA_FUZZ_SEED=<base> EWA_FUZZ_ONLY='<operation>'`.
 */
export function fuzzParameters<T>(name: string, examples: T[] = [], runs = FUZZ_RUNS): fc.Parameters<T> {
  return {
    seed: (FUZZ_SEED ^ hashOf(name)) >>> 0,
    // fast-check counts the examples among the runs: add them, so that the random runs stay as many.
    numRuns: runs + examples.length,
    examples,
    // Shrinking a failure re-sends requests many times: bound it so that a broken build still ends in CI time
    // (a run takes tens of milliseconds, so a passing property never comes near the bound).
    plugins: [fc.interruptAfterTimeLimit(60_000 + runs * 1000, { failOnInterrupt: true }) as fc.Plugin<T>],
  };
}

/** The line printed beside a failure, to replay one property. */
export function replayHint(name: string): string {
  return `replay: EWA_FUZZ_SEED=${FUZZ_SEED} EWA_FUZZ_ONLY='${name}'`;
}
