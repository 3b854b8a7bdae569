/**
 * A return file, as a bank drops it in our inbound folder: the Nacha record layout, in which each entry detail record
 * (6) is a returned entry or a notification of change, followed by exactly one addenda record (7) that says why:
 * addenda type 99 carries a return reason code (R01…), type 98 a change code (C01…) and the corrected data.
 *
 * Strict: the file is money coming back, so a record that does not read, or controls that do not add up, refuse the
 * whole file with the 1-based line number rather than lose or invent a return. Tolerated: '\r\n' line ends, a
 * missing final newline, trailing filler records of nines.
 */
import {
  BLOCKING_FACTOR,
  ENTRY_HASH_MODULUS,
  FILLER_RECORD,
  NachaFormatError,
  PRINTABLE_ASCII,
  splitRecords,
} from './nacha-layout.ts';

const LINE_COUNT_MAX = 999_999 * BLOCKING_FACTOR; // the file control's block count has 6 digits
const KNOWN_RECORD_TYPES = new Set(['1', '5', '6', '7', '8', '9']);
const RETURN_ADDENDA = '99';
const CHANGE_ADDENDA = '98';
// "Automated return or notification of change" codes: demand credit/debit (21/26), savings (31/36),
// general ledger (41/46), loan (51/56). Any other code is not a return.
const RETURN_TRANSACTION_CODES = new Set([21, 26, 31, 36, 41, 46, 51, 56]);

export interface AchReturn {
  returnCode: string;
  originalTraceNumber: string;
  amountMinor: number;
  transactionCode: number;
  individualId: string;
  addendaInformation: string;
}

export interface AchNotificationOfChange {
  changeCode: string;
  originalTraceNumber: string;
  /** As the change code says (CHANGE_REASONS): e.g. C01 the account number, C02 the routing number, C03 both. */
  correctedData: string;
  transactionCode: number;
  individualId: string;
  /** The receiving bank of the original entry (addenda 28-35): the bank whose details changed. */
  originalReceivingDfi: string;
}

/**
 * Whom a return file is for, as its headers say: the file header's immediate destination (4-13: the originator,
 * our immediate origin as our files give it) and immediate origin (14-23: the bank that sent it), and each batch
 * header's company identification (41-50: the originator's, as in the entries returned), with its line.
 */
export interface ReturnFileAddress {
  immediateDestination: string;
  immediateOrigin: string;
  batches: { line: number; companyIdentification: string }[];
}

/** The common return reason codes, in our words; the Nacha Operating Rules hold the authoritative text. */
export const RETURN_REASONS: Readonly<Record<string, string>> = Object.freeze({
  R01: 'insufficient funds',
  R02: 'account closed',
  R03: 'no account / unable to locate account',
  R04: 'invalid account number',
  R05: 'consumer account debited under a business entry class',
  R06: 'returned at the request of the originating bank',
  R07: 'authorization revoked by the customer',
  R08: 'payment stopped by the customer',
  R09: 'uncollected funds',
  R10: 'customer says the entry was not authorized',
  R12: 'account sold to another bank',
  R13: 'invalid routing number',
  R14: 'representative payee deceased or unable to act',
  R15: 'account holder or beneficiary deceased',
  R16: 'account frozen',
  R17: 'entry failed the receiving bank edit checks',
  R20: 'account does not allow this transaction',
  R23: 'credit refused by the receiver',
  R24: 'duplicate entry',
  R29: 'business customer says the entry was not authorized',
  R31: 'late return the originating bank agreed to',
});

/**
 * The change codes of notifications of change, in our words, with where the corrected data (addenda 36-64) puts
 * each field (1-based within it); the Nacha Operating Rules hold the authoritative text.
 */
export const CHANGE_REASONS: Readonly<Record<string, string>> = Object.freeze({
  C01: 'incorrect account number: the correct one in 1-17',
  C02: 'incorrect routing number: the correct one in 1-9',
  C03: 'incorrect routing and account numbers: routing number in 1-9, account number in 13-29',
  C04: 'incorrect individual name: the correct one in 1-22',
  C05: 'incorrect transaction code (checking or savings): the correct one in 1-2',
  C06: 'incorrect account number and transaction code: account number in 1-17, transaction code in 21-22',
  C07: 'incorrect routing number, account number and transaction code: routing 1-9, account 10-26, code 27-28',
  C08: 'incorrect receiving bank identification (IAT): the correct one in 1-11',
  C09: 'incorrect individual identification number: the correct one in 1-22',
  C10: 'incorrect company name',
  C11: 'incorrect company identification',
  C12: 'incorrect company name and company identification',
  C13: 'addenda format error',
  C14: 'incorrect standard entry class code for an outbound IAT entry',
});

