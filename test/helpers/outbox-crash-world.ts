import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { buildTestAppOn } from './build-test-app.ts';
import { createOrganization } from './factories.ts';
import { advanceBody, createPaidWorker, postTransfer } from './money.ts';
import type { CrashPlan, FoundState } from './outbox-crash-child.ts';
import { createTestDatabaseTarget } from './test-database.ts';

const CHILD = join(import.meta.dirname, 'outbox-crash-child.ts');

export type DatabaseKind = 'PGlite' | 'PostgreSQL';

/**
 * The database and folders the processes of one crash test share: an embedded database in a data directory on
 * disk (one process at a time opens it), or a schema of its own on the PostgreSQL of DATABASE_URL.
 */
export interface CrashWorld {
  kind: DatabaseKind;
  /** The environment of every process of the test: the database, EWA_RAIL, the ACH folders. */
  env: Record<string, string>;
  /** The environment that names only the database. */
  databaseEnv: Record<string, string>;
  outboundDir: string;
  /** Where the rail port's calls are noted, by process (outbox-crash-child.ts). */
  handedLog: string;
  /** A handle on the database while `work` runs, closed after it: a PGlite directory is one process's at a time. */
  withDatabase<T>(work: (database: Database) => Promise<T>): Promise<T>;
}

let template: Promise<string> | undefined;

/**
 * A migrated PGlite data directory that each test copies: creating one on disk takes PGlite many seconds, copying
 * it a fraction of one.
 */
function pgliteTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ewa-crash-template-'));
    const database = await openDatabase(loadConfig({ EWA_DATA_DIR: dir }).database);
    await migrate(database.db);
    await database.close();
    return dir;
  })();
  return template;
}

// Registered here, at the file's top level: registered in a test, it would run when that test ends.
after(async () => {
  if (template) await rm(await template, { recursive: true, force: true });
});

export async function openCrashWorld(
  t: TestContext,
  kind: DatabaseKind,
  rail: 'ach' | 'sandbox',
): Promise<CrashWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'ewa-crash-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let databaseEnv: Record<string, string>;
  if (kind === 'PGlite') {
    const dataDir = join(dir, 'db');
    await cp(await pgliteTemplate(), dataDir, { recursive: true });
    databaseEnv = { EWA_DATA_DIR: dataDir };
  } else {
    const target = await createTestDatabaseTarget();
    t.after(() => target.drop());
    const database = await openDatabase(target.config);
    await migrate(database.db).finally(() => database.close());
    databaseEnv = target.env;
  }
  const outboundDir = join(dir, 'ach', 'outbound');
  const config = loadConfig(databaseEnv).database;
  return {
    kind,
    databaseEnv,
    env: {
      ...databaseEnv,
      EWA_RAIL: rail,
      EWA_ACH_OUTBOUND_DIR: outboundDir,
      EWA_ACH_INBOUND_DIR: join(dir, 'ach', 'inbound'),
      EWA_OUTBOX_LEASE_SECONDS: String(LEASE_SECONDS),
    },
    outboundDir,
    handedLog: join(dir, 'handed.log'),
    async withDatabase(work) {
      const database = await openDatabase(config);
      try {
        return await work(database);
      } finally {
        await database.close();
      }
    },
  };
}

export const LEASE_SECONDS = 60;

/** A payment instruction waiting in the outbox. */
export interface Instruction {
  id: string;
  reference: string;
  purpose: 'ADVANCE' | 'PAYCHECK';
  deliveredMinor: number;
}

/**
 * What the money core leaves in the outbox at `now`, made through the real API and services of a test app on the
 * world's database (its dispatcher never started): two workers take advances (a fee of 1.50 each, so that what is
 * delivered differs from what is asked), and payday pays a third worker's ended pay period.
 */
export async function writePayments(t: TestContext, world: CrashWorld, now: Date): Promise<Instruction[]> {
  return world.withDatabase(async (database) => {
    const app = await buildTestAppOn(t, { ...database, env: world.databaseEnv }, {}, { now: () => now });
    try {
      const organizationId = await createOrganization(app, { policy: { fee_bank_next_day_minor: 150 } });
      const advances = [
        [2000, 3100, 4200],
        [2500, 3600],
      ];
      for (const amounts of advances) {
        const worker = await createPaidWorker(app, { organizationId, earnedMinor: 40_000, now });
        for (const amount of amounts) {
          const response = await postTransfer(app, worker.token, advanceBody(worker, { amount }));
          if (response.statusCode !== 200) throw new Error(`advance: ${response.body}`);
        }
      }
      // A shift two weeks back: its pay period has ended and its payday passed.
      await createPaidWorker(app, {
        organizationId,
        earnedMinor: 40_000,
        now: new Date(now.getTime() - 15 * 86_400_000),
      });
      const payroll = await app.money.payroll(now);
      if (payroll.paid !== 1) throw new Error(`payday paid ${payroll.paid} paychecks, not 1`);
    } finally {
      await Promise.all([app.api.close(), app.auth.close(), app.payments.close()]);
    }
    const { rows } =
      await sql<Instruction>`select id, subject_id as reference, payload->>'purpose' as purpose,
        (payload->>'deliveredAmountMinor')::integer as "deliveredMinor"
      from outbox order by id`.execute(database.db);
    return rows;
  });
}

