import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { type Tx, withTransaction } from '../../db/transaction.ts';
import { isBusinessDay, nextBusinessDay } from '../business-days.ts';
import {
  type PaymentRail,
  type PendingPayment,
  type RailAcceptance,
  type RailInstruction,
  type RailOutcome,
  RailRejection,
} from '../payment-rail.ts';
import {
  forgetInboundFilesBut,
  inboundFileIdentity,
  isClaimed,
  knownInboundFiles,
  rememberInboundFile,
  sameIdentity,
} from './ach-inbound-files.ts';
import {
  effectiveEntryDateFor,
  firstSettlementDayFrom,
  settlementInstant,
  windowById,
  windowFor,
} from './ach-windows.ts';
import { type NachaEntry, summarizeNachaFile, writeNachaFile } from './nacha-file.ts';
import { type AchNotificationOfChange, type AchReturn, parseReturnFile } from './nacha-returns.ts';

/** Who we are in the files: the company and its originating bank, from configuration. */
export interface AchIdentity {
  immediateDestination: string;
  immediateDestinationName: string;
  immediateOrigin: string;
  immediateOriginName: string;
  companyName: string;
  companyIdentification: string;
  /** The originating bank's 8-digit id: the first digits of every trace number. */
  originatingDfi: string;
}

/** A worker's bank account as a file needs it; the number is opened only while the file is composed. */
export interface AchBankAccount {
  routingNumber: string;
  accountNumber: string;
  subtype: 'CHECKING' | 'SAVINGS';
  holderName: string;
}

export interface AchRailOptions {
  db: Db;
  identity: AchIdentity;
  /** Where origination files are put for the bank's file transfer, and where it drops return files. */
  outboundDir: string;
  inboundDir: string;
  bankAccounts(ids: readonly string[], tx: Tx): Promise<Map<string, AchBankAccount>>;
  /** Seals a file's content for `ach_files` and opens it again (it holds full account numbers). */
  fileSecrets: AchFileSealer;
  now: () => Date;
}

/** Seals and opens an origination file, bound to its window (AchFileSecrets). */
export interface AchFileSealer {
  sealFile(windowId: string, content: string): Buffer;
  openFile(windowId: string, sealed: Uint8Array): string;
}

/** A return read from a file, matched to the payment it returns. */
export interface MatchedReturn {
  reference: string;
  purpose: 'ADVANCE' | 'PAYCHECK';
  returnCode: string;
}

export interface AchRail extends PaymentRail {
  /** Composes the file of every window whose cut-off has passed, then writes every composed file not yet written. */
  cutFiles(now: Date): Promise<{ composed: number; written: number }>;
  /**
   * Reads the return files of the inbound folder not read before; `apply` runs in the transaction that records
   * each file, so a file's returns are applied once, however often it is read.
   */
  readReturnFiles(
    now: Date,
    apply: (tx: Tx, returns: readonly MatchedReturn[]) => Promise<void>,
  ): Promise<{ files: number; returns: number; unmatched: number; refused: number; notifications: number }>;
}

/**
 * ACH through Nacha files. An instruction becomes an entry of the next settlement window's file (a trace number
 * kept with it); at each cut-off the window's file is composed once, in the database, then written to the
 * outbound folder whole (a temporary name, then a rename), so a crash never leaves half a file where the bank
 * looks. A credit counts as settled on its effective date's settlement instant; a return that comes later undoes it.
 * Bank accounts only: cards have their own rail.
 */
