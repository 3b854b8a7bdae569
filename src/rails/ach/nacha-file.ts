/**
 * An ACH origination file of PPD credits, in the Nacha layout: 94-character records, one per line, padded with
 * records of nines to whole blocks of ten. Pure: no clock, no database; the caller passes every value.
 *
 * A value that does not fit its field is refused with a NachaFormatError naming the field, never cut, so that a file
 * the bank would reject (or would route to the wrong account) is never written. Two exceptions are cut to width:
 * `individualName` and `companyName`. Receivers' names are often longer than 22 characters and banks do not match
 * on them, so a refusal would block a payment for a label; the company name is printed on statements, and its
 * first 16 characters are what the bank shows anyway.
 *
 * Alphanumeric fields are upper-cased, except the account number, which is written exactly as given: it is the
 * receiving bank's identifier of the account, and changing it is not ours to do.
 */
import { localDateOf, localTimeOf } from '../../domain/calendar.ts';
import { isCalendarDay } from '../../domain/date-text.ts';
import { isAbaRoutingNumber } from '../../domain/routing-number.ts';
import {
  BLOCKING_FACTOR,
  ENTRY_HASH_MODULUS,
  FILLER_RECORD,
  NachaFormatError,
  PRINTABLE_ASCII,
  RECORD_LENGTH,
  splitRecords,
} from './nacha-layout.ts';

const FILE_TIME_ZONE = 'America/New_York';
const SERVICE_CLASS_CREDITS_ONLY = '220';
const STANDARD_ENTRY_CLASS = 'PPD';

// Field widths set these limits: a number that does not fit its field cannot be written.
const AMOUNT_MINOR_MAX = 9_999_999_999; // entry amount: 10 digits
const TOTAL_MINOR_MAX = 999_999_999_999; // control totals: 12 digits
const BATCH_ENTRY_COUNT_MAX = 999_999; // batch control entry/addenda count: 6 digits
const FILE_ENTRY_COUNT_MAX = 99_999_999; // file control entry/addenda count: 8 digits
const BLOCK_COUNT_MAX = 999_999; // file control block count: 6 digits
const BATCH_NUMBER_MAX = 9_999_999; // 7 digits

export interface NachaEntry {
  transactionCode: 22 | 32; // 22 checking credit, 32 savings credit
  receivingRoutingNumber: string; // 9 digits (8-digit RDFI id + check digit)
  accountNumber: string; // 1..17 chars, left-justified
  amountMinor: number; // cents, 1 .. 99_999_999_99 (fits 10 digits), safe integer
  individualId: string; // up to 15 chars (we pass our transfer/paycheck reference shortened)
  individualName: string; // up to 22 chars
  traceNumber: string; // 15 digits: ODFI's 8 digits + 7-digit sequence
}

export interface NachaBatch {
  companyName: string; // up to 16
  companyIdentification: string; // 10 chars
  companyEntryDescription: string; // up to 10 (e.g. 'EWA ADVANC', 'PAYROLL')
  effectiveEntryDate: string; // 'YYYY-MM-DD'
  originatingDfi: string; // 8 digits
  batchNumber: number; // 1..9_999_999
  entries: readonly NachaEntry[]; // at least 1
}

export interface NachaFileSpec {
  immediateDestination: string; // 9-digit routing number of the bank that receives the file
  immediateDestinationName: string; // up to 23
  immediateOrigin: string; // 10 chars (company's id at the bank, often '1' + EIN or the routing number with a leading space)
  immediateOriginName: string; // up to 23
  createdAt: Date; // file creation date and time, written in America/New_York (YYMMDD, HHMM)
  fileIdModifier: string; // one of A-Z, 0-9
  referenceCode?: string; // up to 8
  batches: readonly NachaBatch[];
}

/** What callers record about a file: the figures of its file control record, and its length. */
export interface NachaFileSummary {
  lineCount: number;
  batchCount: number;
  entryCount: number; // entry and addenda records
  entryHash: string; // 10 digits
  totalDebitMinor: number;
  totalCreditMinor: number;
}

/**
 * The entry hash of a batch or file: the sum of the receiving banks' 8-digit ids (a 9-digit routing number counts
 * by its first 8), keeping the last 10 digits, zero-padded.
 */
