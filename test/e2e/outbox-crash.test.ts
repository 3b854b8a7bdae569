/**
 * kill -9 around the transactional outbox and the rails, on the embedded database (a data directory on disk) and
 * on PostgreSQL. Advances and a payday payout wait in the outbox; a process that sends them through the real ACH
 * rail (EWA_RAIL=ach, Nacha files in a folder) kills itself with SIGKILL at one point — before the send, during it,
 * after it before the outcome is recorded, while recording it, or while cutting the window's file — and a new
 * process on the same database and folders finishes the work: sends, cuts the files, settles. Then:
 *   - the rail was handed each instruction at least once (twice when the first answer was lost),
 *   - it acted on each once: one ACH entry per instruction, each in exactly one file exactly once, every file
 *     whole (no half file, none twice for its window), and nothing left behind in the outbox,
 *   - the books count each once: the transfer and the paycheck carry the rail's reference, each settled by one
 *     posting, and the ledger's invariants hold.
 * The stateless sandbox rail is covered once: its instruction is sent again after the restart and settles once.
 * Only the clock and the backoff's jitter are fake; the crash points are found in the SQL, the rail port's calls
 * and the file system's calls (test/helpers/outbox-crash-child.ts), nothing of ours is replaced.
 */
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { AchFileSecrets } from '../../src/crypto/ach-file-secrets.ts';
import type { Db } from '../../src/db/database.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import type { CrashPoint, CrashStep, FoundState } from '../helpers/outbox-crash-child.ts';
import {
  type CrashWorld,
  type DatabaseKind,
  handedByProcess,
  type Instruction,
  LEASE_SECONDS,
  openCrashWorld,
  outboundFiles,
  readOriginationFile,
  runChild,
  writePayments,
} from '../helpers/outbox-crash-world.ts';
import { onPostgres } from '../helpers/test-database.ts';

const NEEDS_POSTGRES = 'needs PostgreSQL: set DATABASE_URL (the PGlite variant of this test runs without it)';

/** Wednesday 11 March 2026, 11:30 in New York: the ACH window of 14:45 is open. */
const T0 = new Date('2026-03-11T15:30:00Z');
/** The restart: just after the crashed process's lease on what it claimed ran out. */
const RESTART = new Date(T0.getTime() + (LEASE_SECONDS + 1) * 1000);
/** After the 14:45 cut-off (18:45 UTC). */
const CUT = new Date('2026-03-11T19:00:00Z');
/** After 08:30 in New York on the effective date, when the entries settle (and the sandbox's 09:00). */
const SETTLE = new Date('2026-03-12T14:00:00Z');

const DISPATCH: CrashStep = { work: 'dispatch', at: T0.toISOString() };
const CUT_FILES: CrashStep = { work: 'cut-files', at: CUT.toISOString() };

interface Scenario {
  crashAt: CrashPoint;
  rail: 'ach' | 'sandbox';
  title: string;
  /** What the crashed process was doing. */
  steps: CrashStep[];
  /** What it left, as the next process finds it (n instructions). */
  left(n: number): ExpectedState;
  /** Whether the crashed process had handed the rail every instruction, some, or none. */
  handedBeforeCrash: 'all' | 'some' | 'none';
}

/**
 * What a crash leaves; `achEntries` a range where it depends on timing: the dispatcher records the sends that have
 * ended while others are still in flight, so a kill while recording finds some entries committed and some not.
 */
type ExpectedState = Omit<FoundState, 'achEntries'> & {
  achEntries: number | { atLeast: number; atMost: number };
};

const nothingSent = (n: number): FoundState => ({
  outbox: n,
  leased: n,
  achEntries: 0,
  railReferences: 0,
  achFiles: 0,
  achFilesWritten: 0,
});
/** At least the sends being recorded were answered (their entries committed); the others may still have been sending. */
const answeredNotRecorded = (n: number): ExpectedState => ({
  ...nothingSent(n),
  achEntries: { atLeast: 1, atMost: n },
});
const sentAndRecorded = (n: number): FoundState => ({
  outbox: 0,
  leased: 0,
  achEntries: n,
  railReferences: n,
  achFiles: 0,
  achFilesWritten: 0,
});

