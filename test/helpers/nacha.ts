/**
 * Nacha files for tests, made apart from src/rails/ach: nach2 (an independent writer) writes the origination file we
 * should have written, and `returnFile` composes the return file a receiving bank would send back, record by
 * record from the Nacha layout.
 */
import { createRequire } from 'node:module';
import type { NachaFileSpec } from '../../src/rails/ach/nacha-file.ts';

// nach2 is a Nacha *writer* (0.5.1 has no parser): the same spec written by it must give the same records.
interface Nach2Field {
  value: unknown;
}
interface Nach2File {
  addBatch(batch: Nach2Batch): void;
  generateFile(done: (text: string) => void): void;
  control: Record<'batchCount' | 'blockCount' | 'addendaCount' | 'entryHash' | 'totalCredit', Nach2Field>;
}
interface Nach2Batch {
  addEntry(entry: object): void;
}
interface Nach2Entry {
  set(field: string, value: unknown): void;
}
interface Nach2 {
  File: new (options: Record<string, unknown>) => Nach2File;
  Batch: new (options: Record<string, unknown>) => Nach2Batch;
  Entry: new (options: Record<string, unknown>) => Nach2Entry;
}
const nach = createRequire(import.meta.url)('nach2') as Nach2;

const RECORD_LENGTH = 94;
const FILLER = '9'.repeat(RECORD_LENGTH);

function newYorkDateAndTime(instant: Date): [string, string] {
  // 'sv-SE' writes 'YYYY-MM-DD HH:MM:SS'.
  const text = instant.toLocaleString('sv-SE', { timeZone: 'America/New_York', hourCycle: 'h23' });
  return [text.slice(2, 4) + text.slice(5, 7) + text.slice(8, 10), text.slice(11, 13) + text.slice(14, 16)];
}

/** What nach2 counted for its file control record. */
export interface Nach2Control {
  batchCount: number;
  blockCount: number;
  entryCount: number;
  entryHash: string;
  totalCreditMinor: number;
}

/** The file nach2 writes for the spec: its records, and the figures it counted for the file control. */
export async function nach2File(spec: NachaFileSpec): Promise<{ records: string[]; control: Nach2Control }> {
  const [creationDate, creationTime] = newYorkDateAndTime(spec.createdAt);
  const file = new nach.File({
    immediateDestination: spec.immediateDestination,
    immediateOrigin: spec.immediateOrigin,
    immediateDestinationName: spec.immediateDestinationName.toUpperCase(),
    immediateOriginName: spec.immediateOriginName.toUpperCase(),
    referenceCode: spec.referenceCode?.toUpperCase() ?? ' ', // a space pads to the same blank field
    fileCreationDate: creationDate,
    fileCreationTime: creationTime,
    fileIdModifier: spec.fileIdModifier,
    batchSequenceNumber: spec.batches[0]!.batchNumber, // nach2 numbers batches itself, one up from here
  });
  for (const b of spec.batches) {
    const [year, month, day] = b.effectiveEntryDate.split('-').map(Number) as [number, number, number];
    const batch = new nach.Batch({
      serviceClassCode: '220',
      companyName: b.companyName.toUpperCase(),
      standardEntryClassCode: 'PPD',
      companyIdentification: b.companyIdentification,
      companyEntryDescription: b.companyEntryDescription.toUpperCase(),
      companyDescriptiveDate: ' ', // nach2 refuses an empty value; a space pads to the same blank field
      effectiveEntryDate: new Date(year, month - 1, day), // nach2 formats local-time dates
      originatingDFI: b.originatingDfi,
    });
    for (const e of b.entries) {
      const nachEntry = new nach.Entry({
        receivingDFI: e.receivingRoutingNumber,
        DFIAccount: e.accountNumber,
        amount: '0.01',
        idNumber: e.individualId.toUpperCase() || ' ',
        individualName: e.individualName.toUpperCase(),
        discretionaryData: '  ',
        transactionCode: String(e.transactionCode),
        traceNumber: e.traceNumber,
      });
      // nach2 takes dollars, and its length check counts the characters of the JavaScript number, decimal point
      // included, so it refuses any amount of 11 such characters ($10,000,000.00 and up, and e.g. 12304689.11)
      // that its 10-digit field holds. Setting the amount after the check writes it all the same.
      nachEntry.set('amount', Number((e.amountMinor / 100).toFixed(2)));
      batch.addEntry(nachEntry);
    }
    file.addBatch(batch);
  }
  const text = await new Promise<string>((resolve) => file.generateFile(resolve));
  const { control } = file;
  return {
    records: text.split(/\r?\n/),
    control: {
      batchCount: Number(control.batchCount.value),
      blockCount: Number(control.blockCount.value),
      entryCount: Number(control.addendaCount.value),
      entryHash: String(control.entryHash.value).padStart(10, '0'),
      totalCreditMinor: Math.round(Number(control.totalCredit.value) * 100),
    },
  };
}

export async function writtenByNach2(spec: NachaFileSpec): Promise<string[]> {
  return (await nach2File(spec)).records;
}