export function entryHashOf(routingNumbers: readonly string[]): string {
  let hash = 0;
  routingNumbers.forEach((routingNumber, index) => {
    if (!/^\d{8,9}$/.test(routingNumber))
      throw new NachaFormatError('not an 8-digit bank id or a 9-digit routing number', {
        field: `routingNumbers[${index}]`,
      });
    hash = (hash + Number(routingNumber.slice(0, 8))) % ENTRY_HASH_MODULUS;
  });
  return String(hash).padStart(10, '0');
}

function alphanumeric(value: string, width: number, field: string, cutToWidth = false): string {
  if (typeof value !== 'string' || !PRINTABLE_ASCII.test(value))
    throw new NachaFormatError('characters outside printable ASCII', { field });
  const fitted = cutToWidth ? value.slice(0, width) : value;
  if (fitted.length > width) throw new NachaFormatError(`longer than ${width} characters`, { field });
  return fitted.toUpperCase().padEnd(width, ' ');
}

function required(value: string, width: number, field: string, cutToWidth = false): string {
  const written = alphanumeric(value, width, field, cutToWidth);
  if (written.trim() === '') throw new NachaFormatError('must not be blank', { field });
  return written;
}

function digits(value: string, width: number, field: string): string {
  if (typeof value !== 'string' || !new RegExp(`^\\d{${width}}$`).test(value))
    throw new NachaFormatError(`must be exactly ${width} digits`, { field });
  return value;
}

function numeric(value: number, width: number, field: string): string {
  const written = String(value);
  if (!Number.isSafeInteger(value) || value < 0 || written.length > width)
    throw new NachaFormatError(`must be a whole number of at most ${width} digits`, { field });
  return written.padStart(width, '0');
}

function routingNumber(value: string, field: string): string {
  digits(value, 9, field);
  if (!isAbaRoutingNumber(value)) throw new NachaFormatError('wrong ABA check digit', { field });
  return value;
}

function yymmdd(day: string, field: string): string {
  if (!isCalendarDay(day)) throw new NachaFormatError('must be a calendar day YYYY-MM-DD', { field });
  return day.slice(2, 4) + day.slice(5, 7) + day.slice(8, 10);
}

/** YYMMDD and HHMM of the instant on the wall clocks of New York, where the Federal Reserve's ACH runs. */
function creationDateAndTime(createdAt: Date): string {
  if (!(createdAt instanceof Date) || Number.isNaN(createdAt.getTime()))
    throw new NachaFormatError('must be a valid Date', { field: 'createdAt' });
  const day = localDateOf(createdAt, FILE_TIME_ZONE);
  return `${day.slice(2, 4)}${day.slice(5, 7)}${day.slice(8, 10)}${localTimeOf(createdAt, FILE_TIME_ZONE).replace(':', '')}`;
}

function record(text: string): string {
  if (text.length !== RECORD_LENGTH) throw new Error(`bug: a ${text.length}-character Nacha record`);
  return text;
}

function fileHeader(spec: NachaFileSpec): string {
  const modifier = spec.fileIdModifier;
  if (typeof modifier !== 'string' || !/^[A-Z0-9]$/.test(modifier))
    throw new NachaFormatError('must be one of A-Z, 0-9', { field: 'fileIdModifier' });
  const origin = alphanumeric(spec.immediateOrigin, 10, 'immediateOrigin');
  if (spec.immediateOrigin.length !== 10)
    throw new NachaFormatError('must be exactly 10 characters', { field: 'immediateOrigin' });
  return record(
    `101 ${routingNumber(spec.immediateDestination, 'immediateDestination')}${origin}` +
      `${creationDateAndTime(spec.createdAt)}${modifier}094${BLOCKING_FACTOR}1` +
      required(spec.immediateDestinationName, 23, 'immediateDestinationName') +
      required(spec.immediateOriginName, 23, 'immediateOriginName') +
      alphanumeric(spec.referenceCode ?? '', 8, 'referenceCode'),
  );
}

function companyIdentification(batch: NachaBatch, field: string): string {
  const written = required(batch.companyIdentification, 10, field);
  if (batch.companyIdentification.length !== 10)
    throw new NachaFormatError('must be exactly 10 characters', { field });
  return written;
}