const SCENARIOS: Scenario[] = [
  {
    crashAt: 'before-send',
    rail: 'ach',
    title: 'between commit and send (claimed, the rail not called)',
    steps: [DISPATCH],
    left: nothingSent,
    handedBeforeCrash: 'none',
  },
  {
    crashAt: 'rail-writing',
    rail: 'ach',
    title: 'during the send (the ACH entry written, its transaction not committed)',
    steps: [DISPATCH],
    left: nothingSent,
    handedBeforeCrash: 'some',
  },
  {
    crashAt: 'rail-answered',
    rail: 'ach',
    title: 'after a send, before its outcome is recorded',
    steps: [DISPATCH],
    left: answeredNotRecorded,
    handedBeforeCrash: 'all',
  },
  {
    crashAt: 'recording',
    rail: 'ach',
    title: 'while the outcome is recorded (rail references written, not committed)',
    steps: [DISPATCH],
    left: answeredNotRecorded,
    handedBeforeCrash: 'all',
  },
  {
    crashAt: 'composing',
    rail: 'ach',
    title: "while the window's file is composed (not committed)",
    steps: [DISPATCH, CUT_FILES],
    left: sentAndRecorded,
    handedBeforeCrash: 'all',
  },
  {
    crashAt: 'file-half-written',
    rail: 'ach',
    title: "half-way through writing the window's file",
    steps: [DISPATCH, CUT_FILES],
    left: (n) => ({ ...sentAndRecorded(n), achFiles: 1 }),
    handedBeforeCrash: 'all',
  },
  {
    crashAt: 'file-renamed',
    rail: 'ach',
    title: 'after the file is renamed into place, before that is recorded',
    steps: [DISPATCH, CUT_FILES],
    left: (n) => ({ ...sentAndRecorded(n), achFiles: 1 }),
    handedBeforeCrash: 'all',
  },
  {
    crashAt: 'rail-answered',
    rail: 'sandbox',
    title: 'after the sandbox rail answered, before the outcome is recorded',
    steps: [DISPATCH],
    left: nothingSent,
    handedBeforeCrash: 'all',
  },
];

for (const kind of ['PGlite', 'PostgreSQL'] as const satisfies readonly DatabaseKind[])
  for (const scenario of SCENARIOS)
    test(`${kind}, ${scenario.rail} rail: kill -9 ${scenario.title}: sent at least once, paid and counted once`, async (t) => {
      if (kind === 'PostgreSQL' && !onPostgres) {
        t.skip(NEEDS_POSTGRES);
        return;
      }
      await crashAndRecover(t, kind, scenario);
    });

async function crashAndRecover(t: TestContext, kind: DatabaseKind, scenario: Scenario) {
  const world = await openCrashWorld(t, kind, scenario.rail);
  const instructions = await writePayments(t, world, T0);
  const n = instructions.length;
  assert.equal(n, 6, 'five advances and one payout wait in the outbox');

  const crashed = await runChild(world, { crashAt: scenario.crashAt, steps: scenario.steps });
  assert.equal(crashed.signal, 'SIGKILL', `killed -9, not ended otherwise:\n${crashed.output}`);
  assert.equal(crashed.crashed, scenario.crashAt, crashed.output);
  const handed = await handedByProcess(world);
  const handedBeforeCrash = handed.get(String(crashed.pid)) ?? [];
  assertHanded(handedBeforeCrash, instructions, scenario.handedBeforeCrash, 'before the crash');
  assertFilesAtCrash(scenario.crashAt, await outboundFiles(world));

  const restarted = await runChild(world, {
    crashAt: null,
    steps: [
      { work: 'dispatch', at: RESTART.toISOString() },
      ...(scenario.rail === 'ach' ? [CUT_FILES] : []),
      { work: 'settle', at: SETTLE.toISOString() },
    ],
  });
  assert.equal(restarted.code, 0, restarted.output);
  // A kill while recording may come at a later round of recording than the first: the dispatcher records the sends
  // that ended while others were in flight, so an earlier round's outcomes (the payout's, say) may be committed.
  const recordedEarlier = scenario.crashAt === 'recording' ? restarted.found.railReferences : 0;
  assert.ok(recordedEarlier < n, `a kill while recording leaves at least one outcome unrecorded`);
  const expected = scenario.left(n);
  assertFound(restarted.found, {
    ...expected,
    outbox: expected.outbox - recordedEarlier,
    leased: expected.leased - recordedEarlier,
    railReferences: expected.railReferences + recordedEarlier,
  });
  assert.deepEqual(restarted.violations, [], 'the books are sound at the moment of the kill');
  const resent = (await handedByProcess(world)).get(String(restarted.pid)) ?? [];
  const toSendAgain = expected.outbox - recordedEarlier;
  assertHanded(
    resent,
    instructions,
    toSendAgain === 0 ? 'none' : recordedEarlier > 0 ? 'some' : 'all',
    'after the restart',
  );
  assert.equal(resent.length, toSendAgain, 'every instruction not recorded is sent again, and only those');
  assert.deepEqual(restarted.reports[0]?.report, { sent: toSendAgain, retried: 0, refused: 0 });
  if (scenario.rail === 'ach')
    assert.deepEqual(
      restarted.reports[1]?.report,
      { composed: scenario.left(n).achFiles === 0 ? 1 : 0, written: 1 },
      'the window composed once, its file written by the process that found it unwritten',
    );
  const settled = restarted.reports.at(-1)?.report;
  assert.deepEqual(settled, {
    settled: 5,
    failed: 0,
    deposited: 1,
    returned: 0,
    sent: { sent: 0, retried: 0, refused: 0 },
  });

  await world.withDatabase(async ({ db }) => {
    await assertPaidOnce(db, instructions, scenario.rail);
    if (scenario.rail === 'ach') await assertEachInOneFileOnce(world, db, instructions);
    else assert.deepEqual(await outboundFiles(world), { visible: [], hidden: [] });
  });
  t.diagnostic(
    `handed to the rail: ${handedBeforeCrash.length} before the kill, ${resent.length} after the restart; ` +
      `ACH entries the kill left: ${restarted.found.achEntries}`,
  );
}

