/**
 * The ACH rail end to end, on the database (PGlite, and PostgreSQL with DATABASE_URL): advances to bank accounts and
 * payday remainders go to the outbox, the dispatcher sends them to the ACH rail (EWA_RAIL=ach), each becomes an entry
 * of the next window's Nacha file with its trace number kept on the transfer or paycheck; the file of each window
 * is written once to the outbound folder, record for record what nach2 (an independent writer) writes for the same
 * payments; return files dropped in the inbound folder fail or reverse what they return, once. The clock is fake;
 * nothing else is.
 *
 * 2026: New York is on EDT (UTC-4) from Sunday 8 March, so the cut-offs 10:30, 14:45 and 16:45 are 14:30, 18:45 and
 * 20:45 UTC, and settlement (08:30) is 12:30 UTC. The default pay calendar (biweekly from Monday 5 January, payday
 * five days after the period) has a period from 2 to 15 March, paid on Friday 20 March.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  copyFile,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  truncate,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { runCli } from '../../src/cli/run.ts';
import { AchFileSecrets } from '../../src/crypto/ach-file-secrets.ts';
import type { Db } from '../../src/db/database.ts';
import { achAttention } from '../../src/jobs/money-jobs.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { inboundFileIdentity, rememberInboundFile } from '../../src/rails/ach/ach-inbound-files.ts';
import { RETURN_FILE_BYTES_MAX, returnFileContent } from '../../src/rails/ach/ach-rail.ts';
import { listReturnFiles } from '../../src/rails/ach/ach-return-records.ts';
import type { NachaBatch, NachaEntry } from '../../src/rails/ach/nacha-file.ts';
import { buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { capture } from '../helpers/cli.ts';
import { createOrganization } from '../helpers/factories.ts';
import {
  addBankAccount,
  advanceBody,
  createPaidWorker,
  type PaidWorker,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { entryRecordsOf, nach2File, type ReturnedEntry, returnFile } from '../helpers/nacha.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

/** Who we are in the files: not the defaults, so that the files show they come from the configuration. */
const IDENTITY = {
  immediateDestination: '091000019',
  immediateDestinationName: 'WELLS FARGO BANK',
  immediateOrigin: '1234567890',
  immediateOriginName: 'EWA TEST EMPLOYER',
  companyName: 'EWA TEST CO',
  companyIdentification: '9876543210',
  originatingDfi: '09100001',
};
/** The bank of every worker's account (createPaidWorker, addBankAccount). */
const WORKER_ROUTING_NUMBER = '110000000';
const FEE_MINOR = 150;

interface AchWorld {
  app: TestApp;
  db: Db;
  clock: { now: Date };
  outbound: string;
  inbound: string;
  organizationId: string;
  /** Each bank account's number, as the test gave it. */
  accountNumbers: Map<string, string>;
}