function batchNumber(batch: NachaBatch, field: string): string {
  if (
    !Number.isSafeInteger(batch.batchNumber) ||
    batch.batchNumber < 1 ||
    batch.batchNumber > BATCH_NUMBER_MAX
  )
    throw new NachaFormatError(`must be a whole number from 1 to ${BATCH_NUMBER_MAX}`, { field });
  return numeric(batch.batchNumber, 7, field);
}

function entryDetail(entry: NachaEntry, odfi: string, field: string): string {
  if (entry.transactionCode !== 22 && entry.transactionCode !== 32)
    throw new NachaFormatError('must be 22 (checking credit) or 32 (savings credit)', {
      field: `${field}.transactionCode`,
    });
  const amount = entry.amountMinor;
  if (!Number.isSafeInteger(amount) || amount < 1 || amount > AMOUNT_MINOR_MAX)
    throw new NachaFormatError(`must be a whole number of cents from 1 to ${AMOUNT_MINOR_MAX}`, {
      field: `${field}.amountMinor`,
    });
  const trace = digits(entry.traceNumber, 15, `${field}.traceNumber`);
  if (!trace.startsWith(odfi))
    throw new NachaFormatError(`must start with the batch's originating DFI ${odfi}`, {
      field: `${field}.traceNumber`,
    });
  required(entry.accountNumber, 17, `${field}.accountNumber`);
  return record(
    `6${entry.transactionCode}${routingNumber(entry.receivingRoutingNumber, `${field}.receivingRoutingNumber`)}` +
      entry.accountNumber.padEnd(17, ' ') +
      numeric(amount, 10, `${field}.amountMinor`) +
      alphanumeric(entry.individualId, 15, `${field}.individualId`) +
      required(entry.individualName, 22, `${field}.individualName`, true) +
      '  0' +
      trace,
  );
}

interface Totals {
  entryCount: number;
  entryHash: number;
  totalCreditMinor: number;
}

function batchRecords(
  batch: NachaBatch,
  field: string,
  traceNumbers: Set<string>,
): { records: string[]; totals: Totals } {
  const odfi = digits(batch.originatingDfi, 8, `${field}.originatingDfi`);
  const company = companyIdentification(batch, `${field}.companyIdentification`);
  const number = batchNumber(batch, `${field}.batchNumber`);
  if (!Array.isArray(batch.entries) || batch.entries.length === 0)
    throw new NachaFormatError('a batch needs at least one entry', { field: `${field}.entries` });
  if (batch.entries.length > BATCH_ENTRY_COUNT_MAX)
    throw new NachaFormatError(`at most ${BATCH_ENTRY_COUNT_MAX} entries in a batch`, {
      field: `${field}.entries`,
    });
  const records = [
    record(
      `5${SERVICE_CLASS_CREDITS_ONLY}${required(batch.companyName, 16, `${field}.companyName`, true)}` +
        `${' '.repeat(20)}${company}${STANDARD_ENTRY_CLASS}` +
        required(batch.companyEntryDescription, 10, `${field}.companyEntryDescription`) +
        ' '.repeat(6) +
        yymmdd(batch.effectiveEntryDate, `${field}.effectiveEntryDate`) +
        // Settlement date: the Federal Reserve fills it in, the originator leaves it blank.
        `   1${odfi}${number}`,
    ),
  ];
  const totals: Totals = { entryCount: 0, entryHash: 0, totalCreditMinor: 0 };
  let previousTrace = '';
  batch.entries.forEach((entry, index) => {
    const entryField = `${field}.entries[${index}]`;
    records.push(entryDetail(entry, odfi, entryField));
    if (traceNumbers.has(entry.traceNumber))
      throw new NachaFormatError('duplicate trace number in the file', {
        field: `${entryField}.traceNumber`,
      });
    // Nacha wants trace numbers ascending within a batch; banks' edit checks reject a file otherwise.
    if (entry.traceNumber <= previousTrace)
      throw new NachaFormatError('trace numbers must ascend within a batch', {
        field: `${entryField}.traceNumber`,
      });
    traceNumbers.add(entry.traceNumber);
    previousTrace = entry.traceNumber;
    totals.entryCount += 1;
    totals.totalCreditMinor += entry.amountMinor;
  });
  totals.entryHash = Number(entryHashOf(batch.entries.map((entry) => entry.receivingRoutingNumber)));
  const credit = numeric(totals.totalCreditMinor, 12, `${field}.totalCreditMinor`);
  records.push(
    record(
      `8${SERVICE_CLASS_CREDITS_ONLY}${numeric(totals.entryCount, 6, `${field}.entries`)}` +
        `${numeric(totals.entryHash, 10, `${field}.entries`)}${'0'.repeat(12)}${credit}${company}` +
        `${' '.repeat(19 + 6)}${odfi}${number}`,
    ),
  );
  return { records, totals };
}