export function createAchRail(options: AchRailOptions): AchRail {
  const { db, identity } = options;
  return {
    name: 'ach',
    destinations: ['DEPOSITORY'],
    // A credit lands on its effective date, a business day or more after its window: never within thirty minutes.
    instantDestinations: [],
    async submit(instruction: RailInstruction): Promise<RailAcceptance> {
      if (instruction.destinationKind !== 'DEPOSITORY')
        throw new RailRejection('RAIL_REJECTED', 'ACH pays bank accounts only');
      return withTransaction(db, async (tx) => {
        const known = await acceptanceOf(tx, instruction.instructionId);
        if (known) return known;
        const window = await openWindow(tx, options.now());
        const notBeforeDay = instruction.notBefore
          ? firstSettlementDayFrom(instruction.notBefore)
          : undefined;
        const effective = effectiveEntryDateFor(window, notBeforeDay, nextBusinessDay, isBusinessDay);
        const settlesAt = settlementInstant(effective);
        await sql`insert into ach_entries (instruction_id, reference, purpose, window_id, trace_number, effective_date,
            settles_at, destination_account_id, amount_minor, created_at)
          values (${instruction.instructionId}::uuid, ${instruction.reference}::uuid, ${instruction.purpose},
            ${window.id}, ${identity.originatingDfi} || lpad(nextval('ach_trace_seq')::text, 7, '0'),
            ${effective}::date, ${settlesAt.toISOString()}::timestamptz, ${instruction.destinationAccountId}::uuid,
            ${instruction.deliveredAmountMinor}, ${options.now().toISOString()}::timestamptz)`.execute(tx);
        const made = await acceptanceOf(tx, instruction.instructionId);
        if (!made) throw new Error(`ACH entry ${instruction.instructionId} was not written`);
        return made;
      });
    },

    async outcomes(pending: readonly PendingPayment[], now: Date): Promise<RailOutcome[]> {
      if (pending.length === 0) return [];
      // No news is good news: a credit whose file went out and whose settlement instant has passed is settled.
      // Each payment by its own entry (reference and trace number): a trace number is given again after 9,999,999
      // entries, so it alone names no entry, and a return of an older entry with it is not this one's.
      const { rows } = await sql<{ reference: string }>`select e.reference from ach_entries e
          join unnest(${pending.map((p) => p.reference)}::uuid[], ${pending.map((p) => p.railReference)}::text[])
            as p(reference, trace_number) on p.reference = e.reference and p.trace_number = e.trace_number
          join ach_files f on f.window_id = e.window_id and f.written_at is not null
          left join ach_returns r on r.instruction_id = e.instruction_id
        where e.settles_at <= ${now.toISOString()}::timestamptz and r.instruction_id is null`.execute(db);
      return rows.map((row) => ({ reference: row.reference, status: 'SETTLED' }));
    },

    async cutFiles(now: Date) {
      let composed = 0;
      const { rows: due } = await sql<{ id: string }>`select id from ach_windows
        where cut_at is null and cutoff_at <= ${now.toISOString()}::timestamptz order by cutoff_at`.execute(
        db,
      );
      for (const window of due) if (await composeFile(options, window.id, now)) composed++;
      const { rows: unwritten } = await sql<{ window_id: string }>`select window_id from ach_files
        where written_at is null order by window_id`.execute(db);
      let written = 0;
      for (const { window_id } of unwritten) if (await writeFileOf(options, window_id, now)) written++;
      return { composed, written };
    },

    async readReturnFiles(now, apply) {
      const report = { files: 0, returns: 0, unmatched: 0, refused: 0, notifications: 0 };
      await mkdir(options.inboundDir, { recursive: true });
      // Files only: a folder the bank's transfer (or an operator) leaves there must not stop every return behind it.
      // A symbolic link to a file is that file (some transfers link what they deliver); one to a folder is not.
      const inbound = await readdir(options.inboundDir, { withFileTypes: true });
      const names = inbound
        .filter((entry) => entry.isFile() || entry.isSymbolicLink())
        .map((entry) => entry.name);
      const listed = names.filter((name) => !name.startsWith('.')).sort();
      const known = await knownInboundFiles(db, listed);
      for (const name of listed) {
        const path = join(options.inboundDir, name);
        const found = await inboundFileIdentity(path);
        if (found === null) continue;
        // A name whose file is as it was when its bytes were claimed is not read: the folder is never emptied.
        const seen = known.get(name);
        if (seen !== undefined && sameIdentity(seen, found.identity)) continue;
        const content = await returnFileContent(path, found.sizeBytes);
        // Moved away (archived) since its stat: nothing to read under this name this run.
        if (content === null) continue;
        const { sha256, text, tooLarge } = content;
        // Bytes read before under another name (a copy), or before the name's file was last touched: recorded for
        // the next run, not parsed again. The claim below still guards a file another process claims meanwhile.
        if (await isClaimed(db, sha256)) {
          await rememberInboundFile(db, name, found.identity, sha256, now);
          continue;
        }
        let parsed: ReturnType<typeof parseReturnFile> | undefined;
        let refusal: string | null = null;
        try {
          if (tooLarge !== null) throw new Error(tooLarge);
          parsed = parseReturnFile(text);
          refusal = notAddressedToUs(parsed, identity);
          if (refusal !== null) parsed = undefined;
        } catch (error) {
          refusal = error instanceof Error ? error.message : String(error);
        }
        const read = await withTransaction(db, async (tx) => {
          // The file's row is the claim: a file read before (by this process or another) is skipped. Claimed either
          // way by the end, so the name's identity is kept for the next run.
          const remember = () => rememberInboundFile(tx, name, found.identity, sha256, now);
          if (!parsed) {
            const claimed = await claimFile(tx, sha256, name, now, 0, 0, refusal);
            await remember();
            return claimed ? 'refused' : undefined;
          }
          const returns = parsed.returns;
          const { matched, unmatchedAt, entryOf } = await matchReturns(tx, returns, now);
          const unmatched = unmatchedAt.length;
          const claimed = await claimFile(tx, sha256, name, now, returns.length, unmatched, null);
          await remember();
          if (!claimed) return undefined;
          await keepUnmatched(tx, sha256, returns, unmatchedAt, now);
          // A return of an entry already returned (another file, or another process, told it first) is applied once.
          const { rows: fresh } = await sql<{
            instruction_id: string;
            return_code: string;
          }>`insert into ach_returns
              (instruction_id, trace_number, return_code, file_sha256, received_at)
            select instruction_id, trace_number, return_code, ${sha256}, ${now.toISOString()}::timestamptz
            from unnest(${matched.map((m) => m.instructionId)}::uuid[],
              ${matched.map((m) => m.traceNumber)}::text[],
              ${matched.map((m) => m.returnCode)}::text[]) as r(instruction_id, trace_number, return_code)
            on conflict (instruction_id) do nothing
            returning instruction_id, return_code`.execute(tx);
          await apply(
            tx,
            fresh.map((row) => {
              const entry = entryOf.get(row.instruction_id)!;
              return { reference: entry.reference, purpose: entry.purpose, returnCode: row.return_code };
            }),
          );
          // Notifications of change are kept for a person (`ewa ach returns --changes`), never applied: the bank
          // details they correct are the worker's to change.
          await keepNotifications(tx, sha256, parsed.notifications, now);
          return { returns: fresh.length, unmatched, notifications: parsed.notifications.length };
        });
        if (read === undefined) continue;
        report.files++;
        if (read === 'refused') report.refused++;
        else {
          report.returns += read.returns;
          report.unmatched += read.unmatched;
          report.notifications += read.notifications;
        }
      }
      // A folder that lists no file forgets nothing: a mount that is down, or the folder moved away for a while, would
      // otherwise make the next run read and hash every file of it once more. Names of files all archived at once are
      // forgotten by the next run that lists one.
      if (listed.length > 0) await forgetInboundFilesBut(db, listed);
      return report;
    },
  };
}

