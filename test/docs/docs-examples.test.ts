/**
 * Every `sh` block of README.md and of docs/**\/*.md runs, as a reader would run it, against a fresh sandbox, and
 * the `json` answer a page shows after a block has the structure of what the block printed.
 *
 * The rule the pages follow:
 * - an `sh` block runs unless the line just before its opening fence is `<!-- not run: <reason> -->`; blocks of
 *   other languages never run;
 * - the `sh` blocks of one file run in order in one bash (`set -euo pipefail`, so variables carry from block to
 *   block), from the repository's root, against a server started for that file alone: `ewa serve` with the demo
 *   data on the embedded database in a temporary data directory, or in a fresh schema of the PostgreSQL of
 *   DATABASE_URL. `localhost:8080`, `:8081` and `:8082` in the blocks are rewritten to that server's ports, and
 *   EWA_BASE_URL, EWA_AUTH_URL and EWA_PAYMENTS_URL name them, so that `npx ewa …` (this checkout's CLI, through
 *   a bash function) and the server agree on the tokens' issuer and audience. TMPDIR is a directory of the file's
 *   own, so `mktemp` writes nothing into the checkout;
 * - a `json` block after a run block (only blank lines between) is the answer shown: it must be valid JSON, and the
 *   last JSON document the block printed on stdout must have its structure (see `shapeDifferences`);
 * - a block that exits non-zero fails its file's subtest with the line and the block's output; background
 *   processes a block starts (`&`) are killed when the file is done.
 *
 * EWA_DOCS_ONLY=<text> runs only the files whose path contains it; EWA_DOCS_KEEP=1 keeps each file's work
 * directory (block-N.sh as run, block-N.out and block-N.err as printed, ports.json) and prints where it is.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { createTestDatabaseTarget, onPostgres, type TestDatabaseTarget } from '../helpers/test-database.ts';
import { lastJsonDocument, shapeDifferences } from './json-shape.ts';
import { type RunBlock, runBlocks } from './markdown-blocks.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'src', 'main.ts');
/** The longest one file's blocks may take together. */
const FILE_TIMEOUT_MS = 150_000;
const SERVER_START_TIMEOUT_MS = 90_000;

function markdownFiles(): string[] {
  const found = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(ROOT, 'docs'))) walk(join(ROOT, 'docs'));
  return found;
}

interface Server {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  /** The environment of the blocks and of their `npx ewa`: the same database and public URLs as the server. */
  env: Record<string, string>;
  ports: { api: number; auth: number; payments: number };
}

function spawnServe(env: Record<string, string>): Omit<Server, 'env' | 'ports'> {
  let text = '';
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', EWA_WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    text = (text + chunk).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => text };
}

async function stopServer(server: { child: ChildProcess; exited: Promise<number | null> }): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await server.exited;
  clearTimeout(timer);
}

/** `ewa serve` with the demo data on free ports, once /rest/health answers (401 without a token). */
async function startServer(database: Record<string, string>): Promise<Server> {
  for (let attempt = 1; ; attempt++) {
    const ports = { api: await freePort(), auth: await freePort(), payments: await freePort() };
    const env = {
      EWA_ENV: 'uat',
      EWA_HOST: 'localhost',
      EWA_API_PORT: String(ports.api),
      EWA_AUTH_PORT: String(ports.auth),
      EWA_PAYMENTS_PORT: String(ports.payments),
      EWA_BASE_URL: `http://localhost:${ports.api}`,
      EWA_AUTH_URL: `http://localhost:${ports.auth}`,
      EWA_PAYMENTS_URL: `http://localhost:${ports.payments}`,
      EWA_LOG_LEVEL: 'warn',
      ...database,
    };
    const running = spawnServe(env);
    const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
    let healthy = false;
    while (!healthy && running.child.exitCode === null && Date.now() < deadline) {
      try {
        healthy = (await fetch(`http://localhost:${ports.api}/rest/health`)).status === 401;
      } catch {}
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (healthy) return { ...running, env, ports };
    await stopServer(running);
    if (attempt < 3 && running.output().includes('EADDRINUSE')) continue;
    throw new Error(`ewa serve gave no healthy answer:\n${running.output()}`);
  }
}

/**
 * On the embedded database, the demo data is made once (a first start, then a stop) and each file's server
 * starts on a copy of it: a first start takes seconds, a copy much less.
 */
let template: Promise<string> | undefined;
let templateDir: string | undefined;
after(() => {
  if (templateDir) rmSync(templateDir, { recursive: true, force: true });
});
function seededTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ewa-docs-template-'));
    templateDir = dir;
    const server = await startServer({ EWA_DATA_DIR: dir });
    await stopServer(server);
    return dir;
  })();
  return template;
}

async function databaseForFile(
  work: string,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (onPostgres) {
    const target: TestDatabaseTarget = await createTestDatabaseTarget();
    return { env: target.env, drop: () => target.drop() };
  }
  const dataDir = join(work, 'data');
  cpSync(await seededTemplate(), dataDir, { recursive: true });
  for (const stale of ['owner.pid', 'cli.json']) rmSync(join(dataDir, stale), { force: true });
  return { env: { EWA_DATA_DIR: dataDir }, drop: async () => {} };
}