/** Columns as the Nacha layout numbers them: 1-based, both ends included. */
function columns(line: string, from: number, to: number): string {
  return line.slice(from - 1, to);
}

function numberAt(line: string, from: number, to: number, lineNumber: number, name: string): number {
  const text = columns(line, from, to);
  if (!/^\d+$/.test(text))
    throw new NachaFormatError(`${name} is not numeric: '${text}'`, { line: lineNumber });
  return Number(text);
}

function recordsOf(text: string): string[] {
  const lines = splitRecords(text);
  if (lines.length > LINE_COUNT_MAX)
    throw new NachaFormatError(`more than ${LINE_COUNT_MAX} records`, { line: LINE_COUNT_MAX + 1 });
  lines.forEach((line, index) => {
    if (!PRINTABLE_ASCII.test(line))
      throw new NachaFormatError('characters outside printable ASCII', { line: index + 1 });
    if (!KNOWN_RECORD_TYPES.has(line[0]!))
      throw new NachaFormatError(`unknown record type '${line[0]}'`, { line: index + 1 });
  });
  return lines;
}

interface Totals {
  entryAndAddendaCount: number;
  entryHash: number;
  totalDebitMinor: number;
  totalCreditMinor: number;
}

function emptyTotals(): Totals {
  return { entryAndAddendaCount: 0, entryHash: 0, totalDebitMinor: 0, totalCreditMinor: 0 };
}

/** Compares a control record's figures with the tally of what came before it. */
function checkControl(
  line: string,
  lineNumber: number,
  tally: Totals,
  countFrom: number,
  countTo: number,
): void {
  const hashFrom = countTo + 1;
  const checks: [string, number, number][] = [
    [
      'entry/addenda count',
      numberAt(line, countFrom, countTo, lineNumber, 'count'),
      tally.entryAndAddendaCount,
    ],
    ['entry hash', numberAt(line, hashFrom, hashFrom + 9, lineNumber, 'entry hash'), tally.entryHash],
    [
      'total debit',
      numberAt(line, hashFrom + 10, hashFrom + 21, lineNumber, 'total debit'),
      tally.totalDebitMinor,
    ],
    [
      'total credit',
      numberAt(line, hashFrom + 22, hashFrom + 33, lineNumber, 'total credit'),
      tally.totalCreditMinor,
    ],
  ];
  for (const [name, written, counted] of checks) {
    if (written !== counted)
      throw new NachaFormatError(`${name} says ${written}, the entries add up to ${counted}`, {
        line: lineNumber,
      });
  }
}

type Parsed = { returns: AchReturn[]; notifications: AchNotificationOfChange[]; address: ReturnFileAddress };

/** Reads one entry (line `index`) and its addenda (the next line) into `parsed`, and adds it to `tally`. */
function readEntry(lines: string[], index: number, tally: Totals, parsed: Parsed): void {
  const entry = lines[index]!;
  const lineNumber = index + 1;
  const transactionCode = numberAt(entry, 2, 3, lineNumber, 'transaction code');
  if (!RETURN_TRANSACTION_CODES.has(transactionCode))
    throw new NachaFormatError(`transaction code ${transactionCode} is not a return or change code`, {
      line: lineNumber,
    });
  const receivingDfi = numberAt(entry, 4, 11, lineNumber, 'receiving DFI');
  const amountMinor = numberAt(entry, 30, 39, lineNumber, 'amount');
  const traceNumber = columns(entry, 80, 94);
  const addenda = lines[index + 1];
  if (columns(entry, 79, 79) !== '1' || addenda === undefined || addenda[0] !== '7')
    throw new NachaFormatError('entry without its addenda record', { line: lineNumber });

  const addendaLine = lineNumber + 1;
  const addendaType = columns(addenda, 2, 3);
  const reasonCode = columns(addenda, 4, 6);
  const originalTraceNumber = columns(addenda, 7, 21);
  numberAt(addenda, 7, 21, addendaLine, 'original trace number');
  if (columns(addenda, 80, 94) !== traceNumber)
    throw new NachaFormatError("addenda trace number differs from its entry's", { line: addendaLine });
  if (addendaType === RETURN_ADDENDA) {
    if (!/^R\d\d$/.test(reasonCode))
      throw new NachaFormatError(`malformed return code '${reasonCode}'`, { line: addendaLine });
    parsed.returns.push({
      returnCode: reasonCode,
      originalTraceNumber,
      amountMinor,
      transactionCode,
      individualId: columns(entry, 40, 54).trimEnd(),
      addendaInformation: columns(addenda, 36, 79).trimEnd(),
    });
  } else if (addendaType === CHANGE_ADDENDA) {
    if (!/^C\d\d$/.test(reasonCode))
      throw new NachaFormatError(`malformed change code '${reasonCode}'`, { line: addendaLine });
    parsed.notifications.push({
      changeCode: reasonCode,
      originalTraceNumber,
      correctedData: columns(addenda, 36, 64).trimEnd(),
      transactionCode,
      individualId: columns(entry, 40, 54).trimEnd(),
      originalReceivingDfi: columns(addenda, 28, 35),
    });
  } else {
    throw new NachaFormatError(`addenda type '${addendaType}' is neither 99 (return) nor 98 (change)`, {
      line: addendaLine,
    });
  }

  tally.entryAndAddendaCount += 2;
  tally.entryHash = (tally.entryHash + receivingDfi) % ENTRY_HASH_MODULUS;
  // The second digit of a transaction code says the direction: 0-4 credits, 5-9 debits.
  if (transactionCode % 10 <= 4) tally.totalCreditMinor += amountMinor;
  else tally.totalDebitMinor += amountMinor;
}

