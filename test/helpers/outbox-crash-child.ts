/**
 * One process of a crash test (test/e2e/outbox-crash.test.ts). It opens the database its environment names
 * (EWA_DATA_DIR or DATABASE_URL), builds the money core as `ewa serve` does from the same environment (EWA_RAIL, the
 * ACH folders, the outbox settings), runs the steps of its plan on a fake clock, and kills itself with SIGKILL at the
 * plan's crash point. Nothing of ours is replaced: the crash points are found in the SQL the money core sends, in the
 * rail port's calls and in the file system's (crash-fs.ts).
 *
 * Usage: node test/helpers/outbox-crash-child.ts '<CrashPlan as JSON>'. It prints what it found when it started (and
 * the ledger invariants it found broken), then one JSON line per step; a line `{"crashed": point}` just before it
 * dies; exit code 3 when the crash point was never reached.
 */
import { appendFileSync, writeSync } from 'node:fs';
import { enableCompileCache, registerHooks } from 'node:module';

/** Where the process dies. */
export type CrashPoint =
  /** At the rail port's submit, before the rail is called: the claim committed, nothing sent. */
  | 'before-send'
  /** While the ACH rail takes the instruction: its entry written, its transaction not committed. */
  | 'rail-writing'
  /** A send answered by the rail, before its outcome is recorded (the claim's other sends may still be in flight). */
  | 'rail-answered'
  /** Recording the outcomes: the transfers' rail references written, the transaction not committed. */
  | 'recording'
  /** Cutting a window's file: its row written, the transaction not committed. */
  | 'composing'
  /** Half the file written to its temporary name, not renamed into place. */
  | 'file-half-written'
  /** The file renamed into place, its writing not yet recorded. */
  | 'file-renamed';

export interface CrashStep {
  work: 'dispatch' | 'cut-files' | 'settle';
  /** The fake clock during the step (ISO 8601). */
  at: string;
}

export interface CrashPlan {
  crashAt: CrashPoint | null;
  steps: CrashStep[];
  /** A file the rail port's calls are appended to (`<pid> <instructionId>`), before the rail is called. */
  handedLog: string;
}

/** What the process found in the database when it started: what the process before it left. */
export interface FoundState {
  outbox: number;
  leased: number;
  achEntries: number;
  railReferences: number;
  achFiles: number;
  achFilesWritten: number;
}

/** The statements a crash point kills at: before the statement is sent, or once its answer is back. */
const STATEMENT_CRASHES: Partial<Record<CrashPoint, { statement: RegExp; when: 'before' | 'after' }>> = {
  'rail-writing': { statement: /^\s*insert into ach_entries\b/, when: 'after' },
  'rail-answered': { statement: /^\s*delete from outbox\b/, when: 'before' },
  recording: { statement: /^\s*update transfers t set rail_reference\b/, when: 'after' },
  composing: { statement: /^\s*insert into ach_files\b/, when: 'after' },
};

enableCompileCache();
const plan = JSON.parse(process.argv[2] ?? '') as CrashPlan;

function crash(): never {
  writeSync(1, `${JSON.stringify({ crashed: plan.crashAt })}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL was sent');
}

// The ACH rail's file system is crash-fs.ts (the real one, with its crash points): resolved before it is imported.
const crashFs = new URL('./crash-fs.ts', import.meta.url).href;
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'node:fs/promises' && context.parentURL?.endsWith('/src/rails/ach/ach-rail.ts'))
      return { url: crashFs, shortCircuit: true };
    return nextResolve(specifier, context);
  },
});

const { armFileCrash } = await import('./crash-fs.ts');
const { sql } = await import('kysely');
const { loadConfig } = await import('../../src/config.ts');
const { openDatabase } = await import('../../src/db/database.ts');
const { checkLedgerInvariants } = await import('../../src/ledger/invariants.ts');
const { createMoneyCore } = await import('../../src/money/money-core.ts');
const { configuredRails } = await import('../../src/rails/configured-rails.ts');
type KyselyPlugin = import('kysely').KyselyPlugin;
type QueryId = import('kysely').QueryId;
type PaymentRail = import('../../src/rails/payment-rail.ts').PaymentRail;

/** Kills the process at one statement of the money core, found by its SQL. */
function statementCrash(point: CrashPoint | null): KyselyPlugin {
  const target = point ? STATEMENT_CRASHES[point] : undefined;
  const targeted = new WeakSet<QueryId>();
  return {
    transformQuery({ node, queryId }) {
      if (target && node.kind === 'RawNode' && target.statement.test(node.sqlFragments.join('$'))) {
        if (target.when === 'before') crash();
        targeted.add(queryId);
      }
      return node;
    },
    async transformResult({ result, queryId }) {
      if (targeted.has(queryId)) crash();
      return result;
    },
  };
}

/** The rail port as the dispatcher calls it: each call noted in the log first, or the process killed before it. */
function handedTo(rail: PaymentRail): PaymentRail {
  return {
    name: rail.name,
    destinations: rail.destinations,
    async submit(instruction) {
      if (plan.crashAt === 'before-send') crash();
      appendFileSync(plan.handedLog, `${process.pid} ${instruction.instructionId}\n`);
      return rail.submit(instruction);
    },
    outcomes: (pending, now) => rail.outcomes(pending, now),
  };
}

if (plan.crashAt === 'file-half-written' || plan.crashAt === 'file-renamed')
  armFileCrash(plan.crashAt, crash);
const config = loadConfig(process.env);
const database = await openDatabase(config.database);
let clock = new Date(plan.steps[0]?.at ?? Date.now());
const now = () => clock;
const db = database.db.withPlugin(statementCrash(plan.crashAt));
const { rail, ach } = configuredRails(config, db, now);
const logger = {
  warn: (object: object, message?: string) => console.error(message, object),
  error: (object: object, message?: string) => console.error(message, object),
};
const money = createMoneyCore(db, config, {
  rail: handedTo(rail),
  now,
  // The restart's clock is moved past the crashed process's lease: leases run on it too.
  realNow: now,
  random: () => 0.5,
  logger,
});

const { rows: found } = await sql<FoundState>`select
    (select count(*) from outbox)::integer as outbox,
    (select count(*) from outbox where leased_until is not null)::integer as leased,
    (select count(*) from ach_entries)::integer as "achEntries",
    ((select count(*) from transfers where rail_reference is not null)
      + (select count(*) from paychecks where payout_rail_reference is not null))::integer as "railReferences",
    (select count(*) from ach_files)::integer as "achFiles",
    (select count(*) from ach_files where written_at is not null)::integer as "achFilesWritten"`.execute(
  database.db,
);
console.log(JSON.stringify({ found: found[0], violations: await checkLedgerInvariants(database.db) }));
for (const step of plan.steps) {
  clock = new Date(step.at);
  const report =
    step.work === 'dispatch'
      ? await money.outbox.dispatchDue(clock)
      : step.work === 'settle'
        ? await money.settle(clock)
        : await ach?.cutFiles(clock);
  console.log(JSON.stringify({ step: step.work, report }));
}
await database.close();
if (plan.crashAt) {
  console.error(`the crash point ${plan.crashAt} was never reached`);
  process.exitCode = 3;
}