function plannedLineCount(spec: NachaFileSpec): number {
  if (!Array.isArray(spec.batches) || spec.batches.length === 0)
    throw new NachaFormatError('a file needs at least one batch', { field: 'batches' });
  let entryCount = 0;
  for (const batch of spec.batches) entryCount += Array.isArray(batch.entries) ? batch.entries.length : 0;
  if (entryCount > FILE_ENTRY_COUNT_MAX)
    throw new NachaFormatError(`at most ${FILE_ENTRY_COUNT_MAX} entries in a file`, { field: 'batches' });
  const lineCount = 2 + 2 * spec.batches.length + entryCount;
  if (Math.ceil(lineCount / BLOCKING_FACTOR) > BLOCK_COUNT_MAX)
    throw new NachaFormatError(`at most ${BLOCK_COUNT_MAX} blocks of ${BLOCKING_FACTOR} records`, {
      field: 'batches',
    });
  return lineCount;
}

/** The file's text: records joined by '\n', with a final '\n'. Throws NachaFormatError on a value that does not fit. */
export function writeNachaFile(spec: NachaFileSpec): string {
  const lineCount = plannedLineCount(spec);
  const records = [fileHeader(spec)];
  const traceNumbers = new Set<string>();
  const file: Totals = { entryCount: 0, entryHash: 0, totalCreditMinor: 0 };
  let previousBatchNumber = 0;
  spec.batches.forEach((batch, index) => {
    const written = batchRecords(batch, `batches[${index}]`, traceNumbers);
    if (batch.batchNumber <= previousBatchNumber)
      throw new NachaFormatError('batch numbers must ascend within a file', {
        field: `batches[${index}].batchNumber`,
      });
    previousBatchNumber = batch.batchNumber;
    records.push(...written.records);
    file.entryCount += written.totals.entryCount;
    file.entryHash = (file.entryHash + written.totals.entryHash) % ENTRY_HASH_MODULUS;
    file.totalCreditMinor += written.totals.totalCreditMinor;
  });
  if (file.totalCreditMinor > TOTAL_MINOR_MAX)
    throw new NachaFormatError(`the file's credits exceed ${TOTAL_MINOR_MAX} cents`, {
      field: 'totalCreditMinor',
    });
  const blockCount = Math.ceil(lineCount / BLOCKING_FACTOR);
  records.push(
    record(
      `9${numeric(spec.batches.length, 6, 'batches')}${numeric(blockCount, 6, 'batches')}` +
        `${numeric(file.entryCount, 8, 'batches')}${numeric(file.entryHash, 10, 'batches')}` +
        `${'0'.repeat(12)}${numeric(file.totalCreditMinor, 12, 'totalCreditMinor')}${' '.repeat(39)}`,
    ),
  );
  if (records.length !== lineCount)
    throw new Error(`bug: planned ${lineCount} records, wrote ${records.length}`);
  while (records.length % BLOCKING_FACTOR !== 0) records.push(FILLER_RECORD);
  return `${records.join('\n')}\n`;
}

/**
 * The figures of a file's control record and its line count, to be recorded next to the file. It reads the control
 * record as written and does not re-add the entries: it is meant for files this module wrote.
 */
export function summarizeNachaFile(text: string): NachaFileSummary {
  const lines = splitRecords(text);
  const control = lines.find((line) => line.startsWith('9'));
  if (control === undefined || !/^9\d{6}\d{6}\d{8}\d{10}\d{12}\d{12}/.test(control))
    throw new NachaFormatError('no file control record', { line: Math.max(1, lines.length) });
  return {
    lineCount: lines.length,
    batchCount: Number(control.slice(1, 7)),
    entryCount: Number(control.slice(13, 21)),
    entryHash: control.slice(21, 31),
    totalDebitMinor: Number(control.slice(31, 43)),
    totalCreditMinor: Number(control.slice(43, 55)),
  };
}
