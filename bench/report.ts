import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export const REPORT = join(import.meta.dirname, '..', 'BENCHMARKS.md');

/** CPU time counters of the whole machine (Linux /proc/stat), to tell how much of it the host took away. */
function cpuTimes(): { steal: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { steal: fields[7] ?? 0, total: fields.reduce((sum, value) => sum + value, 0) };
  } catch {
    return undefined;
  }
}

/**
 * Runs a scenario and says what share of CPU time the virtual machine's host took (steal) meanwhile: on a shared
 * host a figure measured under heavy steal is lower than the code deserves, and the report says so.
 */
export async function withSteal<T>(work: () => Promise<T> | T): Promise<{ result: T; stealNote: string }> {
  const before = cpuTimes();
  const result = await work();
  const after = cpuTimes();
  if (!before || !after || after.total === before.total) return { result, stealNote: '' };
  const steal = ((after.steal - before.steal) / (after.total - before.total)) * 100;
  return {
    result,
    stealNote: `CPU steal by the host during this scenario: ${steal.toFixed(0)} % (0 % on a quiet machine).`,
  };
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

/**
 * Replaces one scenario's section of BENCHMARKS.md (between its markers), keeping the others, so that each
 * scenario can be re-run alone.
 */
/** Adds a line to the end of a section already written (before its date line). */
export function appendNote(name: string, note: string): void {
  const text = readFileSync(REPORT, 'utf8');
  const pattern = new RegExp(`(<!-- bench:${name} -->[\\s\\S]*?)(\\n\\n_Measured)`);
  writeFileSync(REPORT, text.replace(pattern, `$1\n\n${note}$2`));
}

export function writeSection(name: string, body: string): void {
  const header =
    '# Benchmarks\n\nFigures written by `npm run bench` (see `bench/`). Each section says when, and on what machine, it was measured.\n';
  const text = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : header;
  const section = `<!-- bench:${name} -->\n${body.trim()}\n\n_Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}._\n<!-- /bench:${name} -->`;
  const pattern = new RegExp(`<!-- bench:${name} -->[\\s\\S]*?<!-- /bench:${name} -->`);
  writeFileSync(
    REPORT,
    pattern.test(text) ? text.replace(pattern, section) : `${text.trimEnd()}\n\n${section}\n`,
  );
}
