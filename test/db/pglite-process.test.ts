import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { DataDirBusyError } from '../../src/db/data-dir-lock.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { holdDatabaseFiles } from '../../src/db/database-files-lock.ts';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/db/database-unavailable.ts';
import { childFlags, openPGliteProcess } from '../../src/db/pglite-process.ts';
import { runBatch } from '../../src/db/statement-batch.ts';

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-pglite-process-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openOnDisk(dataDir: string): Promise<Database> {
  return openDatabase(loadConfig({ EWA_DATA_DIR: dataDir }).database);
}

/** The processes `pid` started (Linux /proc). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

/** Whether `pid` still runs: an ended process whose new parent has not reaped it yet (a zombie) does not. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * A server in a process of its own (a script, `node -e`) that opens `dataDir` on disk, creates table `kept` with 7
 * in it and prints "ready"; `onSigint` is its SIGINT handler's body, if any (`database` and `sql` in scope).
 * Resolves once it is ready; killed after the test.
 */
async function startServer(dataDir: string, options: { onSigint?: string; detached?: boolean } = {}) {
  const script = `
    const { openDatabase } = await import(${JSON.stringify(new URL('../../src/db/database.ts', import.meta.url).href)});
    const { loadConfig } = await import(${JSON.stringify(new URL('../../src/config.ts', import.meta.url).href)});
    const { sql } = await import('kysely');
    const database = await openDatabase(loadConfig({ EWA_DATA_DIR: ${JSON.stringify(dataDir)} }).database);
    ${options.onSigint ? `process.on('SIGINT', async () => { ${options.onSigint} });` : ''}
    await sql\`create table kept (n int); insert into kept values (7)\`.execute(database.db);
    process.stdout.write('ready\\n');
    setInterval(() => {}, 1000);
  `;
  const server = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: new URL('../..', import.meta.url),
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: options.detached ?? false,
  });
  after(() => server.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    server.on('exit', (code) => reject(new Error(`the server ended with ${code} before it was ready`)));
  });
  return server;
}

test('an on-disk embedded database runs in a process of its own; values and error fields come across whole', async () => {
  const dataDir = scratch();
  const before = childrenOf(process.pid);
  const database = await openOnDisk(dataDir);
  try {
    assert.equal(childrenOf(process.pid).filter((pid) => !before.includes(pid)).length, 1);
    const { db } = database;
    await sql`create table kept (id int8 primary key, at timestamptz not null, bytes bytea not null,
      constraint kept_bytes_key unique (bytes))`.execute(db);
    const at = new Date('2026-01-02T03:04:05.678Z');
    await sql`insert into kept values (${Number.MAX_SAFE_INTEGER}, ${at}, ${Buffer.from('hi')})`.execute(db);
    const { rows } = await sql<{ id: number; at: Date; bytes: Uint8Array }>`select * from kept`.execute(db);
    assert.deepEqual(rows, [{ id: Number.MAX_SAFE_INTEGER, at, bytes: new Uint8Array(Buffer.from('hi')) }]);
    assert.ok(rows[0]!.at instanceof Date);

    const violation = await sql`insert into kept values (1, now(), ${Buffer.from('hi')})`.execute(db).then(
      () => assert.fail('a duplicate was inserted'),
      (error: unknown) => error as Record<string, unknown>,
    );
    assert.ok(violation instanceof Error);
    assert.match(
      String(violation.message),
      /duplicate key value violates unique constraint "kept_bytes_key"/,
    );
    assert.equal(violation.code, '23505');
    assert.equal(violation.constraint, 'kept_bytes_key');
    assert.equal(violation.table, 'kept');
    assert.equal(violation.severity, 'ERROR');
    assert.match(String(violation.detail), /already exists/);
    assert.equal(isDatabaseUnavailable(violation), false);

    // A transaction's statements still run on the one session, and a failed one leaves nothing behind.
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await sql`insert into kept values (2, now(), ${Buffer.from('yo')})`.execute(trx);
        await sql`select 1/0`.execute(trx);
      }),
      (error: Record<string, unknown>) => error.code === '22012',
    );
    const count = await sql<{ n: number }>`select count(*)::int as n from kept`.execute(db);
    assert.equal(count.rows[0]!.n, 1);
  } finally {
    await database.close();
  }
  // Closed: the database's process has exited and the directory can be opened again.
  assert.deepEqual(
    childrenOf(process.pid).filter((pid) => !before.includes(pid)),
    [],
  );
  const again = await openOnDisk(dataDir);
  await again.close();
});