/** What the crash left, as the next process found it: the ACH entries within their range, the rest exactly. */
function assertFound(found: FoundState, expected: ExpectedState) {
  const { achEntries, ...rest } = expected;
  const { atLeast, atMost } =
    typeof achEntries === 'number' ? { atLeast: achEntries, atMost: achEntries } : achEntries;
  assert.ok(
    found.achEntries >= atLeast && found.achEntries <= atMost,
    `ACH entries the crash left: ${found.achEntries}, expected ${atLeast} to ${atMost}`,
  );
  const { achEntries: _found, ...foundRest } = found;
  assert.deepEqual(foundRest, rest, 'what the crash left, found by the next process');
}

/** Every instruction handed once (all), none, or some of them once each, and nothing else. */
function assertHanded(
  ids: string[],
  instructions: Instruction[],
  expected: 'all' | 'some' | 'none',
  when: string,
) {
  const all = instructions.map((i) => i.id).sort();
  assert.equal(new Set(ids).size, ids.length, `no instruction handed twice by one process ${when}`);
  if (expected === 'all')
    assert.deepEqual([...ids].sort(), all, `every instruction handed to the rail ${when}`);
  if (expected === 'none') assert.deepEqual(ids, [], `nothing handed to the rail ${when}`);
  if (expected === 'some') {
    assert.ok(ids.length > 0, `the rail was handed instructions ${when}`);
    for (const id of ids) assert.ok(all.includes(id));
  }
}

/** The outbound folder as the kill left it: never a half file where the bank looks. */
function assertFilesAtCrash(crashAt: CrashPoint, files: Awaited<ReturnType<typeof outboundFiles>>) {
  if (crashAt === 'file-half-written') {
    assert.deepEqual(
      files.visible.map((f) => f.name),
      [],
      'a half-written file is not where the bank looks',
    );
    assert.equal(files.hidden.length, 1, 'the half-written file is under its hidden temporary name');
    assert.throws(() => readOriginationFile(files.hidden[0]!.text), 'and it is indeed half a file');
  } else if (crashAt === 'file-renamed') {
    assert.equal(files.visible.length, 1);
    assert.deepEqual(files.hidden, []);
    readOriginationFile(files.visible[0]!.text);
  } else assert.deepEqual(files, { visible: [], hidden: [] }, 'no file before the cut');
}

/**
 * The books count each payment once: the outbox is empty, each advance and the payout carry their rail reference,
 * are settled (deposited), and have one posting of each kind; the ledger's invariants hold.
 */