async function achWorld(t: TestContext, start: string): Promise<AchWorld> {
  const folder = await mkdtemp(join(tmpdir(), 'ewa-ach-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const outbound = join(folder, 'outbound');
  const inbound = join(folder, 'inbound');
  const clock = { now: new Date(start) };
  const database = await openTestDatabase(t);
  const app = await buildTestAppOn(
    t,
    database,
    {
      EWA_RAIL: 'ach',
      EWA_ACH_OUTBOUND_DIR: outbound,
      EWA_ACH_INBOUND_DIR: inbound,
      EWA_ACH_IMMEDIATE_DESTINATION: IDENTITY.immediateDestination,
      EWA_ACH_IMMEDIATE_DESTINATION_NAME: IDENTITY.immediateDestinationName,
      EWA_ACH_IMMEDIATE_ORIGIN: IDENTITY.immediateOrigin,
      EWA_ACH_IMMEDIATE_ORIGIN_NAME: IDENTITY.immediateOriginName,
      EWA_ACH_COMPANY_NAME: IDENTITY.companyName,
      EWA_ACH_COMPANY_ID: IDENTITY.companyIdentification,
      EWA_ACH_ODFI: IDENTITY.originatingDfi,
    },
    { now: () => clock.now },
  );
  assert.ok(app.money.ach, 'EWA_RAIL=ach gives the money core its ACH rail');
  const organizationId = await createOrganization(app, {
    policy: { fee_bank_next_day_minor: FEE_MINOR },
  });
  return {
    app,
    db: database.db,
    clock,
    outbound,
    inbound,
    organizationId,
    accountNumbers: new Map(),
  };
}

/** A worker of the world's employer who earned 40,000 (15,000 accessible) the day before now. */
async function worker(world: AchWorld, organizationId = world.organizationId): Promise<PaidWorker> {
  const paid = await createPaidWorker(world.app, {
    organizationId,
    earnedMinor: 40_000,
    now: world.clock.now,
  });
  // The number createPaidWorker gave the bank account.
  world.accountNumbers.set(
    paid.depositoryId,
    `0001${paid.personId.replace(/\D/g, '').slice(0, 8).padEnd(8, '7')}`,
  );
  return paid;
}

async function savingsAccount(world: AchWorld, paid: PaidWorker, accountNumber: string): Promise<string> {
  const id = await addBankAccount(paid, accountNumber);
  world.accountNumbers.set(id, accountNumber);
  return id;
}

/** A payment the test expects in a file: what lands (requested − fee, or the payout) in which account. */
interface Payment {
  purpose: 'ADVANCE' | 'PAYCHECK';
  id: string;
  deliveredMinor: number;
  accountId: string;
}

/** POST /rest/transfers, next business day, to the default bank account or the one given. */
async function advance(world: AchWorld, paid: PaidWorker, amountMinor: number, accountId?: string) {
  const response = await postTransfer(
    world.app,
    paid.token,
    advanceBody({ ...paid, depositoryId: accountId ?? paid.depositoryId }, { amount: amountMinor }),
  );
  assert.equal(response.statusCode, 200, response.body);
  const { data } = response.json();
  assert.equal(data.attributes.fee, FEE_MINOR);
  return {
    purpose: 'ADVANCE',
    id: data.id as string,
    deliveredMinor: amountMinor - FEE_MINOR,
    accountId: accountId ?? paid.depositoryId,
  } satisfies Payment;
}

async function dispatch(world: AchWorld, expected: number): Promise<void> {
  assert.deepEqual(await world.app.money.outbox.dispatchDue(world.clock.now), {
    sent: expected,
    retried: 0,
    refused: 0,
  });
  await booksAreSound(world);
}

async function booksAreSound(world: AchWorld): Promise<void> {
  assert.deepEqual(await checkLedgerInvariants(world.db), []);
}

interface ReturnFileRow {
  file_name: string;
  status: string;
  error: string | null;
}

interface EntryRow {
  instruction_id: string;
  reference: string;
  purpose: string;
  window_id: string;
  trace_number: string;
  effective_date: string;
  settles_at: Date;
  amount_minor: number;
}

async function entryOf(world: AchWorld, reference: string): Promise<EntryRow> {
  const { rows } = await sql<EntryRow>`select instruction_id, reference, purpose, window_id, trace_number,
      to_char(effective_date, 'YYYY-MM-DD') as effective_date, settles_at, amount_minor
    from ach_entries where reference = ${reference}::uuid`.execute(world.db);
  assert.equal(rows.length, 1, `one ACH entry for ${reference}`);
  const row = rows[0]!;
  return { ...row, amount_minor: Number(row.amount_minor), settles_at: new Date(row.settles_at) };
}

/** Where the trace number of a payment is kept: on its transfer, or on its paycheck. */
async function railReferenceOf(world: AchWorld, payment: Payment) {
  const { rows } =
    payment.purpose === 'ADVANCE'
      ? await sql<{ rail_reference: string; settle_after: Date }>`select rail_reference, settle_after
          from transfers where id = ${payment.id}::uuid`.execute(world.db)
      : await sql<{
          rail_reference: string;
          settle_after: Date;
        }>`select payout_rail_reference as rail_reference,
          payout_settle_after as settle_after from paychecks where id = ${payment.id}::uuid`.execute(
          world.db,
        );
  const row = rows[0]!;
  return { railReference: row.rail_reference, settleAfter: new Date(row.settle_after) };
}

/**
 * Each payment is one entry of `windowId`, for what lands, taking effect on `effectiveDate` and settling at 08:30 in
 * New York that day; its trace number (our bank's id, then a sequence) and settlement instant are on its transfer
 * or paycheck.
 */
async function expectEntries(
  world: AchWorld,
  payments: readonly Payment[],
  windowId: string,
  effectiveDate: string,
  settlesAt: string,
): Promise<void> {
  for (const payment of payments) {
    const entry = await entryOf(world, payment.id);
    assert.deepEqual(
      {
        purpose: entry.purpose,
        window: entry.window_id,
        effective: entry.effective_date,
        amount: entry.amount_minor,
        settlesAt: entry.settles_at.toISOString(),
      },
      {
        purpose: payment.purpose,
        window: windowId,
        effective: effectiveDate,
        amount: payment.deliveredMinor,
        settlesAt,
      },
    );
    assert.match(entry.trace_number, new RegExp(`^${IDENTITY.originatingDfi}\\d{7}$`));
    assert.deepEqual(await railReferenceOf(world, payment), {
      railReference: entry.trace_number,
      settleAfter: entry.settles_at,
    });
  }
}

async function outboundFiles(world: AchWorld): Promise<string[]> {
  return (await readdir(world.outbound).catch(() => [])).sort();
}

/** A batch the test expects: its effective date, its purpose, its payments. */
interface ExpectedBatch {
  effectiveDate: string;
  purpose: 'ADVANCE' | 'PAYCHECK';
  payments: readonly Payment[];
}

/**
 * The window's file in the outbound folder is, record for record, the file nach2 writes for these payments with the
 * configured identity: one batch per effective date and purpose, entries in trace-number order, checking (22) or
 * savings (32) credits for what lands. nach2's own control figures (entries, credit total, entry hash, blocks of
 * ten) agree with the payments, and with what the database recorded of the file.
 */
async function expectFile(
  world: AchWorld,
  file: { name: string; windowId: string; cutoffAt: string; modifier: string },
  batches: readonly ExpectedBatch[],
): Promise<void> {
  const text = await readFile(join(world.outbound, file.name), 'utf8');
  const { rows: accounts } = await sql<{ id: string; subtype: string; routing_number: string }>`select id,
      subtype, routing_number from accounts where account_type = 'DEPOSITORY'`.execute(world.db);
  const accountOf = new Map(accounts.map((a) => [a.id, a]));
  const specBatches: NachaBatch[] = [];
  for (const [index, batch] of batches.entries()) {
    const entries: NachaEntry[] = [];
    for (const payment of batch.payments) {
      const account = accountOf.get(payment.accountId)!;
      entries.push({
        transactionCode: account.subtype === 'SAVINGS' ? 32 : 22,
        receivingRoutingNumber: account.routing_number,
        accountNumber: world.accountNumbers.get(payment.accountId)!,
        amountMinor: payment.deliveredMinor,
        individualId: payment.id.replaceAll('-', '').slice(0, 15),
        individualName: 'Robin Lee',
        traceNumber: (await railReferenceOf(world, payment)).railReference,
      });
    }
    entries.sort((a, b) => a.traceNumber.localeCompare(b.traceNumber));
    specBatches.push({
      companyName: IDENTITY.companyName,
      companyIdentification: IDENTITY.companyIdentification,
      companyEntryDescription: batch.purpose === 'PAYCHECK' ? 'PAYROLL' : 'EWA ADVANC',
      effectiveEntryDate: batch.effectiveDate,
      originatingDfi: IDENTITY.originatingDfi,
      batchNumber: index + 1,
      entries,
    });
  }
  const nach2 = await nach2File({
    immediateDestination: IDENTITY.immediateDestination,
    immediateDestinationName: IDENTITY.immediateDestinationName,
    immediateOrigin: IDENTITY.immediateOrigin,
    immediateOriginName: IDENTITY.immediateOriginName,
    createdAt: new Date(file.cutoffAt),
    fileIdModifier: file.modifier,
    batches: specBatches,
  });
  const records = text.slice(0, -1).split('\n');
  assert.deepEqual(records, nach2.records, `${file.name} is what nach2 writes for these payments`);
  const payments = batches.flatMap((b) => b.payments);
  const creditMinor = payments.reduce((sum, p) => sum + p.deliveredMinor, 0);
  const hash = payments.length * Number(WORKER_ROUTING_NUMBER.slice(0, 8));
  assert.deepEqual(nach2.control, {
    batchCount: batches.length,
    blockCount: records.length / 10,
    entryCount: payments.length,
    entryHash: String(hash).padStart(10, '0'),
    totalCreditMinor: creditMinor,
  });
  assert.equal(records.length % 10, 0, 'blocked to ten records');
  assert.equal(records.length, Math.ceil((2 + 2 * batches.length + payments.length) / 10) * 10);
  const { rows } = await sql<{
    file_name: string;
    entry_count: number;
    total_credit_minor: number;
    entry_hash: string;
    content: string | null;
    content_sealed: Uint8Array;
  }>`select file_name, entry_count, total_credit_minor, entry_hash, content, content_sealed from ach_files
    where window_id = ${file.windowId}`.execute(world.db);
  const secrets = new AchFileSecrets(world.app.config.masterKey);
  assert.deepEqual(
    rows.map(({ content_sealed, ...row }) => ({
      ...row,
      total_credit_minor: Number(row.total_credit_minor),
      content: secrets.openFile(file.windowId, content_sealed),
      stored_in_plaintext: row.content,
    })),
    [
      {
        file_name: file.name,
        entry_count: payments.length,
        total_credit_minor: creditMinor,
        entry_hash: nach2.control.entryHash,
        content: text,
        stored_in_plaintext: null,
      },
    ],
  );
  // The row holds no account number in the clear (the file does: it is for the bank, and only its owner reads it).
  const sealed = Buffer.from(rows[0]!.content_sealed);
  for (const { accountId } of payments) {
    const accountNumber = world.accountNumbers.get(accountId)!;
    assert.ok(text.includes(accountNumber), `the file pays ${accountNumber}`);
    assert.equal(sealed.includes(accountNumber), false, `the stored file does not show ${accountNumber}`);
  }
  assert.equal((await stat(join(world.outbound, file.name))).mode & 0o777, 0o600, 'written 0600');
  const { rows: inWindow } = await sql<{ n: number }>`select count(*)::integer as n from ach_entries
    where window_id = ${file.windowId}`.execute(world.db);
  assert.equal(inWindow[0]?.n, payments.length, 'the file holds every entry of its window');
}

/** `ewa …` on the world's database, as a running server runs it; its exit code and its --json answer's data. */
async function ewaOn(world: AchWorld, ...argv: string[]): Promise<{ code: number; data: unknown[] }> {
  const run = capture();
  const code = await runCli(argv, {
    ...run.context,
    database: { config: world.app.config, database: world.app.database },
  });
  assert.equal(run.stderr(), '');
  return { code, data: (JSON.parse(run.stdout()) as { data: unknown[] }).data };
}

/** The scheduled exchange at `at`: the files due cut and written, the return files read; the books checked. */
async function exchange(world: AchWorld, at: string) {
  world.clock.now = new Date(at);
  const report = await world.app.money.exchangeAchFiles(world.clock.now);
  await booksAreSound(world);
  return report;
}

const NOTHING_READ = { returnFiles: 0, returns: 0, unmatched: 0, refused: 0, notifications: 0 };

/** A world where Alice's advance of 5,000 went out in the file of 14:31 on 2026-03-09: her advance and its entry record. */
async function oneAdvanceSent(t: TestContext) {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const a1 = await advance(world, await worker(world), 5_000);
  await dispatch(world, 1);
  await exchange(world, '2026-03-09T14:31:00Z');
  return { world, a1, a1Record: await sentRecord(world, a1.id) };
}

test('advances and a payday remainder become entries of one Nacha file per window, as nach2 writes them', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z'); // Monday 08:00 in New York
  const ach = world.app.money.ach!;
  const [alice, bob] = [await worker(world), await worker(world)];
  const bobSavings = await savingsAccount(world, bob, '5550001234');
  await booksAreSound(world);

  // Before 10:30: the 10:30 window, effective Tuesday.
  const a1 = await advance(world, alice, 5_000);
  const b1 = await advance(world, bob, 4_000, bobSavings);
  const { rows: unsent } = await sql`select 1 from ach_entries`.execute(world.db);
  assert.equal(unsent.length, 0, 'nothing reaches the rail before the dispatcher sends it');
  await dispatch(world, 2);
  await expectEntries(world, [a1, b1], '2026-03-09/1030', '2026-03-10', '2026-03-10T12:30:00.000Z');
  assert.notEqual((await entryOf(world, a1.id)).trace_number, (await entryOf(world, b1.id)).trace_number);
  await booksAreSound(world);

  // The rail is told an instruction twice (a dispatcher that died before recording the answer): one entry.
  const sent = await entryOf(world, a1.id);
  const again = await ach.submit({
    instructionId: sent.instruction_id,
    reference: a1.id,
    purpose: 'ADVANCE',
    requestedAmountMinor: 5_000,
    deliveredAmountMinor: 4_850,
    currency: 'USD',
    schedule: 'NEXT_BUSINESS_DAY',
    destinationAccountId: alice.depositoryId,
    destinationKind: 'DEPOSITORY',
    submittedAt: world.clock.now,
  });
  assert.deepEqual(again, { railReference: sent.trace_number, expectedSettleAt: sent.settles_at });
  const { rows: count } = await sql<{ n: number }>`select count(*)::integer as n from ach_entries`.execute(
    world.db,
  );
  assert.equal(count[0]?.n, 2);

  // Before the cut-off nothing is due.
  assert.deepEqual(await exchange(world, '2026-03-09T14:29:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(await outboundFiles(world), []);

  // Another process, whose clock is a minute ahead, cuts the 10:30 window at 10:30:00...
  assert.deepEqual(await ach.cutFiles(new Date('2026-03-09T14:30:00Z')), { composed: 1, written: 1 });
  await booksAreSound(world);
  // ...while this one, at 10:29:30, takes an advance: the window is cut, so the entry goes in the next one.
  world.clock.now = new Date('2026-03-09T14:29:30Z');
  const a2 = await advance(world, alice, 2_000);
  await dispatch(world, 1);
  // After the cut-off, the 14:45 window.
  world.clock.now = new Date('2026-03-09T14:31:00Z');
  const b2 = await advance(world, bob, 1_000);
  await dispatch(world, 1);
  await expectEntries(world, [a2, b2], '2026-03-09/1445', '2026-03-10', '2026-03-10T12:30:00.000Z');
  await booksAreSound(world);

  const fileA = {
    name: 'ewa-20260309-1030-A.ach',
    windowId: '2026-03-09/1030',
    cutoffAt: '2026-03-09T14:30:00Z',
    modifier: 'A',
  };
  assert.deepEqual(await outboundFiles(world), [fileA.name]);
  await expectFile(world, fileA, [{ effectiveDate: '2026-03-10', purpose: 'ADVANCE', payments: [a1, b1] }]);
  // Cutting again, within the window and after it: nothing new.
  assert.deepEqual(await exchange(world, '2026-03-09T14:32:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(await ach.cutFiles(new Date('2026-03-09T18:44:00Z')), { composed: 0, written: 0 });
  assert.deepEqual(await outboundFiles(world), [fileA.name]);

  // 14:50: the 16:45 window; 16:50, after the last cut-off: Tuesday's 10:30 window, effective Wednesday.
  world.clock.now = new Date('2026-03-09T18:50:00Z');
  const a3 = await advance(world, alice, 1_500);
  await dispatch(world, 1);
  world.clock.now = new Date('2026-03-09T20:50:00Z');
  const b3 = await advance(world, bob, 1_200);
  await dispatch(world, 1);
  await expectEntries(world, [a3], '2026-03-09/1645', '2026-03-10', '2026-03-10T12:30:00.000Z');
  await expectEntries(world, [b3], '2026-03-10/1030', '2026-03-11', '2026-03-11T12:30:00.000Z');

  // One exchange late in the evening cuts both windows whose cut-off has passed since: 14:45 and 16:45.
  assert.deepEqual(await exchange(world, '2026-03-09T22:00:00Z'), {
    composed: 2,
    written: 2,
    ...NOTHING_READ,
  });
  const fileB = {
    name: 'ewa-20260309-1445-B.ach',
    windowId: '2026-03-09/1445',
    cutoffAt: '2026-03-09T18:45:00Z',
    modifier: 'B',
  };
  const fileC = {
    name: 'ewa-20260309-1645-C.ach',
    windowId: '2026-03-09/1645',
    cutoffAt: '2026-03-09T20:45:00Z',
    modifier: 'C',
  };
  assert.deepEqual(await outboundFiles(world), [fileA.name, fileB.name, fileC.name]);
  await expectFile(world, fileB, [{ effectiveDate: '2026-03-10', purpose: 'ADVANCE', payments: [a2, b2] }]);
  await expectFile(world, fileC, [{ effectiveDate: '2026-03-10', purpose: 'ADVANCE', payments: [a3] }]);
  assert.deepEqual(await exchange(world, '2026-03-10T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  const fileNextDay = {
    name: 'ewa-20260310-1030-A.ach',
    windowId: '2026-03-10/1030',
    cutoffAt: '2026-03-10T14:30:00Z',
    modifier: 'A',
  };
  await expectFile(world, fileNextDay, [{ effectiveDate: '2026-03-11', purpose: 'ADVANCE', payments: [b3] }]);
  await booksAreSound(world);

  // Settled once their file went out and their effective day's 08:30 passed.
  assert.deepEqual((await world.app.money.settle(new Date('2026-03-10T12:29:00Z'))).settled, 0);
  await booksAreSound(world);
  assert.deepEqual((await world.app.money.settle(new Date('2026-03-11T12:30:00Z'))).settled, 6);
  await booksAreSound(world);

  // Payday: Monday 16 March, after the period of 2-15 March. The remainders go out in the 10:30 window with an
  // advance of the new period: two batches, the advance effective Tuesday, the payroll on payday, Friday 20 March.
  world.clock.now = new Date('2026-03-16T13:00:00Z');
  const report = await world.app.money.payroll(world.clock.now);
  assert.deepEqual(report, { closed: 2, paid: 2, held: 0 });
  await recordShift(world.app, alice.jobId, 10_000, world.clock.now, '2026-03-16');
  const a4 = await advance(world, alice, 2_500);
  await dispatch(world, 3);
  const { rows: paychecks } = await sql<{
    id: string;
    job_id: string;
    payout_minor: number;
  }>`select id, job_id,
      payout_minor from paychecks where status = 'IN_TRANSIT'`.execute(world.db);
  const payout = (paid: PaidWorker, deliveredMinor: number): Payment => {
    const paycheck = paychecks.find((p) => p.job_id === paid.jobId)!;
    assert.equal(Number(paycheck.payout_minor), deliveredMinor, 'net pay − advances');
    return { purpose: 'PAYCHECK', id: paycheck.id, deliveredMinor, accountId: paid.depositoryId };
  };
  // Net 30,000 each; Alice took 8,500 of it, Bob 6,200.
  const payA = payout(alice, 21_500);
  const payB = payout(bob, 23_800);
  await expectEntries(world, [payA, payB], '2026-03-16/1030', '2026-03-20', '2026-03-20T12:30:00.000Z');
  await expectEntries(world, [a4], '2026-03-16/1030', '2026-03-17', '2026-03-17T12:30:00.000Z');
  assert.deepEqual(await exchange(world, '2026-03-16T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  await expectFile(
    world,
    {
      name: 'ewa-20260316-1030-A.ach',
      windowId: '2026-03-16/1030',
      cutoffAt: '2026-03-16T14:30:00Z',
      modifier: 'A',
    },
    [
      { effectiveDate: '2026-03-17', purpose: 'ADVANCE', payments: [a4] },
      { effectiveDate: '2026-03-20', purpose: 'PAYCHECK', payments: [payA, payB] },
    ],
  );
  assert.deepEqual((await world.app.money.settle(new Date('2026-03-20T12:30:00Z'))).deposited, 2);
  await booksAreSound(world);
  assert.deepEqual(
    (await readdir(world.outbound)).filter((name) => name.startsWith('.')),
    [],
    'no temporary file is left behind',
  );
});

/** What a return must change once and a file read again must not change at all. */
async function moneyState(db: Db): Promise<string> {
  const { rows: transfers } = await sql`select id, status, failure_reason, returned_at, returned_to
    from transfers order by id`.execute(db);
  const { rows: paychecks } = await sql`select id, status, total_debited_minor, payout_returned_at,
      payout_return_reason from paychecks order by id`.execute(db);
  const { rows: counts } = await sql`select (select count(*) from ledger_entries)::integer as entries,
      (select count(*) from ach_returns)::integer as returns`.execute(db);
  return JSON.stringify({ transfers, paychecks, counts });
}

async function transferOf(world: AchWorld, id: string) {
  const { rows } = await sql<{
    status: string;
    failure_reason: string | null;
    returned_at: Date | null;
    returned_to: string | null;
  }>`select status, failure_reason, returned_at, returned_to from transfers where id = ${id}::uuid`.execute(
    world.db,
  );
  const row = rows[0]!;
  return { ...row, returned_at: row.returned_at && new Date(row.returned_at).toISOString() };
}

async function paycheckOf(world: AchWorld, id: string) {
  const { rows } = await sql<{
    status: string;
    total_debited_minor: number;
    payout_returned_at: Date | null;
    payout_return_reason: string | null;
  }>`select status, total_debited_minor, payout_returned_at, payout_return_reason from paychecks
    where id = ${id}::uuid`.execute(world.db);
  const row = rows[0]!;
  return {
    ...row,
    total_debited_minor: Number(row.total_debited_minor),
    payout_returned_at: row.payout_returned_at && new Date(row.payout_returned_at).toISOString(),
  };
}

/** The postings of a movement kind about a transfer or paycheck, as (account kind, direction, amount) lines. */
async function movements(world: AchWorld, about: string, kind: string) {
  const { rows } = await sql<{
    memo: string | null;
    account: string;
    direction: string;
    amount_minor: number;
  }>`select p.memo, a.kind as account, e.direction, e.amount_minor from ledger_postings p
      join ledger_entries e on e.posting_id = p.id join ledger_accounts a on a.id = e.ledger_account_id
    where (p.transfer_id = ${about}::uuid or p.paycheck_id = ${about}::uuid) and p.kind = ${kind}
    `.execute(world.db);
  return rows
    .map((row) => ({ ...row, amount_minor: Number(row.amount_minor) }))
    .sort((a, b) => `${a.account}/${a.direction}`.localeCompare(`${b.account}/${b.direction}`));
}

async function balanceOf(world: AchWorld, accountId: string): Promise<number> {
  const { rows } = await sql<{ balance: number | null }>`select sum(case when e.direction = 'CREDIT'
      then e.amount_minor else -e.amount_minor end)::bigint as balance
    from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
    where a.account_id = ${accountId}::uuid`.execute(world.db);
  return Number(rows[0]?.balance ?? 0);
}

async function returnsPayable(world: AchWorld): Promise<number> {
  const { rows } = await sql<{ balance: number | null }>`select sum(case when e.direction = 'CREDIT'
      then e.amount_minor else -e.amount_minor end)::bigint as balance
    from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
    where a.kind = 'RETURNS_PAYABLE' and a.organization_id = ${world.organizationId}::uuid`.execute(world.db);
  return Number(rows[0]?.balance ?? 0);
}

/** The entry record of a payment, as the bank received it in our outbound files. */
async function sentRecord(world: AchWorld, reference: string): Promise<string> {
  const { trace_number } = await entryOf(world, reference);
  for (const name of await outboundFiles(world)) {
    const record = entryRecordsOf(await readFile(join(world.outbound, name), 'utf8')).get(trace_number);
    if (record) return record;
  }
  throw new Error(`no file holds the entry of ${reference}`);
}

/** The return file's headers: addressed to us (IDENTITY) unless `address` says otherwise. */
const TO_US = {
  immediateDestination: IDENTITY.immediateOrigin,
  companyIdentification: IDENTITY.companyIdentification,
};

async function dropReturns(
  world: AchWorld,
  name: string,
  returned: readonly ReturnedEntry[],
  createdAt: string,
  address: Partial<typeof TO_US> = {},
): Promise<string> {
  const path = join(world.inbound, name);
  await writeFile(path, returnFile(returned, { createdAt, ...TO_US, ...address }));
  return path;
}

test('return files: R01-R04 before settlement fail, after settlement reverse, each once however often read', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const [alice, bob, carol] = [await worker(world), await worker(world), await worker(world)];
  const a1 = await advance(world, alice, 5_000);
  const b1 = await advance(world, bob, 4_000);
  const c1 = await advance(world, carol, 3_000);
  await dispatch(world, 3);
  // A folder in the inbound folder (an archive, say) is no return file, and stops nothing.
  await mkdir(join(world.inbound, 'archive'), { recursive: true });
  assert.deepEqual(await exchange(world, '2026-03-09T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  await rm(join(world.inbound, 'archive'), { recursive: true });
  assert.equal(await balanceOf(world, alice.balanceAccountId), 10_000);
  await booksAreSound(world);

  // R01 before settlement: the advance fails with the code, amount and fee back to the earnings balance.
  await dropReturns(
    world,
    'returns-1.ach',
    [{ entryRecord: await sentRecord(world, a1.id), returnCode: 'R01' }],
    '2603091500',
  );
  assert.deepEqual(await exchange(world, '2026-03-09T19:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 1,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.deepEqual(await transferOf(world, a1.id), {
    status: 'FAILED',
    failure_reason: 'R01',
    returned_at: null,
    returned_to: null,
  });
  assert.equal(await balanceOf(world, alice.balanceAccountId), 15_000);
  assert.deepEqual(await movements(world, a1.id, 'ADVANCE_FAILED'), [
    { memo: 'R01', account: 'EARNINGS_BALANCE', direction: 'CREDIT', amount_minor: 5_000 },
    { memo: 'R01', account: 'EXTERNAL_BANK', direction: 'DEBIT', amount_minor: 4_850 },
    { memo: 'R01', account: 'FEE_REVENUE', direction: 'DEBIT', amount_minor: 150 },
  ]);
  await booksAreSound(world);

  // The same file read again, a copy of it under another name, and another file returning the same entry
  // (with another code): nothing changes.
  const before = await moneyState(world.db);
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  await copyFile(join(world.inbound, 'returns-1.ach'), join(world.inbound, 'returns-1-copy.ach'));
  assert.deepEqual(await exchange(world, '2026-03-09T19:02:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  await dropReturns(
    world,
    'returns-1-again.ach',
    [{ entryRecord: await sentRecord(world, a1.id), returnCode: 'R03' }],
    '2603091530',
  );
  assert.deepEqual(await exchange(world, '2026-03-09T19:03:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 0,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.equal(await moneyState(world.db), before, 'a return is applied once');

  // A return of a trace number we never sent: reported, nothing changed.
  await dropReturns(
    world,
    'returns-unknown.ach',
    [
      {
        entryRecord: await sentRecord(world, b1.id),
        returnCode: 'R03',
        originalTraceNumber: `${IDENTITY.originatingDfi}9999999`,
      },
    ],
    '2603091600',
  );
  assert.deepEqual(await exchange(world, '2026-03-09T20:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 0,
    unmatched: 1,
    refused: 0,
    notifications: 0,
  });
  assert.equal(await moneyState(world.db), before, 'an unknown trace number changes nothing');

  // A return of one of our entries for another amount than the entry's: reported, nothing changed (c1's real
  // return, below, still applies).
  const c1Record = await sentRecord(world, c1.id);
  const otherAmount = String(Number(c1Record.slice(29, 39)) - 1).padStart(10, '0');
  await dropReturns(
    world,
    'returns-other-amount.ach',
    [{ entryRecord: `${c1Record.slice(0, 29)}${otherAmount}${c1Record.slice(39)}`, returnCode: 'R03' }],
    '2603091605',
  );
  assert.deepEqual(await exchange(world, '2026-03-09T20:01:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 0,
    unmatched: 1,
    refused: 0,
    notifications: 0,
  });
  assert.equal(await moneyState(world.db), before, 'a return of another amount changes nothing');
  // Each unmatched return is kept as the file gave it, for a person: latest first.
  const b1Record = await sentRecord(world, b1.id);
  const files = new Map(
    ((await ewaOn(world, 'ach', 'returns', '--json')).data as { file_name: string; sha256: string }[]).map(
      (f) => [f.file_name, f.sha256],
    ),
  );
  assert.deepEqual(await ewaOn(world, 'ach', 'returns', '--unmatched', '--json'), {
    code: 0,
    data: [
      {
        file_sha256: files.get('returns-other-amount.ach'),
        file_name: 'returns-other-amount.ach',
        position: 1,
        received_at: '2026-03-09T20:01:00.000Z',
        original_trace_number: c1Record.slice(79, 94),
        amount_minor: Number(otherAmount),
        return_code: 'R03',
        return_reason: 'no account / unable to locate account',
        transaction_code: 21,
        individual_id: c1Record.slice(39, 54).trimEnd(),
        addenda_information: '',
      },
      {
        file_sha256: files.get('returns-unknown.ach'),
        file_name: 'returns-unknown.ach',
        position: 1,
        received_at: '2026-03-09T20:00:00.000Z',
        original_trace_number: `${IDENTITY.originatingDfi}9999999`,
        amount_minor: Number(b1Record.slice(29, 39)),
        return_code: 'R03',
        return_reason: 'no account / unable to locate account',
        transaction_code: 21,
        individual_id: b1Record.slice(39, 54).trimEnd(),
        addenda_information: '',
      },
    ],
  });
  assert.deepEqual(await ewaOn(world, 'ach', 'returns', '--unmatched', '--limit', '1', '--json'), {
    code: 0,
    data: [(await ewaOn(world, 'ach', 'returns', '--unmatched', '--json')).data[0]],
  });
  const { rows: read } = await sql<{
    file_name: string;
    returns: number;
    unmatched: number;
  }>`select file_name,
      returns, unmatched from ach_return_files`.execute(world.db);
  assert.deepEqual(
    read.sort((a, b) => (a.file_name < b.file_name ? -1 : 1)),
    [
      { file_name: 'returns-1-again.ach', returns: 1, unmatched: 0 },
      { file_name: 'returns-1.ach', returns: 1, unmatched: 0 },
      { file_name: 'returns-other-amount.ach', returns: 1, unmatched: 1 },
      { file_name: 'returns-unknown.ach', returns: 1, unmatched: 1 },
    ],
  );
  await booksAreSound(world);

  // Tuesday: Bob's and Carol's advances settle.
  assert.deepEqual(await world.app.money.settle(new Date('2026-03-10T13:00:00Z')), {
    settled: 2,
    failed: 0,
    deposited: 0,
    returned: 0,
    sent: { sent: 0, retried: 0, refused: 0 },
  });

  // R02 after settlement, while the paycheck that funded it is open: back to the earnings balance.
  await dropReturns(
    world,
    'returns-2.ach',
    [{ entryRecord: await sentRecord(world, b1.id), returnCode: 'R02' }],
    '2603101000',
  );
  assert.deepEqual(await exchange(world, '2026-03-10T14:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 1,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.deepEqual(await transferOf(world, b1.id), {
    status: 'FAILED',
    failure_reason: 'R02',
    returned_at: '2026-03-10T14:00:00.000Z',
    returned_to: 'EARNINGS_BALANCE',
  });
  assert.equal(await balanceOf(world, bob.balanceAccountId), 15_000);
  assert.deepEqual(await movements(world, b1.id, 'ADVANCE_RETURNED'), [
    { memo: 'R02', account: 'EARNINGS_BALANCE', direction: 'CREDIT', amount_minor: 4_000 },
    { memo: 'R02', account: 'FEE_REVENUE', direction: 'DEBIT', amount_minor: 150 },
    { memo: 'R02', account: 'PROVIDER_FUNDING', direction: 'DEBIT', amount_minor: 3_850 },
  ]);
  assert.equal(await returnsPayable(world), 0);
  await booksAreSound(world);

  // Payday. Net 30,000 each: Alice's and Bob's advances came back, Carol took 3,000.
  assert.deepEqual(await world.app.money.payroll(new Date('2026-03-16T13:00:00Z')), {
    closed: 3,
    paid: 3,
    held: 0,
  });
  world.clock.now = new Date('2026-03-16T13:00:00Z');
  await dispatch(world, 3);
  assert.deepEqual(await exchange(world, '2026-03-16T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  const paycheckOfJob = async (paid: PaidWorker) => {
    const { rows } = await sql<{ id: string; payout_minor: number }>`select id, payout_minor from paychecks
      where job_id = ${paid.jobId}::uuid`.execute(world.db);
    return { id: rows[0]!.id, payout: Number(rows[0]!.payout_minor) };
  };
  const [payA, payB, payC] = [
    await paycheckOfJob(alice),
    await paycheckOfJob(bob),
    await paycheckOfJob(carol),
  ];
  assert.deepEqual([payA.payout, payB.payout, payC.payout], [30_000, 30_000, 27_000]);
  await booksAreSound(world);

  // One file: R03 for Carol's advance, settled and its paycheck paid since (owed to her: RETURNS_PAYABLE), and R04
  // for Alice's payout, not yet settled.
  await dropReturns(
    world,
    'returns-3.ach',
    [
      { entryRecord: await sentRecord(world, c1.id), returnCode: 'R03' },
      { entryRecord: await sentRecord(world, payA.id), returnCode: 'R04' },
    ],
    '2603161100',
  );
  assert.deepEqual(await exchange(world, '2026-03-16T15:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 2,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.deepEqual(await transferOf(world, c1.id), {
    status: 'FAILED',
    failure_reason: 'R03',
    returned_at: '2026-03-16T15:00:00.000Z',
    returned_to: 'RETURNS_PAYABLE',
  });
  assert.deepEqual(await movements(world, c1.id, 'ADVANCE_RETURNED'), [
    { memo: 'R03', account: 'FEE_REVENUE', direction: 'DEBIT', amount_minor: 150 },
    { memo: 'R03', account: 'PROVIDER_FUNDING', direction: 'DEBIT', amount_minor: 2_850 },
    { memo: 'R03', account: 'RETURNS_PAYABLE', direction: 'CREDIT', amount_minor: 3_000 },
  ]);
  assert.deepEqual(await paycheckOf(world, payC.id), {
    status: 'IN_TRANSIT',
    total_debited_minor: 3_000,
    payout_returned_at: null,
    payout_return_reason: null,
  });
  assert.deepEqual(await paycheckOf(world, payA.id), {
    status: 'IN_TRANSIT',
    total_debited_minor: 0,
    payout_returned_at: '2026-03-16T15:00:00.000Z',
    payout_return_reason: 'R04',
  });
  assert.deepEqual(await movements(world, payA.id, 'PAYCHECK_RETURNED'), [
    { memo: 'R04', account: 'EXTERNAL_BANK', direction: 'DEBIT', amount_minor: 30_000 },
    { memo: 'R04', account: 'RETURNS_PAYABLE', direction: 'CREDIT', amount_minor: 30_000 },
  ]);
  assert.equal(await returnsPayable(world), 33_000);
  await booksAreSound(world);

  // Payday's settlement: Bob's and Carol's payouts arrive; Alice's came back and never does.
  assert.deepEqual(await world.app.money.settle(new Date('2026-03-20T13:00:00Z')), {
    settled: 0,
    failed: 0,
    deposited: 2,
    returned: 0,
    sent: { sent: 0, retried: 0, refused: 0 },
  });
  assert.equal((await paycheckOf(world, payA.id)).status, 'IN_TRANSIT');

  // R01 for Bob's payout after it was deposited, with Carol's R03 told again: Bob's pay is owed to him, once.
  await dropReturns(
    world,
    'returns-4.ach',
    [
      { entryRecord: await sentRecord(world, payB.id), returnCode: 'R01' },
      { entryRecord: await sentRecord(world, c1.id), returnCode: 'R03' },
    ],
    '2603201000',
  );
  assert.deepEqual(await exchange(world, '2026-03-20T14:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 1,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.deepEqual(await paycheckOf(world, payB.id), {
    status: 'DEPOSITED',
    total_debited_minor: 0,
    payout_returned_at: '2026-03-20T14:00:00.000Z',
    payout_return_reason: 'R01',
  });
  assert.deepEqual(await movements(world, payB.id, 'PAYCHECK_RETURNED'), [
    { memo: 'R01', account: 'PROVIDER_FUNDING', direction: 'DEBIT', amount_minor: 30_000 },
    { memo: 'R01', account: 'RETURNS_PAYABLE', direction: 'CREDIT', amount_minor: 30_000 },
  ]);
  assert.equal((await movements(world, c1.id, 'ADVANCE_RETURNED')).length, 3, 'still one return posting');
  assert.equal(await returnsPayable(world), 63_000);
  await booksAreSound(world);

  // Every file read again, whatever its name: nothing changes.
  const after = await moneyState(world.db);
  for (const name of await readdir(world.inbound))
    await copyFile(join(world.inbound, name), join(world.inbound, `copy-of-${name}`));
  assert.deepEqual(await exchange(world, '2026-03-20T15:00:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.equal(await moneyState(world.db), after);
  await booksAreSound(world);
});

test('a return file addressed to another originator is refused whole, nothing applied, and says why', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const alice = await worker(world);
  const a1 = await advance(world, alice, 5_000);
  await dispatch(world, 1);
  assert.deepEqual(await exchange(world, '2026-03-09T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  const a1Record = await sentRecord(world, a1.id);
  const before = await moneyState(world.db);

  // The same return of Alice's entry (trace number and amount ours), in files whose headers name another
  // originator: another immediate destination, another company, and a file with a return of another bank's entry.
  await dropReturns(
    world,
    'other-destination.ach',
    [{ entryRecord: a1Record, returnCode: 'R01' }],
    '2603091500',
    {
      immediateDestination: '5555555555',
    },
  );
  await dropReturns(
    world,
    'other-company.ach',
    [{ entryRecord: a1Record, returnCode: 'R01' }],
    '2603091501',
    {
      companyIdentification: '5555555555',
    },
  );
  await dropReturns(
    world,
    'other-bank.ach',
    [
      { entryRecord: a1Record, returnCode: 'R01' },
      { entryRecord: a1Record, returnCode: 'R03', originalTraceNumber: '123456780000001' },
    ],
    '2603091502',
  );
  const report = await exchange(world, '2026-03-09T19:00:00Z');
  assert.deepEqual(report, { composed: 0, written: 0, ...NOTHING_READ, returnFiles: 3, refused: 3 });
  assert.equal(
    achAttention(report),
    '3 return file(s) refused (see `ewa ach returns`)',
    'the operator is told',
  );
  assert.equal(await moneyState(world.db), before, 'a file not addressed to us changes nothing');
  assert.equal((await transferOf(world, a1.id)).status, 'PENDING');
  const { rows: refused } = await sql<{
    file_name: string;
    returns: number;
    unmatched: number;
    error: string | null;
  }>`select file_name, returns, unmatched, error from ach_return_files order by file_name`.execute(world.db);
  assert.deepEqual(refused, [
    {
      file_name: 'other-bank.ach',
      returns: 0,
      unmatched: 0,
      error:
        'not addressed to us: original trace number 123456780000001 is not of our originating bank (EWA_ACH_ODFI 09100001)',
    },
    {
      file_name: 'other-company.ach',
      returns: 0,
      unmatched: 0,
      error:
        "not addressed to us: line 2: the batch header's company identification (columns 41-50) is '5555555555', ours (EWA_ACH_COMPANY_ID) is '9876543210'",
    },
    {
      file_name: 'other-destination.ach',
      returns: 0,
      unmatched: 0,
      error:
        "not addressed to us: line 1: the file header's immediate destination (columns 4-13) is '5555555555', our immediate origin (EWA_ACH_IMMEDIATE_ORIGIN) is '1234567890'",
    },
  ]);

  // The operator's listing says the same, latest first.
  assert.deepEqual(
    ((await ewaOn(world, 'ach', 'returns', '--json')).data as ReturnFileRow[]).map((f) => [
      f.file_name,
      f.status,
      f.error,
    ]),
    refused.reverse().map((f) => [f.file_name, 'REFUSED', f.error]),
  );

  // Read once, refused or not: the next exchange reads nothing. The same return addressed to us applies.
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  await dropReturns(world, 'returns-1.ach', [{ entryRecord: a1Record, returnCode: 'R01' }], '2603091503');
  assert.deepEqual(await exchange(world, '2026-03-09T19:02:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
    returnFiles: 1,
    returns: 1,
  });
  assert.equal((await transferOf(world, a1.id)).status, 'FAILED');
  await booksAreSound(world);
});

test('trace numbers given again after 9,999,999 entries: later files stay valid, a return finds the new entry', async (t) => {
  // March: two advances take the first trace numbers; one settles, the other comes back (R01) before settling.
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const [alice, ann] = [await worker(world), await worker(world)];
  // One at a time: the dispatcher sends a batch in its messages' (random) id order.
  const a1 = await advance(world, alice, 5_000);
  await dispatch(world, 1);
  const x1 = await advance(world, ann, 3_000);
  await dispatch(world, 1);
  const trace = (n: number) => `${IDENTITY.originatingDfi}${String(n).padStart(7, '0')}`;
  assert.equal((await entryOf(world, a1.id)).trace_number, trace(1));
  assert.equal((await entryOf(world, x1.id)).trace_number, trace(2));
  assert.deepEqual(await exchange(world, '2026-03-09T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  await dropReturns(
    world,
    'returns-march.ach',
    [{ entryRecord: await sentRecord(world, x1.id), returnCode: 'R01' }],
    '2603091500',
  );
  assert.equal((await exchange(world, '2026-03-09T19:00:00Z')).returns, 1);
  assert.equal((await world.app.money.settle(new Date('2026-03-10T13:00:00Z'))).settled, 1);
  assert.equal((await transferOf(world, a1.id)).status, 'SETTLED');

  // June, 9,999,997 entries later: the sequence is at its end and wraps within one window's file.
  world.clock.now = new Date('2026-06-17T12:00:00Z'); // Wednesday 08:00 in New York
  await sql`select setval('ach_trace_seq', 9999998)`.execute(world.db);
  const [bob, carol, dave] = [await worker(world), await worker(world), await worker(world)];
  const b2 = await advance(world, bob, 4_000);
  await dispatch(world, 1);
  const c2 = await advance(world, carol, 5_000); // a1's amount, and (below) its trace number
  await dispatch(world, 1);
  const d2 = await advance(world, dave, 3_000); // x1's amount and trace number
  await dispatch(world, 1);
  assert.deepEqual(
    await Promise.all([b2, c2, d2].map(async (p) => (await entryOf(world, p.id)).trace_number)),
    [trace(9_999_999), trace(1), trace(2)],
  );
  await expectEntries(world, [b2, c2, d2], '2026-06-17/1030', '2026-06-18', '2026-06-18T12:30:00.000Z');
  assert.deepEqual(await exchange(world, '2026-06-17T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  const june = {
    name: 'ewa-20260617-1030-A.ach',
    windowId: '2026-06-17/1030',
    cutoffAt: '2026-06-17T14:30:00Z',
    modifier: 'A',
  };
  // Unique within the file, entries in trace-number order, and what nach2 writes.
  await expectFile(world, june, [
    { effectiveDate: '2026-06-18', purpose: 'ADVANCE', payments: [b2, c2, d2] },
  ]);

  // All three settle: x1's return, of the trace number d2 has now, is not d2's.
  assert.equal((await world.app.money.settle(new Date('2026-06-18T13:00:00Z'))).settled, 3);

  // A return of trace number 1 for 4,850, as the bank received it in June: c2 comes back, a1 stays paid.
  const juneRecords = entryRecordsOf(await readFile(join(world.outbound, june.name), 'utf8'));
  const c2Record = juneRecords.get(trace(1))!;
  await dropReturns(world, 'returns-june.ach', [{ entryRecord: c2Record, returnCode: 'R03' }], '2606181000');
  assert.deepEqual(await exchange(world, '2026-06-18T14:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 1,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.deepEqual(await transferOf(world, c2.id), {
    status: 'FAILED',
    failure_reason: 'R03',
    returned_at: '2026-06-18T14:00:00.000Z',
    returned_to: 'EARNINGS_BALANCE',
  });
  assert.deepEqual(await transferOf(world, a1.id), {
    status: 'SETTLED',
    failure_reason: null,
    returned_at: null,
    returned_to: null,
  });
  const { rows: returned } = await sql<{
    reference: string;
    trace_number: string;
    return_code: string;
  }>`select
      e.reference, r.trace_number, r.return_code from ach_returns r join ach_entries e using (instruction_id)
    order by r.received_at`.execute(world.db);
  assert.deepEqual(returned, [
    { reference: x1.id, trace_number: trace(2), return_code: 'R01' },
    { reference: c2.id, trace_number: trace(1), return_code: 'R03' },
  ]);

  // The same return told again in another file: applied once; a1, long past its return window, is not its
  // next candidate.
  const before = await moneyState(world.db);
  await dropReturns(
    world,
    'returns-june-again.ach',
    [{ entryRecord: c2Record, returnCode: 'R02' }],
    '2606181100',
  );
  assert.deepEqual(await exchange(world, '2026-06-18T15:00:00Z'), {
    composed: 0,
    written: 0,
    returnFiles: 1,
    returns: 0,
    unmatched: 0,
    refused: 0,
    notifications: 0,
  });
  assert.equal(await moneyState(world.db), before, 'a return is applied once');
  // The listing accounts for every return of each file: applied, already returned, or unmatched.
  const listed = new Map(
    (await listReturnFiles(world.db, { size: 10 })).items.map((file) => [file.file_name, file]),
  );
  const counts = (name: string) => {
    const file = listed.get(name)!;
    return [file.returns, file.applied, file.already_returned, file.unmatched];
  };
  assert.deepEqual(counts('returns-june-again.ach'), [1, 0, 1, 0]);
  assert.ok([...listed.values()].every((f) => f.returns === f.applied + f.already_returned + f.unmatched));
});

test('a payday remainder through ACH is not delivered before the deposit instant, in any employer time zone', async (t) => {
  // Payday is Friday 20 March in each employer's zone; east of New York it begins on Thursday, New York time.
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const zones = ['UTC', 'Asia/Tokyo', 'America/New_York', 'America/Los_Angeles'];
  const jobs = new Map<string, string>();
  for (const timeZone of zones) {
    const organizationId = await createOrganization(world.app, { policy: { time_zone: timeZone } });
    jobs.set((await worker(world, organizationId)).jobId, timeZone);
  }
  world.clock.now = new Date('2026-03-16T13:00:00Z');
  assert.deepEqual(await world.app.money.payroll(world.clock.now), { closed: 4, paid: 4, held: 0 });
  await dispatch(world, 4);
  const { rows } = await sql<{
    id: string;
    job_id: string;
    deposit_expected_at: Date;
    payout_settle_after: Date;
  }>`select id, job_id, deposit_expected_at, payout_settle_after from paychecks`.execute(world.db);
  const seen = [];
  for (const paycheck of rows) {
    const entry = await entryOf(world, paycheck.id);
    seen.push({
      timeZone: jobs.get(paycheck.job_id),
      effective: entry.effective_date,
      notBeforePayday: new Date(paycheck.payout_settle_after) >= new Date(paycheck.deposit_expected_at),
    });
  }
  assert.deepEqual(
    seen.sort((a, b) => zones.indexOf(a.timeZone!) - zones.indexOf(b.timeZone!)),
    zones.map((timeZone) => ({ timeZone, effective: '2026-03-20', notBeforePayday: true })),
  );
  await booksAreSound(world);
});

/**
 * The golden return file (test/fixtures/ach/returns-golden.ach) as our bank would send it to us: its file header is
 * addressed to IDENTITY's immediate origin and its trace numbers are of IDENTITY's bank already; its batch headers
 * get IDENTITY's company identification (columns 41-50, in no control total).
 */
async function goldenToUs(): Promise<string> {
  const text = await readFile(new URL('../fixtures/ach/returns-golden.ach', import.meta.url), 'utf8');
  assert.equal(text.slice(3, 13), IDENTITY.immediateOrigin);
  return text
    .split('\n')
    .map((line) =>
      line.startsWith('5') ? `${line.slice(0, 40)}${IDENTITY.companyIdentification}${line.slice(50)}` : line,
    )
    .join('\n');
}

test('the golden file: its returns of entries never sent are kept unmatched, its notification of change kept too', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  // Four returns of trace numbers never sent, and one notification of change (test/unit/nacha-returns.test.ts).
  await mkdir(world.inbound, { recursive: true });
  await writeFile(join(world.inbound, 'returns-golden.ach'), await goldenToUs());
  const before = await moneyState(world.db);
  assert.deepEqual(await exchange(world, '2026-03-09T14:31:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
    returnFiles: 1,
    unmatched: 4,
    notifications: 1,
  });
  assert.equal(await moneyState(world.db), before, 'a notification of change changes nothing');
  const { data: unmatched } = await ewaOn(world, 'ach', 'returns', '--unmatched', '--json');
  assert.deepEqual(
    (unmatched as { position: number; return_code: string; amount_minor: number }[]).map((r) => [
      r.position,
      r.return_code,
      r.amount_minor,
    ]),
    [
      [1, 'R01', 12_500],
      [2, 'R02', 30_000],
      [3, 'R03', 4_999],
      [4, 'R04', 100],
    ],
  );
  const { data: changes } = await ewaOn(world, 'ach', 'returns', '--changes', '--json');
  assert.deepEqual(
    (changes as Record<string, unknown>[]).map(({ file_sha256: _, ...change }) => change),
    [
      {
        file_name: 'returns-golden.ach',
        position: 1,
        received_at: '2026-03-09T14:31:00.000Z',
        original_trace_number: '091000010000005',
        change_code: 'C01',
        change_reason: 'incorrect account number: the correct one in 1-17',
        corrected_data: '987654321',
        transaction_code: 21,
        individual_id: 'TRF0005',
        original_receiving_dfi: '07100001',
        entry: null,
      },
    ],
  );
});

async function accountRow(world: AchWorld, id: string) {
  const { rows } = await sql`select * from accounts where id = ${id}::uuid`.execute(world.db);
  return rows[0];
}

test('notifications of change are kept with the entry each is about and listed, never applied', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const alice = await worker(world);
  const a1 = await advance(world, alice, 5_000);
  await dispatch(world, 1);
  assert.deepEqual(await exchange(world, '2026-03-09T14:31:00Z'), {
    composed: 1,
    written: 1,
    ...NOTHING_READ,
  });
  const a1Record = await sentRecord(world, a1.id);
  const a1Entry = await entryOf(world, a1.id);
  const accountBefore = await accountRow(world, alice.depositoryId);
  const before = await moneyState(world.db);

  // The bank says Alice's account number is another (C01), and a routing number of an entry we never sent (C02).
  await dropReturns(
    world,
    'changes-1.ach',
    [
      { entryRecord: a1Record, returnCode: 'C01', correctedData: '55566677788' },
      {
        entryRecord: a1Record,
        returnCode: 'C02',
        correctedData: '021000021',
        originalTraceNumber: `${IDENTITY.originatingDfi}9999999`,
      },
    ],
    '2603091800',
  );
  const report = await exchange(world, '2026-03-09T22:00:00Z');
  assert.deepEqual(report, { composed: 0, written: 0, ...NOTHING_READ, returnFiles: 1, notifications: 2 });
  assert.equal(
    achAttention(report),
    '2 notification(s) of change (update those bank accounts by hand; see `ewa ach returns --changes`)',
  );
  assert.equal(await moneyState(world.db), before, 'a notification of change moves no money');
  assert.deepEqual(
    await accountRow(world, alice.depositoryId),
    accountBefore,
    "the worker's account is as it was",
  );

  const { data: changes } = await ewaOn(world, 'ach', 'returns', '--changes', '--json');
  const common = {
    file_name: 'changes-1.ach',
    received_at: '2026-03-09T22:00:00.000Z',
    transaction_code: 21,
    individual_id: a1Record.slice(39, 54).trimEnd(),
    original_receiving_dfi: WORKER_ROUTING_NUMBER.slice(0, 8),
  };
  assert.deepEqual(
    (changes as Record<string, unknown>[]).map(({ file_sha256: _, ...change }) => change),
    [
      {
        ...common,
        position: 1,
        original_trace_number: a1Entry.trace_number,
        change_code: 'C01',
        change_reason: 'incorrect account number: the correct one in 1-17',
        corrected_data: '55566677788',
        entry: {
          instruction_id: a1Entry.instruction_id,
          reference: a1.id,
          purpose: 'ADVANCE',
          effective_date: a1Entry.effective_date,
          amount_minor: a1Entry.amount_minor,
          account_id: alice.depositoryId,
          person_id: alice.personId,
          account_routing_number: WORKER_ROUTING_NUMBER,
        },
      },
      {
        ...common,
        position: 2,
        original_trace_number: `${IDENTITY.originatingDfi}9999999`,
        change_code: 'C02',
        change_reason: 'incorrect routing number: the correct one in 1-9',
        corrected_data: '021000021',
        entry: null,
      },
    ],
  );
  const { data: files } = await ewaOn(world, 'ach', 'returns', '--json');
  assert.deepEqual(
    (files as { file_name: string; returns: number; notifications: number }[]).map((f) => [
      f.file_name,
      f.returns,
      f.notifications,
    ]),
    [['changes-1.ach', 0, 2]],
  );

  // The file read again changes nothing, keeps nothing twice; the advance still settles as if no notice came.
  assert.deepEqual(await exchange(world, '2026-03-09T22:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.equal((await ewaOn(world, 'ach', 'returns', '--changes', '--json')).data.length, 2);
  await world.app.money.settle(new Date('2026-03-10T13:00:00Z'));
  assert.equal((await transferOf(world, a1.id)).status, 'SETTLED');
  await booksAreSound(world);
});

test('a return file too large to read is refused, not the end of every run; files are known by their bytes', async (t) => {
  const { world, a1, a1Record } = await oneAdvanceSent(t);

  // Larger than a string may be (a sparse file: no disk used), named before the return file of Alice's entry.
  const huge = join(world.inbound, 'a-huge.ach');
  await writeFile(huge, '');
  await truncate(huge, 600_000_000);
  // Two files of other bytes whose text decodes alike (each invalid byte is read as U+FFFD).
  await writeFile(join(world.inbound, 'b-binary-1.ach'), Buffer.from([0xff, 0x41]));
  await writeFile(join(world.inbound, 'b-binary-2.ach'), Buffer.from([0xfe, 0x41]));
  await dropReturns(world, 'c-returns.ach', [{ entryRecord: a1Record, returnCode: 'R01' }], '2603091500');

  const report = await exchange(world, '2026-03-09T19:00:00Z');
  assert.deepEqual(report, {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
    returnFiles: 4,
    returns: 1,
    refused: 3,
  });
  assert.equal((await transferOf(world, a1.id)).status, 'FAILED', 'the file after the huge one is read');
  const { rows } = await sql<{ file_name: string; sha256: string; error: string | null }>`select file_name,
      sha256, error from ach_return_files order by file_name`.execute(world.db);
  const bytesHash = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  assert.deepEqual(
    rows.map((row) => [row.file_name, row.sha256]),
    [
      ['a-huge.ach', bytesHash(Buffer.alloc(600_000_000))],
      ['b-binary-1.ach', bytesHash(Buffer.from([0xff, 0x41]))],
      ['b-binary-2.ach', bytesHash(Buffer.from([0xfe, 0x41]))],
      ['c-returns.ach', bytesHash(await readFile(join(world.inbound, 'c-returns.ach')))],
    ],
  );
  assert.equal(
    rows[0]!.error,
    `the file is 600000000 bytes, more than the ${RETURN_FILE_BYTES_MAX} a return file may have`,
  );
  // Read once, refused or not.
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
});

test('a return file unchanged on disk is not read again; a copy is recorded, not applied; a changed one is read', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  const [alice, bob, carol] = [await worker(world), await worker(world), await worker(world)];
  const a1 = await advance(world, alice, 5_000);
  const b1 = await advance(world, bob, 5_000);
  const c1 = await advance(world, carol, 5_000);
  await dispatch(world, 3);
  await exchange(world, '2026-03-09T14:31:00Z');
  const returnOf = async (reference: string) =>
    returnFile([{ entryRecord: await sentRecord(world, reference), returnCode: 'R01' }], {
      createdAt: '2603091500',
      ...TO_US,
    });
  const path = join(world.inbound, 'returns.ach');
  await writeFile(path, await returnOf(a1.id));
  // A whole second, so utimes (which takes seconds) puts it back exactly.
  const modified = 1_773_000_000;
  await utimes(path, modified, modified);
  const readOnce = { composed: 0, written: 0, ...NOTHING_READ, returnFiles: 1, returns: 1 };
  assert.deepEqual(await exchange(world, '2026-03-09T19:00:00Z'), readOnce);
  const known = async () =>
    (
      await sql<{ file_name: string; sha256: string; mtime_ns: string }>`select file_name, sha256,
        mtime_ns::text as mtime_ns from ach_inbound_files order by file_name`.execute(world.db)
    ).rows;
  const sha256 = createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
  assert.deepEqual(await known(), [{ file_name: 'returns.ach', sha256, mtime_ns: `${modified}000000000` }]);

  // A copy under another name: its bytes are known, so it is recorded for the next run and applied to nothing.
  await copyFile(path, join(world.inbound, 'returns-copy.ach'));
  const before = await moneyState(world.db);
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(
    (await known()).map((row) => [row.file_name, row.sha256]),
    [
      ['returns-copy.ach', sha256],
      ['returns.ach', sha256],
    ],
  );
  assert.equal(await moneyState(world.db), before);

  // The copy archived: its name is forgotten. Delivered again under that name, its bytes are still known.
  await rm(join(world.inbound, 'returns-copy.ach'));
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:20Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(
    (await known()).map((row) => row.file_name),
    ['returns.ach'],
  );
  await copyFile(path, join(world.inbound, 'returns-copy.ach'));
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:40Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.equal((await known()).length, 2);
  assert.equal(await moneyState(world.db), before, 'applied to nothing, again');

  // Rewritten in place to other bytes of the same size, its modification time put back: its change time moved,
  // so it is read again, and its new return applied.
  const overwrite = async (content: string) => {
    const handle = await open(path, 'r+');
    try {
      const { bytesWritten } = await handle.write(content, 0);
      assert.equal(bytesWritten, (await handle.stat()).size, 'the same size');
    } finally {
      await handle.close();
    }
  };
  await overwrite(await returnOf(b1.id));
  await utimes(path, modified, modified);
  assert.deepEqual(await exchange(world, '2026-03-09T19:02:00Z'), readOnce);
  assert.equal((await transferOf(world, b1.id)).status, 'FAILED');

  // The risk taken: a rewrite in place within one tick of the file system's clock keeps every part of the
  // identity. Recording the file's change time as if so shows a name whose identity is unchanged is not read.
  await overwrite(await returnOf(c1.id));
  await utimes(path, modified, modified);
  const { ctimeNs } = await stat(path, { bigint: true });
  await sql`update ach_inbound_files set ctime_ns = ${ctimeNs.toString()}::bigint
    where file_name = 'returns.ach'`.execute(world.db);
  assert.deepEqual(await exchange(world, '2026-03-09T19:03:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.notEqual((await transferOf(world, c1.id)).status, 'FAILED', 'not read: its return is not applied');
  // Its modification time changed: read again.
  await utimes(path, modified + 60, modified + 60);
  assert.deepEqual(await exchange(world, '2026-03-09T19:04:00Z'), readOnce);
  assert.equal((await transferOf(world, c1.id)).status, 'FAILED');
  assert.deepEqual(await exchange(world, '2026-03-09T19:05:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
});

test('a return file gone between its stat and its read is nothing to read this run; any other failure names it', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'ewa-inbound-'));
  try {
    const gone = join(folder, 'archived.ach');
    assert.equal(await returnFileContent(gone, 94), null);
    assert.equal(await returnFileContent(gone, RETURN_FILE_BYTES_MAX + 1), null, 'streamed, too');
    const folderNamed = join(folder, 'a-folder.ach');
    await mkdir(folderNamed);
    await assert.rejects(returnFileContent(folderNamed, 94), (error: Error) =>
      error.message.startsWith(`the return file ${folderNamed} could not be read: EISDIR`),
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('a return file delivered as a symbolic link is read; a link to nothing or to a folder stops nothing', async (t) => {
  const { world, a1, a1Record } = await oneAdvanceSent(t);

  const delivered = join(world.outbound, '..', 'delivered');
  await mkdir(delivered, { recursive: true });
  await writeFile(
    join(delivered, 'returns-1.ach'),
    returnFile([{ entryRecord: a1Record, returnCode: 'R01' }], { createdAt: '2603091500', ...TO_US }),
  );
  await mkdir(world.inbound, { recursive: true });
  await symlink(join(delivered, 'returns-1.ach'), join(world.inbound, 'b-returns-1.ach'));
  await symlink(join(delivered, 'gone.ach'), join(world.inbound, 'a-dangling.ach'));
  await symlink(delivered, join(world.inbound, 'c-folder'));

  assert.deepEqual(await exchange(world, '2026-03-09T19:00:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
    returnFiles: 1,
    returns: 1,
  });
  assert.equal((await transferOf(world, a1.id)).status, 'FAILED');
});

test('a folder that lists no file forgets no name: files back after the folder was away are not read again', async (t) => {
  const { world, a1Record } = await oneAdvanceSent(t);
  await writeFile(
    join(world.inbound, 'returns.ach'),
    returnFile([{ entryRecord: a1Record, returnCode: 'R01' }], {
      createdAt: '2603091500',
      ...TO_US,
    }),
  );
  assert.equal((await exchange(world, '2026-03-09T19:00:00Z')).returnFiles, 1);
  const known = async () =>
    (
      await sql<{
        file_name: string;
        seen_at: Date;
      }>`select file_name, seen_at from ach_inbound_files`.execute(world.db)
    ).rows.map((row) => [row.file_name, new Date(row.seen_at).toISOString()]);
  const seen = [['returns.ach', '2026-03-09T19:00:00.000Z']];
  assert.deepEqual(await known(), seen);

  // The folder moved away (a mount down, say): the run makes an empty one, reads nothing and forgets nothing.
  const away = `${world.inbound}.away`;
  await rename(world.inbound, away);
  assert.deepEqual(await exchange(world, '2026-03-09T19:01:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(await known(), seen);

  // Back as it was: its file is known by its identity and not read (a read would record it anew, at 19:02).
  await rm(world.inbound, { recursive: true });
  await rename(away, world.inbound);
  assert.deepEqual(await exchange(world, '2026-03-09T19:02:00Z'), {
    composed: 0,
    written: 0,
    ...NOTHING_READ,
  });
  assert.deepEqual(await known(), seen);
});

test('ewa ach returns shows a file name with a line break or escape sequences quoted, never as lines of its own', async (t) => {
  const world = await achWorld(t, '2026-03-09T12:00:00Z');
  await mkdir(world.inbound, { recursive: true });
  const name = 'x\u001b[2J\u001b[32m  READ     1 return(s)\nforged\u202e';
  await writeFile(join(world.inbound, name), 'not a return file\n');
  await exchange(world, '2026-03-09T19:00:00Z');
  const run = capture();
  const code = await runCli(['ach', 'returns'], {
    ...run.context,
    database: { config: world.app.config, database: world.app.database },
  });
  assert.equal(code, 0);
  assert.equal(
    run.stdout(),
    '2026-03-09T19:00:00.000Z  "x\\u001b[2J\\u001b[32m  READ     1 return(s)\\nforged\\u202e"  sha256 ' +
      `${createHash('sha256').update('not a return file\n').digest('hex').slice(0, 16)}  REFUSED  line 1: record is 17 characters, not 94\n`,
  );
});

test("a file's identity is kept only while its claim stands: a claim deleted meanwhile leaves no row and no error", async (t) => {
  const database = await openTestDatabase(t);
  const path = join(await mkdtemp(join(tmpdir(), 'ewa-inbound-')), 'returns.ach');
  t.after(() => rm(dirname(path), { recursive: true, force: true }));
  await writeFile(path, 'not a return file');
  const found = await inboundFileIdentity(path);
  assert.ok(found);
  const now = new Date('2026-03-09T15:00:00Z');
  // The operator deleted the claim (to read the file again) after the run saw it claimed: nothing to keep, no error.
  await rememberInboundFile(database.db, 'returns.ach', found.identity, 'f'.repeat(64), now);
  const kept = await sql`select file_name from ach_inbound_files`.execute(database.db);
  assert.deepEqual(kept.rows, []);
});