/** Columns as Nacha numbers them: 1-based, both ends included. */
export function columns(record: string, from: number, to: number): string {
  return record.slice(from - 1, to);
}

/** The entry detail records (type 6) of a file, by their trace number (columns 80-94). */
export function entryRecordsOf(text: string): Map<string, string> {
  const records = text.split(/\r?\n/).filter((record) => record.startsWith('6'));
  return new Map(records.map((record) => [columns(record, 80, 94), record]));
}

/** An entry record of a credit we never sent (to name an unknown trace number with). */
export function strangerEntryRecord(traceNumber: string): string {
  return `622110000000${'000123456'.padEnd(17)}0000001000${'UNKNOWN'.padEnd(15)}${'NOBODY'.padEnd(22)}  0${traceNumber}`;
}

/**
 * A returned entry: the entry record of the origination file, and why it came back. A change code (`Cnn`) makes it
 * a notification of change instead: amount zero, addenda type 98 with `correctedData` (columns 36-64).
 */
export interface ReturnedEntry {
  entryRecord: string;
  returnCode: string;
  correctedData?: string;
  /** Another original trace number than the entry's (a return of an entry we never sent). */
  originalTraceNumber?: string;
}

const RECEIVING_BANK_TRACE_PREFIX = '02100002';

/**
 * The return file a receiving bank sends back for these entries of our files, one PPD batch: each entry with its
 * return transaction code (22 → 21, 32 → 31) and the bank's own trace number, followed by its return addenda (type
 * 99: the return code, the original trace number, the original receiving bank). Controls are counted here.
 * Addressed to the originator: the file header's immediate destination is the originator's immediate origin
 * (`immediateDestination`, the configuration's default '1000000000' unless given), its immediate origin the bank
 * (' 110000000'); the batch header carries the originator's company identification (default '1000000000').
 */
export function returnFile(
  returned: readonly ReturnedEntry[],
  options: {
    createdAt: string;
    referenceCode?: string;
    immediateDestination?: string;
    companyIdentification?: string;
    originatingDfi?: string;
  },
): string {
  const pad = (value: string | number, width: number, fill = ' ', left = false) =>
    left ? String(value).padStart(width, fill) : String(value).padEnd(width, fill);
  const digits = (value: number, width: number) => pad(value, width, '0', true);
  const company = options.companyIdentification ?? '1000000000';
  const odfi = options.originatingDfi ?? '11000000';
  const destination = pad(options.immediateDestination ?? '1000000000', 10, ' ', true);
  const records = [
    `101${destination} ${'110000000'}${options.createdAt}A094101${pad('EWA SERVER', 23)}${pad('SANDBOX BANK', 23)}${pad(options.referenceCode ?? 'RETURNS', 8)}`,
    `5220${pad('EWA SERVER', 16)}${' '.repeat(20)}${company}PPD${pad('EWA ADVANC', 10)}${' '.repeat(6)}${options.createdAt.slice(0, 6)}   1${odfi}${digits(1, 7)}`,
  ];
  let hash = 0;
  let creditMinor = 0;
  returned.forEach((r, index) => {
    const entry = r.entryRecord;
    const trace = `${RECEIVING_BANK_TRACE_PREFIX}${digits(index + 1, 7)}`;
    const returnCode = Number(columns(entry, 2, 3)) - 1;
    const change = r.returnCode.startsWith('C');
    const amount = change ? '0'.repeat(10) : columns(entry, 30, 39);
    records.push(`6${returnCode}${columns(entry, 4, 29)}${amount}${columns(entry, 40, 78)}1${trace}`);
    const original = r.originalTraceNumber ?? columns(entry, 80, 94);
    const rdfi = columns(entry, 4, 11);
    records.push(
      change
        ? `798${r.returnCode}${original}${' '.repeat(6)}${rdfi}${pad(r.correctedData ?? '', 29)}${' '.repeat(15)}${trace}`
        : `799${r.returnCode}${original}${' '.repeat(6)}${rdfi}${' '.repeat(44)}${trace}`,
    );
    hash += Number(rdfi);
    creditMinor += Number(amount);
  });
  const count = digits(returned.length * 2, 6);
  const hashText = digits(hash % 10_000_000_000, 10);
  records.push(
    `8220${count}${hashText}${digits(0, 12)}${digits(creditMinor, 12)}${company}${' '.repeat(25)}${odfi}${digits(1, 7)}`,
  );
  const lineCount = records.length + 1;
  const blocks = Math.ceil(lineCount / 10);
  records.push(
    `9${digits(1, 6)}${digits(blocks, 6)}${digits(returned.length * 2, 8)}${hashText}${digits(0, 12)}${digits(creditMinor, 12)}${' '.repeat(39)}`,
  );
  while (records.length % 10 !== 0) records.push(FILLER);
  for (const [i, record] of records.entries())
    if (record.length !== RECORD_LENGTH)
      throw new Error(`return file record ${i + 1} is ${record.length} long`);
  return `${records.join('\n')}\n`;
}