test("a statement batch crosses to the database's process as one message, each outcome on its own", async () => {
  const dataDir = scratch();
  const session = await openPGliteProcess(
    { pgdata: join(dataDir, 'pgdata'), templateDir: null, shippedTemplate: true },
    { liftoffOnly: true },
  );
  try {
    assert.ok(session.batch, 'a database in a process of its own takes a batch in one exchange');
    const outcomes = await session.batch([
      { sql: 'create table kept (id int primary key, at timestamptz)', parameters: [] },
      { sql: 'insert into kept values ($1, $2)', parameters: [1, new Date('2026-01-02T03:04:05Z')] },
      { sql: 'insert into kept values ($1, now())', parameters: [1] },
      { sql: 'select id, at from kept', parameters: [] },
    ]);
    assert.equal(outcomes.length, 4);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.ok),
      [true, true, false, true],
    );
    const failed = outcomes[2]!;
    assert.ok(!failed.ok && failed.error instanceof Error);
    assert.equal((failed.error as unknown as Record<string, unknown>).code, '23505');
    assert.equal((failed.error as unknown as Record<string, unknown>).constraint, 'kept_pkey');
    const read = outcomes[3]!;
    assert.ok(read.ok);
    assert.deepEqual(read.result.rows, [{ id: 1, at: new Date('2026-01-02T03:04:05Z') }]);
  } finally {
    await session.close();
  }
});

test('a batch through Kysely on a database on disk: a failure aborts its transaction, and only it', async () => {
  const database = await openOnDisk(scratch());
  try {
    const { db } = database;
    await sql`create table kept (id int primary key)`.execute(db);
    const insert = (id: number) => CompiledQuery.raw('insert into kept values ($1) returning id', [id]);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        const outcomes = await runBatch(trx, [insert(1), insert(1), insert(2)]);
        assert.deepEqual(
          outcomes.map((outcome) => (outcome.ok ? 'ok' : (outcome.error as { code?: string }).code)),
          ['ok', '23505', '25P02'],
        );
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    const alone = await runBatch(db, [insert(3), insert(3), insert(4)]);
    assert.deepEqual(
      alone.map((outcome) => outcome.ok),
      [true, false, true],
    );
    const { rows } = await sql<{ id: number }>`select id from kept order by id`.execute(db);
    assert.deepEqual(
      rows.map((row) => row.id),
      [3, 4],
    );
  } finally {
    await database.close();
  }
});

test("EWA_V8_WASM_LIFTOFF_ONLY reaches the database's process; a flag node was given wins, in either spelling", async () => {
  // In a node of its own started with no flags: this test's process may run with --liftoff-only (npm test does),
  // which would win over the setting.
  const flagsOf = async (env: Record<string, string>) => {
    const script = `
      const { readFileSync } = await import('node:fs');
      const { openDatabase } = await import(${JSON.stringify(new URL('../../src/db/database.ts', import.meta.url).href)});
      const { loadConfig } = await import(${JSON.stringify(new URL('../../src/config.ts', import.meta.url).href)});
      const database = await openDatabase(loadConfig(${JSON.stringify({ EWA_DATA_DIR: scratch(), ...env })}).database);
      const [child] = readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8').trim().split(' ');
      process.stdout.write(JSON.stringify(readFileSync('/proc/' + child + '/cmdline', 'utf8').split('\\0')));
      await database.close();
    `;
    const node = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    node.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const [code] = await once(node, 'exit');
    assert.equal(code, 0);
    return JSON.parse(printed) as string[];
  };
  assert.ok((await flagsOf({})).includes('--liftoff-only'));
  assert.ok(!(await flagsOf({ EWA_V8_WASM_LIFTOFF_ONLY: 'false' })).includes('--liftoff-only'));

  assert.deepEqual(childFlags(['--max-semi-space-size=4'], true), [
    '--max-semi-space-size=4',
    '--liftoff-only',
  ]);
  assert.deepEqual(childFlags(['--max-semi-space-size=4'], false), ['--max-semi-space-size=4']);
  assert.deepEqual(childFlags(['--no-liftoff_only'], true), ['--no-liftoff_only']);
  assert.deepEqual(childFlags(['--liftoff_only'], false), ['--liftoff_only']);
  assert.deepEqual(childFlags(['--test', '--eval', 'x()', '--liftoff-only'], true), ['--liftoff-only']);
});