function rewritePorts(script: string, ports: Server['ports']): string {
  return script
    .replaceAll('localhost:8080', `localhost:${ports.api}`)
    .replaceAll('localhost:8081', `localhost:${ports.auth}`)
    .replaceAll('localhost:8082', `localhost:${ports.payments}`);
}

/** One bash script that sources each block in turn, each block's stdout and stderr to files of its own. */
function driverScript(blocks: RunBlock[], work: string): string {
  const lines = [
    'set -euo pipefail',
    // `npx ewa …` is this checkout's CLI, on the Node running the tests; any other npx is the real one.
    'npx() { if [ "$#" -gt 0 ] && [ "$1" = ewa ]; then shift; "$EWA_DOCS_NODE" "$EWA_DOCS_MAIN" "$@"; else command npx "$@"; fi; }',
    'export -f npx',
  ];
  blocks.forEach((_block, index) => {
    const base = join(work, `block-${index}`);
    lines.push(
      `printf 'start ${index}\\n' >> ${JSON.stringify(join(work, 'status'))}`,
      `source ${JSON.stringify(`${base}.sh`)} > ${JSON.stringify(`${base}.out`)} 2> ${JSON.stringify(`${base}.err`)}`,
      `printf 'done ${index}\\n' >> ${JSON.stringify(join(work, 'status'))}`,
    );
  });
  return `${lines.join('\n')}\n`;
}

function readOr(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function tail(text: string, length = 6000): string {
  return text.length > length ? `…${text.slice(-length)}` : text;
}

/** Runs the driver in its own process group, so that whatever it left running in the background can be killed. */
async function runDriver(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; timedOut: boolean }> {
  const child = spawn('bash', [script], { cwd: ROOT, env, stdio: 'ignore', detached: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }, FILE_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {}
  return { code, timedOut };
}

async function checkFile(path: string): Promise<void> {
  const name = relative(ROOT, path);
  const blocks = runBlocks(readFileSync(path, 'utf8'));
  const answers = new Map<RunBlock, unknown>();
  for (const block of blocks) {
    if (!block.answer) continue;
    try {
      answers.set(block, JSON.parse(block.answer.text));
    } catch (error) {
      assert.fail(
        `${name}:${block.answer.line}: the answer shown is not valid JSON: ${(error as Error).message}`,
      );
    }
  }
  if (blocks.length === 0) return;

  const work = mkdtempSync(join(tmpdir(), 'ewa-docs-'));
  const database = await databaseForFile(work);
  let server: Server | undefined;
  try {
    server = await startServer(database.env);
    blocks.forEach((block, index) => {
      writeFileSync(join(work, `block-${index}.sh`), `${rewritePorts(block.script, server!.ports)}\n`);
    });
    writeFileSync(join(work, 'ports.json'), JSON.stringify(server.ports));
    const driver = join(work, 'driver.sh');
    writeFileSync(driver, driverScript(blocks, work));
    const tmp = join(work, 'tmp');
    mkdirSync(tmp);
    writeFileSync(join(work, 'status'), '');
    const { code, timedOut } = await runDriver(driver, {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? work,
      TMPDIR: tmp,
      ...server.env,
      EWA_DOCS_NODE: process.execPath,
      EWA_DOCS_MAIN: MAIN,
    });
    const status = readOr(join(work, 'status')).trim().split('\n');
    const started = status.filter((line) => line.startsWith('start ')).length;
    const done = status.filter((line) => line.startsWith('done ')).length;
    if (timedOut || code !== 0 || done < blocks.length) {
      const index = Math.max(0, started - 1);
      const block = blocks[index]!;
      const base = join(work, `block-${index}`);
      assert.fail(
        `${name}:${block.line}: the sh block ${timedOut ? `did not finish within ${FILE_TIMEOUT_MS} ms` : `exited ${code}`}` +
          `\n--- stdout ---\n${tail(readOr(`${base}.out`))}\n--- stderr ---\n${tail(readOr(`${base}.err`))}`,
      );
    }
    const failures: string[] = [];
    blocks.forEach((block, index) => {
      if (!answers.has(block)) return;
      const printed = lastJsonDocument(readOr(join(work, `block-${index}.out`)));
      if (!printed.found) {
        failures.push(
          `${name}:${block.line}: the block printed no JSON, but line ${block.answer!.line} shows an answer`,
        );
        return;
      }
      const differences = shapeDifferences(answers.get(block), printed.value);
      if (differences.length > 0)
        failures.push(
          `${name}:${block.line}: the answer shown at line ${block.answer!.line} differs from the one printed:\n  ` +
            `${differences.join('\n  ')}\n  printed: ${tail(JSON.stringify(printed.value), 3000)}`,
        );
    });
    assert.deepEqual(failures, [], failures.join('\n'));
  } finally {
    if (server) await stopServer(server);
    await database.drop();
    // EWA_DOCS_KEEP=1 keeps each file's blocks and what they printed (block-N.sh, .out, .err), to write a page.
    if (process.env.EWA_DOCS_KEEP) console.log(`${name}: blocks and their output kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

test('every sh block of the docs runs, and shows the answer it gets', { timeout: 600_000 }, async (t) => {
  const only = process.env.EWA_DOCS_ONLY;
  for (const path of markdownFiles()) {
    const name = relative(ROOT, path);
    if (only && !name.includes(only)) continue;
    await t.test(name, () => checkFile(path));
  }
});