/** Reads the batch whose header is line `index`; returns the index of the line after its control record. */
function readBatch(lines: string[], index: number, file: Totals, parsed: Parsed): number {
  const header = lines[index]!;
  parsed.address.batches.push({ line: index + 1, companyIdentification: columns(header, 41, 50) });
  const batch = emptyTotals();
  let at = index + 1;
  while (lines[at]?.[0] === '6') {
    readEntry(lines, at, batch, parsed);
    at += 2;
  }
  const control = lines[at];
  if (control === undefined || control[0] !== '8') {
    const what =
      control?.[0] === '7' ? 'an addenda record without its entry' : 'a batch without its control record';
    throw new NachaFormatError(what, { line: at + 1 });
  }
  checkControl(control, at + 1, batch, 5, 10);
  if (columns(control, 88, 94) !== columns(header, 88, 94))
    throw new NachaFormatError('batch control number differs from its header', { line: at + 1 });
  file.entryAndAddendaCount += batch.entryAndAddendaCount;
  file.entryHash = (file.entryHash + batch.entryHash) % ENTRY_HASH_MODULUS;
  file.totalDebitMinor += batch.totalDebitMinor;
  file.totalCreditMinor += batch.totalCreditMinor;
  return at + 1;
}

/** The returns and notifications of change in a return file; throws NachaFormatError with the line otherwise. */
export function parseReturnFile(text: string): {
  returns: AchReturn[];
  notifications: AchNotificationOfChange[];
  address: ReturnFileAddress;
} {
  const lines = recordsOf(text);
  const header = lines[0];
  if (header?.[0] !== '1')
    throw new NachaFormatError('a file starts with its file header record', { line: 1 });
  const address = {
    immediateDestination: columns(header, 4, 13),
    immediateOrigin: columns(header, 14, 23),
    batches: [],
  };
  const parsed: Parsed = { returns: [], notifications: [], address };
  const file = emptyTotals();
  let batchCount = 0;
  let at = 1;
  while (lines[at]?.[0] === '5') {
    at = readBatch(lines, at, file, parsed);
    batchCount += 1;
  }
  const control = lines[at];
  if (control === undefined || control[0] !== '9')
    throw new NachaFormatError('expected a batch header or the file control record', { line: at + 1 });
  const controlLine = at + 1;
  if (numberAt(control, 2, 7, controlLine, 'batch count') !== batchCount)
    throw new NachaFormatError(`batch count differs from the ${batchCount} batches`, { line: controlLine });
  const blockCount = Math.ceil(controlLine / BLOCKING_FACTOR);
  if (numberAt(control, 8, 13, controlLine, 'block count') !== blockCount)
    throw new NachaFormatError(`block count differs from the ${blockCount} blocks`, { line: controlLine });
  checkControl(control, controlLine, file, 14, 21);
  for (let filler = at + 1; filler < lines.length; filler++) {
    if (lines[filler] !== FILLER_RECORD)
      throw new NachaFormatError('only filler records of nines may follow the file control', {
        line: filler + 1,
      });
  }
  return parsed;
}
