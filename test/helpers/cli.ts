import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { CliContext } from '../../src/cli/command.ts';
import { runCli } from '../../src/cli/run.ts';
import { loadConfig } from '../../src/config.ts';
import { type Db, openDatabase } from '../../src/db/database.ts';
import { createTestDatabase } from './test-database.ts';

/** A CLI context whose output the test reads back; its clock is `now` when given. */
export function capture(env: Record<string, string | undefined> = {}, now?: Date) {
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
    ...(now ? { now: () => now } : {}),
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

/** Runs `ewa …` in this process with this environment; its exit code and output. */
export async function ewa(env: Record<string, string>, ...argv: string[]) {
  const run = capture(env);
  const code = await runCli(argv, run.context);
  return { code, stdout: run.stdout(), stderr: run.stderr(), json: () => JSON.parse(run.stdout()) };
}

/** As `ewa`, with the clock of the commands that read it set to `now`. */
export async function ewaAt(now: Date, env: Record<string, string>, ...argv: string[]) {
  const run = capture(env, now);
  const code = await runCli(argv, run.context);
  return { code, stdout: run.stdout(), stderr: run.stderr(), json: () => JSON.parse(run.stdout()) };
}

/** Reads or writes the database between commands, as they leave it (the embedded one admits one process at a time). */
export async function inDatabase<T>(env: Record<string, string>, work: (db: Db) => Promise<T>): Promise<T> {
  const database = await openDatabase(loadConfig(env).database);
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

/** A CSV file of these lines (CRLF, as spreadsheets write them) in a folder removed when the test ends. */
export function csvFile(t: TestContext, name: string, lines: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-csv-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
  return path;
}