async function assertPaidOnce(db: Db, instructions: Instruction[], rail: 'ach' | 'sandbox') {
  const { rows: outbox } = await sql<{ n: number }>`select count(*)::integer as n from outbox`.execute(db);
  assert.equal(outbox[0]!.n, 0, 'the outbox ends empty');
  const references = instructions.map((i) => i.reference);
  const { rows: payments } = await sql<{ reference: string; status: string; rail_reference: string | null }>`
    select id as reference, status, rail_reference from transfers where id = any(${references}::uuid[])
    union all select id, status, payout_rail_reference from paychecks where id = any(${references}::uuid[])
    order by reference`.execute(db);
  const { rows: entries } = await sql<{
    reference: string;
    trace_number: string;
  }>`select reference, trace_number
    from ach_entries order by reference`.execute(db);
  const traceOf = new Map(entries.map((e) => [e.reference, e.trace_number]));
  assert.deepEqual(
    payments,
    instructions
      .map((i) => ({
        reference: i.reference,
        status: i.purpose === 'ADVANCE' ? 'SETTLED' : 'DEPOSITED',
        rail_reference:
          rail === 'ach' ? (traceOf.get(i.reference) ?? 'no ACH entry') : `sandbox-${i.reference}`,
      }))
      .sort((a, b) => (a.reference < b.reference ? -1 : 1)),
    "each payment settled, with the rail's reference of its one entry",
  );
  const { rows: postings } = await sql<{ reference: string; kind: string; n: number }>`select
      coalesce(transfer_id, paycheck_id) as reference, kind, count(*)::integer as n
    from ledger_postings
    where (transfer_id = any(${references}::uuid[]) or paycheck_id = any(${references}::uuid[]))
      and kind in ('ADVANCE_SUBMITTED', 'ADVANCE_SETTLED', 'ADVANCE_FAILED', 'ADVANCE_RETURNED', 'PAYDAY',
        'PAYCHECK_DEPOSITED', 'PAYCHECK_RETURNED')
    group by 1, 2 order by 1, 2`.execute(db);
  assert.deepEqual(
    postings,
    instructions
      .flatMap((i) =>
        (i.purpose === 'ADVANCE'
          ? ['ADVANCE_SETTLED', 'ADVANCE_SUBMITTED']
          : ['PAYCHECK_DEPOSITED', 'PAYDAY']
        ).map((kind) => ({ reference: i.reference, kind, n: 1 })),
      )
      .sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0)),
    'one posting of each kind per payment: counted once',
  );
  assert.deepEqual(await checkLedgerInvariants(db), []);
}

/**
 * The rail acted on each instruction once: one ACH entry each, and each entry in exactly one file exactly once, for
 * what is delivered; every file whole, the one its window's row holds, and nothing hidden left behind.
 */
async function assertEachInOneFileOnce(world: CrashWorld, db: Db, instructions: Instruction[]) {
  const { rows: entries } = await sql<{
    id: string;
    reference: string;
    trace_number: string;
    amount_minor: number;
  }>`select instruction_id as id, reference, trace_number, amount_minor from ach_entries order by instruction_id`.execute(
    db,
  );
  assert.deepEqual(
    entries.map((e) => ({ id: e.id, reference: e.reference, deliveredMinor: Number(e.amount_minor) })),
    instructions.map(({ id, reference, deliveredMinor }) => ({ id, reference, deliveredMinor })),
    'one ACH entry per instruction, for what is delivered',
  );
  const files = await outboundFiles(world);
  assert.deepEqual(files.hidden, [], 'no temporary file left behind');
  const { rows: cut } = await sql<{
    window_id: string;
    file_name: string;
    content_sealed: Uint8Array;
    written: boolean;
  }>`select window_id, file_name, content_sealed, written_at is not null as written from ach_files
    order by file_name`.execute(db);
  // The child processes' key: their environment is the world's (outbox-crash-world.ts).
  const secrets = new AchFileSecrets(loadConfig(world.env).masterKey);
  assert.deepEqual(
    files.visible.map((f) => ({ file_name: f.name, content: f.text, written: true })),
    cut.map((row) => ({
      file_name: row.file_name,
      content: secrets.openFile(row.window_id, row.content_sealed),
      written: row.written,
    })),
    'the folder holds exactly the files cut, one per window, each as composed, each recorded as written',
  );
  for (const f of files.visible)
    assert.equal(
      (await stat(join(world.outboundDir, f.name))).mode & 0o777,
      0o600,
      `${f.name} is written 0600`,
    );
  const inFiles = files.visible.flatMap((f) => readOriginationFile(f.text));
  assert.deepEqual(
    inFiles.map((e) => e.traceNumber).sort(),
    entries.map((e) => e.trace_number).sort(),
    'each entry in exactly one file exactly once',
  );
  const entryOf = new Map(entries.map((e) => [e.trace_number, e]));
  for (const line of inFiles) {
    const entry = entryOf.get(line.traceNumber)!;
    assert.equal(line.amountMinor, Number(entry.amount_minor));
    assert.equal(line.individualId, entry.reference.replaceAll('-', '').slice(0, 15).toUpperCase());
  }
}