test("the database's process killed: statements waiting and later fail as unavailable at once, ping too", async () => {
  const dataDir = scratch();
  const before = childrenOf(process.pid);
  const database = await openOnDisk(dataDir);
  const [child] = childrenOf(process.pid).filter((pid) => !before.includes(pid));
  assert.ok(child);
  const waiting = sql`select pg_sleep(3)`.execute(database.db);
  const queued = sql`select 1`.execute(database.db);
  const batched = runBatch(database.db, [CompiledQuery.raw('select $1::int as n', [1])]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.kill(child, 'SIGKILL');
  const started = Date.now();
  await assert.rejects(waiting, DatabaseUnavailableError);
  await assert.rejects(queued, DatabaseUnavailableError);
  await assert.rejects(batched, DatabaseUnavailableError);
  await assert.rejects(sql`select 1`.execute(database.db), DatabaseUnavailableError);
  await assert.rejects(database.ping(1000), DatabaseUnavailableError);
  assert.ok(Date.now() - started < 2000, 'the failures came before the sleep would have ended');
  await database.close();
  // The lock went with the close: the directory opens again, its database recovered.
  const again = await openOnDisk(dataDir);
  await again.close();
});

test("the server killed: its database's process ends and the next process opens the data directory", async () => {
  const dataDir = scratch();
  const server = await startServer(dataDir);
  const [child] = childrenOf(server.pid!);
  assert.ok(child, 'the server has a database process');
  const ended = once(server, 'exit');
  server.kill('SIGKILL');
  await ended; // reaped, as a shell would: a zombie still holds the data directory's lock (owner.pid)
  // At once, while the database's process may still be closing the files: the next one waits for it to end.
  const again = await openOnDisk(dataDir);
  assert.equal(
    running(child),
    false,
    'the files were opened again only once their old process had let them go',
  );
  try {
    const { rows } = await sql<{ n: number }>`select n from kept`.execute(again.db);
    assert.deepEqual(rows, [{ n: 7 }]);
  } finally {
    await again.close();
  }
});

test("the database's files are opened by one process at a time: a live holder is waited for, a dead one taken over", async () => {
  const dataDir = scratch();
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  after(() => holder.kill('SIGKILL'));
  writeFileSync(join(dataDir, 'database.pid'), String(holder.pid));
  await assert.rejects(holdDatabaseFiles(dataDir, 300), (error: Error) => {
    assert.ok(error instanceof DataDirBusyError);
    assert.match(error.message, new RegExp(`still open in process ${holder.pid}`));
    return true;
  });
  const waited = holdDatabaseFiles(dataDir, 10_000);
  setTimeout(() => holder.kill('SIGKILL'), 300);
  const release = await waited;
  assert.equal(readFileSync(join(dataDir, 'database.pid'), 'utf8'), String(process.pid));
  release();
  // Left behind by a process that died without releasing it: taken over at once.
  writeFileSync(join(dataDir, 'database.pid'), String(holder.pid));
  (await holdDatabaseFiles(dataDir, 0))();
});

test("Ctrl+C to the server's process group: the database's process outlives the signal and the server closes it", async () => {
  const dataDir = scratch();
  // As `ewa serve` stops on SIGINT: closes the database once its work is done, then exits. A process group of its
  // own, as a terminal gives a command.
  const server = await startServer(dataDir, {
    detached: true,
    onSigint: `
      await new Promise((resolve) => setTimeout(resolve, 300));
      await sql\`insert into kept values (8)\`.execute(database.db);
      await database.close();
      process.exit(0);`,
  });
  const ended = once(server, 'exit');
  process.kill(-server.pid!, 'SIGINT');
  const [code] = await ended;
  assert.equal(code, 0, 'the server wrote after the signal and closed its database cleanly');
  assert.equal(existsSync(join(dataDir, 'database.pid')), false, "the database's process let its files go");
  const again = await openOnDisk(dataDir);
  try {
    const { rows } = await sql<{ n: number }>`select n from kept order by n`.execute(again.db);
    assert.deepEqual(rows, [{ n: 7 }, { n: 8 }]);
  } finally {
    await again.close();
  }
});