/**
 * The most bytes a return file may have to be read: far more than any bank's return file (a million returns take
 * about 190 MB), and well within what one string may hold (about 512 MB): a larger file could not be read at all,
 * and would stop every exchange and payroll run, and every file named after it, until removed.
 */
export const RETURN_FILE_BYTES_MAX = 256 * 1024 * 1024;

/**
 * A return file's SHA-256 (of its bytes, as `sha256sum` gives it: files whose bytes differ are never taken for one
 * another, whatever their text decodes to) and its text; a file larger than RETURN_FILE_BYTES_MAX (by its size when
 * listed) is hashed as it streams, never held whole, and has no text but the reason it is refused. Null when the
 * file is no longer there; any other failure to read it names it.
 */
export async function returnFileContent(
  path: string,
  size: number,
): Promise<{ sha256: string; text: string; tooLarge: string | null } | null> {
  try {
    return await readReturnFile(path, size);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw new Error(`the return file ${path} could not be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

async function readReturnFile(
  path: string,
  size: number,
): Promise<{ sha256: string; text: string; tooLarge: string | null }> {
  if (size > RETURN_FILE_BYTES_MAX) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }))
      hash.update(chunk as Buffer);
    return {
      sha256: hash.digest('hex'),
      text: '',
      tooLarge: `the file is ${size} bytes, more than the ${RETURN_FILE_BYTES_MAX} a return file may have`,
    };
  }
  const bytes = await readFile(path);
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    text: bytes.toString('utf8'),
    tooLarge: null,
  };
}

/**
 * Why a return file is not ours to apply, or null when it is: a file the bank meant for another originator (a shared
 * folder, a misrouted transfer) would otherwise apply wherever its trace numbers and amounts happen to match ours.
 * Ours means: the file header's immediate destination is our immediate origin (the file answers ours), every batch
 * header names our company identification, and every return and notification of change names an original trace
 * number of our originating bank. The batch headers' originating DFI is not compared: in a return it names the bank
 * that returned the entry. Spaces around the ten-character fields are not significant.
 */
export function notAddressedToUs(
  parsed: ReturnType<typeof parseReturnFile>,
  identity: AchIdentity,
): string | null {
  const { address } = parsed;
  const prefix = 'not addressed to us: ';
  if (address.immediateDestination.trim() !== identity.immediateOrigin.trim())
    return `${prefix}line 1: the file header's immediate destination (columns 4-13) is '${address.immediateDestination}', our immediate origin (EWA_ACH_IMMEDIATE_ORIGIN) is '${identity.immediateOrigin}'`;
  for (const batch of address.batches) {
    if (batch.companyIdentification.trim() !== identity.companyIdentification.trim())
      return `${prefix}line ${batch.line}: the batch header's company identification (columns 41-50) is '${batch.companyIdentification}', ours (EWA_ACH_COMPANY_ID) is '${identity.companyIdentification}'`;
  }
  for (const entry of [...parsed.returns, ...parsed.notifications]) {
    if (!entry.originalTraceNumber.startsWith(identity.originatingDfi))
      return `${prefix}original trace number ${entry.originalTraceNumber} is not of our originating bank (EWA_ACH_ODFI ${identity.originatingDfi})`;
  }
  return null;
}

/**
 * How long after its effective date a return can still name an entry: Nacha's longest ordinary return time (60
 * calendar days after settlement, for unauthorized debits and credits) with a month to spare. An entry older than
 * that is no candidate, so a return (or a late copy of one) never lands on an entry that gave its trace number to a
 * later one long ago.
 */
export const ACH_RETURN_WINDOW_DAYS = 90;

/**
 * An entry (`e`) that a return or notification of change read at `now` may be about: its file was written (the bank
 * had it) and its effective date is within the return window. One condition for both, so they never disagree.
 */
function answerableAt(now: Date) {
  return sql`exists (select 1 from ach_files f where f.window_id = e.window_id and f.written_at is not null)
    and e.effective_date >= (${now.toISOString()}::timestamptz at time zone 'America/New_York')::date
      - ${ACH_RETURN_WINDOW_DAYS}::integer`;
}

interface ReturnCandidate {
  instruction_id: string;
  trace_number: string;
  reference: string;
  purpose: 'ADVANCE' | 'PAYCHECK';
  amount_minor: number;
  returned: boolean;
}

/**
 * Matches the returns of a file to our entries. Trace numbers are given again after 9,999,999 entries (migration
 * 0026), so a return names the entry with its original trace number and whole amount whose file was written
 * (the bank had it), whose effective date is within the return window, and which is not returned yet: the most
 * recent of them. When every such entry is returned already, the return is one told again: matched (not reported)
 * and applied to nothing. Anything else is unmatched, for a person.
 */
async function matchReturns(tx: Tx, returns: readonly AchReturn[], now: Date) {
  const { rows } = await sql<ReturnCandidate>`select e.instruction_id, e.trace_number, e.reference, e.purpose,
      e.amount_minor, r.instruction_id is not null as returned
    from ach_entries e
      left join ach_returns r on r.instruction_id = e.instruction_id
    where e.trace_number = any(${returns.map((r) => r.originalTraceNumber)}::text[]) and ${answerableAt(now)}
    order by e.created_at desc, e.instruction_id desc`.execute(tx);
  const candidates = Map.groupBy(rows, (row) => row.trace_number);
  const taken = new Set<string>();
  const matched: { instructionId: string; traceNumber: string; returnCode: string }[] = [];
  const unmatchedAt: number[] = [];
  for (const [index, r] of returns.entries()) {
    const same = (candidates.get(r.originalTraceNumber) ?? []).filter(
      (e) => Number(e.amount_minor) === r.amountMinor,
    );
    const open = same.find((e) => !e.returned && !taken.has(e.instruction_id));
    const entry = open ?? same[0];
    if (!entry) {
      unmatchedAt.push(index);
      continue;
    }
    taken.add(entry.instruction_id);
    matched.push({
      instructionId: entry.instruction_id,
      traceNumber: r.originalTraceNumber,
      returnCode: r.returnCode,
    });
  }
  return { matched, unmatchedAt, entryOf: new Map(rows.map((row) => [row.instruction_id, row])) };
}

/**
 * Keeps the returns of a file that matched nothing (`unmatchedAt`: their indexes in `returns`), as the file gave
 * them, for a person (`ewa ach returns --unmatched`): nothing was applied for them.
 */
async function keepUnmatched(
  tx: Tx,
  sha256: string,
  returns: readonly AchReturn[],
  unmatchedAt: readonly number[],
  now: Date,
): Promise<void> {
  if (unmatchedAt.length === 0) return;
  const kept = unmatchedAt.map((index) => ({ position: index + 1, ...returns[index]! }));
  await sql`insert into ach_unmatched_returns (file_sha256, position, original_trace_number, amount_minor,
      return_code, transaction_code, individual_id, addenda_information, received_at)
    select ${sha256}, position, original_trace_number, amount_minor, return_code, transaction_code, individual_id,
      addenda_information, ${now.toISOString()}::timestamptz
    from unnest(${kept.map((r) => r.position)}::integer[], ${kept.map((r) => r.originalTraceNumber)}::text[],
      ${kept.map((r) => r.amountMinor)}::bigint[], ${kept.map((r) => r.returnCode)}::text[],
      ${kept.map((r) => r.transactionCode)}::integer[], ${kept.map((r) => r.individualId)}::text[],
      ${kept.map((r) => r.addendaInformation)}::text[])
      as r(position, original_trace_number, amount_minor, return_code, transaction_code, individual_id,
        addenda_information)`.execute(tx);
}

/**
 * Keeps a file's notifications of change, each with the entry it is about: matched as a return is, by its original
 * trace number, to the most recent entry with it whose file was written, within the return window; not by amount (a
 * notification's is zero), and returned or not (a notification may follow a return). Null when none is ours.
 */
async function keepNotifications(
  tx: Tx,
  sha256: string,
  notifications: readonly AchNotificationOfChange[],
  now: Date,
): Promise<void> {
  if (notifications.length === 0) return;
  await sql`insert into ach_change_notifications (file_sha256, position, original_trace_number, change_code,
      corrected_data, transaction_code, individual_id, original_receiving_dfi, instruction_id, received_at)
    select ${sha256}, n.position, n.original_trace_number, n.change_code, n.corrected_data, n.transaction_code,
      n.individual_id, n.original_receiving_dfi,
      (select e.instruction_id from ach_entries e
        where e.trace_number = n.original_trace_number and ${answerableAt(now)}
        order by e.created_at desc, e.instruction_id desc limit 1),
      ${now.toISOString()}::timestamptz
    from unnest(${notifications.map((_, i) => i + 1)}::integer[],
      ${notifications.map((n) => n.originalTraceNumber)}::text[], ${notifications.map((n) => n.changeCode)}::text[],
      ${notifications.map((n) => n.correctedData)}::text[], ${notifications.map((n) => n.transactionCode)}::integer[],
      ${notifications.map((n) => n.individualId)}::text[],
      ${notifications.map((n) => n.originalReceivingDfi)}::text[])
      as n(position, original_trace_number, change_code, corrected_data, transaction_code, individual_id,
        original_receiving_dfi)`.execute(tx);
}

async function acceptanceOf(tx: Tx, instructionId: string): Promise<RailAcceptance | undefined> {
  const { rows } = await sql<{ trace_number: string; settles_at: Date }>`select trace_number, settles_at
    from ach_entries where instruction_id = ${instructionId}::uuid`.execute(tx);
  const row = rows[0];
  return row ? { railReference: row.trace_number, expectedSettleAt: new Date(row.settles_at) } : undefined;
}

/**
 * The window an entry made now goes in: the next whose file is not yet composed. The window's row is share-locked
 * until the entry commits, and composing takes it FOR UPDATE, so no entry lands in a window already cut.
 */
async function openWindow(tx: Tx, now: Date) {
  let at = now;
  for (let tries = 0; tries < 10; tries++) {
    const window = windowFor(at, isBusinessDay);
    await sql`insert into ach_windows (id, cutoff_at) values (${window.id}, ${window.cutoffAt.toISOString()}::timestamptz)
      on conflict (id) do nothing`.execute(tx);
    const { rows } = await sql<{ cut_at: Date | null }>`select cut_at from ach_windows where id = ${window.id}
      for share`.execute(tx);
    if (rows[0]?.cut_at === null) return window;
    at = window.cutoffAt;
  }
  throw new Error('no open ACH window found');
}

/** Composes one window's file in one transaction: the file row and the window's cut stand or fall together. */
async function composeFile(options: AchRailOptions, windowId: string, now: Date): Promise<boolean> {
  return withTransaction(options.db, async (tx) => {
    const { rows: locked } = await sql<{ cut_at: Date | null }>`select cut_at
      from ach_windows where id = ${windowId} for update`.execute(tx);
    if (!locked[0] || locked[0].cut_at !== null) return false;
    const window = windowById(windowId);
    const { rows: entries } = await sql<{
      purpose: 'ADVANCE' | 'PAYCHECK';
      reference: string;
      trace_number: string;
      effective_date: string;
      destination_account_id: string;
      amount_minor: number;
    }>`select purpose, reference, trace_number, to_char(effective_date, 'YYYY-MM-DD') as effective_date,
        destination_account_id, amount_minor
      from ach_entries where window_id = ${windowId} order by effective_date, purpose, trace_number`.execute(
      tx,
    );
    await sql`update ach_windows set cut_at = ${now.toISOString()}::timestamptz where id = ${windowId}`.execute(
      tx,
    );
    if (entries.length === 0) return false;
    const accounts = await options.bankAccounts(
      [...new Set(entries.map((e) => e.destination_account_id))],
      tx,
    );
    const { identity } = options;
    const groups = Map.groupBy(entries, (e) => `${e.effective_date}/${e.purpose}`);
    const batches = [...groups.entries()].map(([key, group], index) => {
      const [effectiveEntryDate, purpose] = key.split('/') as [string, string];
      return {
        companyName: identity.companyName,
        companyIdentification: identity.companyIdentification,
        companyEntryDescription: purpose === 'PAYCHECK' ? 'PAYROLL' : 'EWA ADVANC',
        effectiveEntryDate,
        originatingDfi: identity.originatingDfi,
        batchNumber: index + 1,
        entries: group.map((entry): NachaEntry => {
          const account = accounts.get(entry.destination_account_id);
          if (!account)
            throw new Error(`bank account ${entry.destination_account_id} of an ACH entry is missing`);
          return {
            transactionCode: account.subtype === 'SAVINGS' ? 32 : 22,
            receivingRoutingNumber: account.routingNumber,
            accountNumber: account.accountNumber,
            amountMinor: Number(entry.amount_minor),
            individualId: entry.reference.replaceAll('-', '').slice(0, 15),
            individualName: account.holderName,
            traceNumber: entry.trace_number,
          };
        }),
      };
    });
    const content = writeNachaFile({
      immediateDestination: identity.immediateDestination,
      immediateDestinationName: identity.immediateDestinationName,
      immediateOrigin: identity.immediateOrigin,
      immediateOriginName: identity.immediateOriginName,
      createdAt: window.cutoffAt,
      fileIdModifier: window.fileIdModifier,
      batches,
    });
    const summary = summarizeNachaFile(content);
    const fileName = `ewa-${windowId.replaceAll('-', '').replace('/', '-')}-${window.fileIdModifier}.ach`;
    const sealed = options.fileSecrets.sealFile(windowId, content);
    await sql`insert into ach_files (window_id, file_name, content_sealed, entry_count, total_credit_minor, entry_hash,
        created_at)
      values (${windowId}, ${fileName}, ${sealed}, ${summary.entryCount}, ${summary.totalCreditMinor},
        ${summary.entryHash}, ${now.toISOString()}::timestamptz)`.execute(tx);
    return true;
  });
}

/**
 * Writes a composed file into the outbound folder and records it written, holding its row meanwhile: a process
 * that finds the row held skips it, so no two processes write one file at once (they would share its temporary
 * name), and a writer killed mid-file lets the row go for the next run to write it whole. False when the file was
 * written, or is being written, by another.
 */
async function writeFileOf(options: AchRailOptions, windowId: string, now: Date): Promise<boolean> {
  return withTransaction(options.db, async (tx) => {
    const { rows } = await sql<{
      file_name: string;
      content: string | null;
      content_sealed: Uint8Array | null;
    }>`select file_name, content, content_sealed from ach_files
      where window_id = ${windowId} and written_at is null for update skip locked`.execute(tx);
    const file = rows[0];
    if (!file) return false;
    // Files composed before migration 0012 were kept in plaintext (content); later ones sealed only.
    const content = file.content_sealed
      ? options.fileSecrets.openFile(windowId, file.content_sealed)
      : file.content;
    if (content === null) throw new Error(`ACH file of window ${windowId} has no content`);
    await writeWhole(options.outboundDir, file.file_name, content);
    await sql`update ach_files set written_at = ${now.toISOString()}::timestamptz
      where window_id = ${windowId}`.execute(tx);
    return true;
  });
}

/** Records a return file as read; false when it was read before. */
async function claimFile(
  tx: Tx,
  sha256: string,
  name: string,
  now: Date,
  returns: number,
  unmatched: number,
  error: string | null,
): Promise<boolean> {
  const { rows } =
    await sql`insert into ach_return_files (sha256, file_name, read_at, returns, unmatched, error)
    values (${sha256}, ${name}, ${now.toISOString()}::timestamptz, ${returns}, ${unmatched}, ${error})
    on conflict (sha256) do nothing returning sha256`.execute(tx);
  return rows.length === 1;
}

/**
 * Writes a file whole, readable by its owner only (0600: it holds full account numbers): to a hidden temporary
 * name, flushed to disk, then renamed into place, and the rename flushed too (the folder's entry), before the
 * caller records the file as written: after a power cut, a file the books count as sent (its credits then settle)
 * must be in the folder.
 */
async function writeWhole(dir: string, name: string, content: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const temporary = join(dir, `.${name}.partial`);
  const handle = await open(temporary, 'w', 0o600);
  try {
    // The mode given to open applies only to a new file: a temporary one left by a killed writer keeps its own.
    await handle.chmod(0o600);
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, join(dir, name)).catch(async (error: unknown) => {
    await rm(temporary, { force: true });
    throw error;
  });
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