/** How a child process ended, and what it printed. */
export interface ChildRun {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What it found in the database when it started. */
  found: FoundState;
  /** The ledger invariants broken when it started (src/ledger/invariants.ts). */
  violations: unknown[];
  /** Each step's report, in order. */
  reports: { step: string; report: Record<string, number> }[];
  /** The crash point it reported just before it died. */
  crashed: string | undefined;
  output: string;
}

/** Runs outbox-crash-child.ts with the world's environment; killed (and the test failed) past `timeoutMs`. */
export async function runChild(world: CrashWorld, plan: Omit<CrashPlan, 'handedLog'>, timeoutMs = 60_000) {
  const child: ChildProcess = spawn(
    process.execPath,
    [CHILD, JSON.stringify({ ...plan, handedLog: world.handedLog })],
    { env: { PATH: process.env.PATH ?? '', ...world.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk).slice(-50_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  clearTimeout(timer);
  if (timedOut) throw new Error(`the child process did not end within ${timeoutMs} ms:\n${output}`);
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const start = lines.find((line) => 'found' in line) as Pick<ChildRun, 'found' | 'violations'> | undefined;
  if (!start) throw new Error(`the child process did not start its work:\n${output}`);
  return {
    pid: child.pid!,
    code,
    signal,
    found: start.found,
    violations: start.violations,
    reports: lines.filter((line) => 'step' in line) as ChildRun['reports'],
    crashed: lines.find((line) => 'crashed' in line)?.crashed as string | undefined,
    output,
  } satisfies ChildRun;
}

/** The instruction ids the rail port was handed, by process, in order. */
export async function handedByProcess(world: CrashWorld): Promise<Map<string, string[]>> {
  const text = await readFile(world.handedLog, 'utf8').catch(() => '');
  const handed = new Map<string, string[]>();
  for (const line of text.split('\n').filter(Boolean)) {
    const [pid = '', id = ''] = line.split(' ');
    handed.set(pid, [...(handed.get(pid) ?? []), id]);
  }
  return handed;
}

/** The outbound folder: the files the bank's file transfer would take, and the hidden ones it leaves alone. */
export async function outboundFiles(world: CrashWorld) {
  const names = (await readdir(world.outboundDir).catch(() => [])).sort();
  const read = (name: string) => readFile(join(world.outboundDir, name), 'utf8');
  return {
    visible: await Promise.all(
      names.filter((n) => !n.startsWith('.')).map(async (name) => ({ name, text: await read(name) })),
    ),
    hidden: await Promise.all(
      names.filter((n) => n.startsWith('.')).map(async (name) => ({ name, text: await read(name) })),
    ),
  };
}

/** An entry detail record of an origination file. */
export interface FileEntry {
  traceNumber: string;
  amountMinor: number;
  individualId: string;
}

const col = (line: string, from: number, to: number) => line.slice(from - 1, to);

/**
 * Reads an origination file, apart from src/rails/ach (nach2, the independent Nacha package we test against, has no
 * reader): 94-character records in blocks of ten, a header, batches of credits each closed by its control record,
 * and a file control whose counts and totals must match the entries. Throws on a file that is not whole.
 */
export function readOriginationFile(text: string): FileEntry[] {
  if (!text.endsWith('\n')) throw new Error('the file does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.some((line) => line.length !== 94)) throw new Error('a record is not 94 characters');
  if (lines.length % 10 !== 0) throw new Error(`${lines.length} records: not whole blocks of ten`);
  if (col(lines[0]!, 1, 3) !== '101') throw new Error('no file header');
  const entries: FileEntry[] = [];
  let at = 1;
  let batches = 0;
  while (lines[at]?.[0] === '5') {
    at++;
    batches++;
    const first = entries.length;
    while (lines[at]?.[0] === '6') {
      const line = lines[at++]!;
      entries.push({
        amountMinor: Number(col(line, 30, 39)),
        individualId: col(line, 40, 54).trimEnd(),
        traceNumber: col(line, 80, 94),
      });
    }
    const control = lines[at++] ?? '';
    const batch = entries.slice(first);
    if (control[0] !== '8') throw new Error(`batch ${batches} has no control record`);
    if (Number(col(control, 5, 10)) !== batch.length) throw new Error(`batch ${batches}: wrong entry count`);
    if (Number(col(control, 33, 44)) !== batch.reduce((sum, e) => sum + e.amountMinor, 0))
      throw new Error(`batch ${batches}: wrong credit total`);
  }
  const fileControl = lines[at++] ?? '';
  if (fileControl[0] !== '9') throw new Error('no file control record');
  if (Number(col(fileControl, 2, 7)) !== batches) throw new Error('file control: wrong batch count');
  if (Number(col(fileControl, 8, 13)) !== lines.length / 10)
    throw new Error('file control: wrong block count');
  if (Number(col(fileControl, 14, 21)) !== entries.length) throw new Error('file control: wrong entry count');
  if (Number(col(fileControl, 44, 55)) !== entries.reduce((sum, e) => sum + e.amountMinor, 0))
    throw new Error('file control: wrong credit total');
  if (lines.slice(at).some((filler) => filler !== '9'.repeat(94)))
    throw new Error('a filler is not all nines');
  return entries;
}
