import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export const REPORT = join(import.meta.dirname, '..', 'BENCHMARKS.md');

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

/**
 * Replaces one scenario's section of BENCHMARKS.md (between its markers), keeping the others, so that each
 * scenario can be re-run alone.
 */
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
