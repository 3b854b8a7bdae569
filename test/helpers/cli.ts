import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { CliContext } from '../../src/cli/command.ts';
import { createTestDatabase } from './test-database.ts';

/** A CLI context whose output the test reads back. */
export function capture(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (lines: string[]) =>
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
  const context: CliContext = {
    env: { EWA_LOG_LEVEL: 'silent', ...env },
    stdout: sink(out),
    stderr: sink(err),
  };
  return { context, stdout: () => out.join(''), stderr: () => err.join('') };
}

/**
 * Environment for a series of CLI runs on one database: a schema of its own on PostgreSQL, or files of the
 * embedded database in a temporary folder (an in-memory one would not outlive a command).
 */
export async function cliDatabaseEnv(t: TestContext): Promise<Record<string, string>> {
  const target = await createTestDatabase(t);
  if (target.config.kind === 'postgres') return target.env;
  const dir = mkdtempSync(join(tmpdir(), 'ewa-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { EWA_DATA_DIR: dir };
}
