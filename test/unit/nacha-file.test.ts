import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  entryHashOf,
  type NachaBatch,
  type NachaEntry,
  type NachaFileSpec,
  summarizeNachaFile,
  writeNachaFile,
} from '../../src/rails/ach/nacha-file.ts';
import { NachaFormatError } from '../../src/rails/ach/nacha-layout.ts';
import { writtenByNach2 } from '../helpers/nacha.ts';

const GOLDEN = new URL('../fixtures/ach/origination-golden.ach', import.meta.url);
const ODFI = '09100001';

/** ABA check digit computed here, apart from the module: 3, 7, 1 weights, sum a multiple of ten. */
function withCheckDigit(eightDigits: string): string {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = [...eightDigits].reduce((total, digit, i) => total + Number(digit) * weights[i]!, 0);
  return eightDigits + String((10 - (sum % 10)) % 10);
}

function entry(overrides: Partial<NachaEntry> & { traceNumber: string }): NachaEntry {
  return {
    transactionCode: 22,
    receivingRoutingNumber: '021000021',
    accountNumber: '123456789',
    amountMinor: 12_500,
    individualId: 'TRF0001',
    individualName: 'JANE DOE',
    ...overrides,
  };
}

function twoBatchSpec(): NachaFileSpec {
  return {
    immediateDestination: '091000019',
    immediateDestinationName: 'WELLS FARGO BANK',
    immediateOrigin: '1234567890',
    immediateOriginName: 'EWA SERVER INC',
    createdAt: new Date('2026-03-10T14:07:00Z'), // 10:07 in New York (EDT since 8 March)
    fileIdModifier: 'A',
    referenceCode: 'EWA00001',
    batches: [
      {
        companyName: 'EWA SERVER INC',
        companyIdentification: '1234567890',
        companyEntryDescription: 'EWA ADVANC',
        effectiveEntryDate: '2026-03-11',
        originatingDfi: ODFI,
        batchNumber: 1,
        entries: [
          entry({ traceNumber: '091000010000001' }),
          entry({
            transactionCode: 32,
            receivingRoutingNumber: '011000015',
            accountNumber: '4455667788',
            amountMinor: 30_000,
            individualId: 'TRF0002',
            individualName: 'John Q Public',
            traceNumber: '091000010000002',
          }),
          entry({
            receivingRoutingNumber: '121000248',
            accountNumber: '98-7654',
            amountMinor: 1,
            individualId: '',
            individualName: 'Maria Garcia',
            traceNumber: '091000010000003',
          }),
        ],
      },
      {
        companyName: 'EWA SERVER INC',
        companyIdentification: '1234567890',
        companyEntryDescription: 'PAYROLL',
        effectiveEntryDate: '2026-03-13',
        originatingDfi: ODFI,
        batchNumber: 2,
        entries: [
          entry({
            transactionCode: 32,
            receivingRoutingNumber: '026009593',
            accountNumber: '000111222',
            amountMinor: 9_999_999_999,
            individualId: 'PAY0001',
            individualName: 'LEE WONG',
            traceNumber: '091000010000004',
          }),
          entry({
            receivingRoutingNumber: '122000247',
            accountNumber: '55501234',
            amountMinor: 4_999,
            individualId: 'PAY0002',
            individualName: 'SAM SMITH',
            traceNumber: '091000010000005',
          }),
        ],
      },
    ],
  };
}

/** Columns as Nacha numbers them: 1-based, both ends included. */
function col(line: string, from: number, to: number): string {
  return line.slice(from - 1, to);
}

/** A reader written from the Nacha layout, apart from the module, for our files (entries without addenda). */
function readOrigination(text: string) {
  assert.ok(text.endsWith('\n'), 'the file ends with a newline');
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) assert.equal(line.length, 94, `line ${i + 1} is 94 characters`);
  assert.equal(lines.length % 10, 0, 'whole blocks of ten records');
  const header = lines[0]!;
  assert.equal(col(header, 1, 3), '101');
  let at = 1;
  const batches = [];
  while (lines[at]![0] === '5') {
    const batchHeader = lines[at++]!;
    const entries = [];
    while (lines[at]![0] === '6') {
      const line = lines[at++]!;
      assert.equal(col(line, 79, 79), '0', 'no addenda');
      entries.push({
        transactionCode: Number(col(line, 2, 3)),
        receivingRoutingNumber: col(line, 4, 12),
        accountNumber: col(line, 13, 29).trimEnd(),
        amountMinor: Number(col(line, 30, 39)),
        individualId: col(line, 40, 54),
        individualName: col(line, 55, 76),
        traceNumber: col(line, 80, 94),
      });
    }
    const control = lines[at++]!;
    assert.equal(control[0], '8');
    batches.push({
      serviceClass: col(batchHeader, 2, 4),
      companyName: col(batchHeader, 5, 20),
      companyIdentification: col(batchHeader, 41, 50),
      sec: col(batchHeader, 51, 53),
      companyEntryDescription: col(batchHeader, 54, 63),
      effectiveEntryDate: col(batchHeader, 70, 75),
      settlementDate: col(batchHeader, 76, 78),
      originatingDfi: col(batchHeader, 80, 87),
      batchNumber: col(batchHeader, 88, 94),
      entries,
      control: {
        serviceClass: col(control, 2, 4),
        entryCount: Number(col(control, 5, 10)),
        entryHash: col(control, 11, 20),
        totalDebitMinor: Number(col(control, 21, 32)),
        totalCreditMinor: Number(col(control, 33, 44)),
        companyIdentification: col(control, 45, 54),
        originatingDfi: col(control, 80, 87),
        batchNumber: col(control, 88, 94),
      },
    });
  }
  const fileControl = lines[at++]!;
  assert.equal(fileControl[0], '9');
  for (const filler of lines.slice(at)) assert.equal(filler, '9'.repeat(94));
  return {
    lineCount: lines.length,
    header: {
      immediateDestination: col(header, 4, 13),
      immediateOrigin: col(header, 14, 23),
      creationDate: col(header, 24, 29),
      creationTime: col(header, 30, 33),
      fileIdModifier: col(header, 34, 34),
      recordSizeBlockingFormat: col(header, 35, 40),
      immediateDestinationName: col(header, 41, 63),
      immediateOriginName: col(header, 64, 86),
      referenceCode: col(header, 87, 94),
    },
    batches,
    control: {
      batchCount: Number(col(fileControl, 2, 7)),
      blockCount: Number(col(fileControl, 8, 13)),
      entryCount: Number(col(fileControl, 14, 21)),
      entryHash: col(fileControl, 22, 31),
      totalDebitMinor: Number(col(fileControl, 32, 43)),
      totalCreditMinor: Number(col(fileControl, 44, 55)),
    },
  };
}

/** The entries as the module should write them: upper-cased and cut, the account number as given. */
function expectedEntries(batch: NachaBatch) {
  return batch.entries.map((e) => ({
    transactionCode: e.transactionCode,
    receivingRoutingNumber: e.receivingRoutingNumber,
    accountNumber: e.accountNumber,
    amountMinor: e.amountMinor,
    individualId: e.individualId.toUpperCase().padEnd(15),
    individualName: e.individualName.slice(0, 22).toUpperCase().padEnd(22),
    traceNumber: e.traceNumber,
  }));
}

function hashOf(entries: readonly NachaEntry[]): string {
  const sum = entries.reduce((total, e) => total + BigInt(e.receivingRoutingNumber.slice(0, 8)), 0n);
  return String(sum % 10_000_000_000n).padStart(10, '0');
}

test('two batches of checking and savings credits: 94-character records in blocks of ten that add up', () => {
  const spec = twoBatchSpec();
  const text = writeNachaFile(spec);
  const file = readOrigination(text);

  assert.equal(file.lineCount, 20); // 1 + (1 + 3 + 1) + (1 + 2 + 1) + 1 = 11 records, then 9 fillers
  assert.deepEqual(file.header, {
    immediateDestination: ' 091000019',
    immediateOrigin: '1234567890',
    creationDate: '260310',
    creationTime: '1007',
    fileIdModifier: 'A',
    recordSizeBlockingFormat: '094101',
    immediateDestinationName: 'WELLS FARGO BANK       ',
    immediateOriginName: 'EWA SERVER INC         ',
    referenceCode: 'EWA00001',
  });
  spec.batches.forEach((batch, i) => {
    const read = file.batches[i]!;
    const creditMinor = batch.entries.reduce((total, e) => total + e.amountMinor, 0);
    assert.deepEqual(read.entries, expectedEntries(batch));
    assert.equal(read.serviceClass, '220');
    assert.equal(read.sec, 'PPD');
    assert.equal(read.settlementDate, '   ');
    assert.equal(read.originatingDfi, ODFI);
    assert.equal(read.batchNumber, String(batch.batchNumber).padStart(7, '0'));
    assert.deepEqual(read.control, {
      serviceClass: '220',
      entryCount: batch.entries.length,
      entryHash: hashOf(batch.entries),
      totalDebitMinor: 0,
      totalCreditMinor: creditMinor,
      companyIdentification: '1234567890',
      originatingDfi: ODFI,
      batchNumber: read.batchNumber,
    });
  });
  assert.equal(file.batches[0]!.effectiveEntryDate, '260311');
  assert.equal(file.batches[1]!.companyEntryDescription, 'PAYROLL   ');

  const allEntries = spec.batches.flatMap((batch) => batch.entries);
  const totalCreditMinor = allEntries.reduce((total, e) => total + e.amountMinor, 0);
  assert.equal(totalCreditMinor, 10_000_047_499);
  assert.deepEqual(file.control, {
    batchCount: 2,
    blockCount: 2,
    entryCount: 5,
    entryHash: hashOf(allEntries),
    totalDebitMinor: 0,
    totalCreditMinor,
  });
  assert.equal(entryHashOf(allEntries.map((e) => e.receivingRoutingNumber)), hashOf(allEntries));
  assert.deepEqual(summarizeNachaFile(text), {
    lineCount: 20,
    batchCount: 2,
    entryCount: 5,
    entryHash: hashOf(allEntries),
    totalDebitMinor: 0,
    totalCreditMinor,
  });
});

test('nach2, an independent Nacha writer, writes the very same records for the same spec', async () => {
  const spec = twoBatchSpec();
  const ours = writeNachaFile(spec).slice(0, -1).split('\n');
  assert.deepEqual(ours, await writtenByNach2(spec));
});

test('golden file: the exact bytes of a fixed spec, so that a layout change shows in review', () => {
  assert.equal(writeNachaFile(twoBatchSpec()), readFileSync(GOLDEN, 'utf8'));
});

test('creation date and time are New York wall-clock time, in winter and in summer', () => {
  const at = (createdAt: string) =>
    readOrigination(writeNachaFile({ ...twoBatchSpec(), createdAt: new Date(createdAt) }));
  const winter = at('2026-01-16T03:30:00Z').header; // 22:30 EST the day before
  assert.deepEqual([winter.creationDate, winter.creationTime], ['260115', '2230']);
  const summer = at('2026-07-01T03:59:00Z').header; // 23:59 EDT the day before
  assert.deepEqual([summer.creationDate, summer.creationTime], ['260630', '2359']);
});

test('names are upper-cased and cut to width; the account number is written as given', () => {
  const spec = twoBatchSpec();
  const batch = spec.batches[0]!;
  const text = writeNachaFile({
    ...spec,
    batches: [
      {
        ...batch,
        companyName: 'Earned Wage Access Server Incorporated',
        entries: [
          entry({
            individualName: 'Alexandra Konstantinopoulou-Smith',
            accountNumber: 'ab12',
            individualId: 'trf-7',
            traceNumber: '091000010000001',
          }),
        ],
      },
    ],
  });
  const read = readOrigination(text).batches[0]!;
  assert.equal(read.companyName, 'EARNED WAGE ACCE');
  assert.equal(read.entries[0]!.individualName, 'ALEXANDRA KONSTANTINOP');
  assert.equal(read.entries[0]!.accountNumber, 'ab12');
  assert.equal(read.entries[0]!.individualId, 'TRF-7          ');
});

test('entryHashOf keeps the last ten digits of the sum of the 8-digit bank ids', () => {
  assert.equal(entryHashOf([]), '0000000000');
  assert.equal(entryHashOf(['021000021', '01100001']), '0003200003'); // 02100002 + 01100001
  assert.equal(entryHashOf(Array.from({ length: 200 }, () => '99999999')), '9999999800');
  assert.throws(
    () => entryHashOf(['021000021', '12ab']),
    (error) => error instanceof NachaFormatError && error.field === 'routingNumbers[1]',
  );
});

test('summarizeNachaFile refuses a record that is not 94 characters, and a file without a control record', () => {
  const records = writeNachaFile(twoBatchSpec()).split('\n');
  records[3] = records[3]!.slice(0, 93);
  assert.throws(
    () => summarizeNachaFile(records.join('\n')),
    (error) => error instanceof NachaFormatError && error.line === 4,
  );
  assert.throws(
    () => summarizeNachaFile(writeNachaFile(twoBatchSpec()).split('\n').slice(0, 10).join('\n')),
    (error) => error instanceof NachaFormatError && error.line === 10,
  );
});

function refused(spec: NachaFileSpec, field: string): void {
  assert.throws(
    () => writeNachaFile(spec),
    (error) => {
      assert.ok(error instanceof NachaFormatError, String(error));
      assert.equal(error.field, field);
      assert.ok(error.message.startsWith(`${field}: `));
      return true;
    },
  );
}

/** The two-batch spec with one entry of the first batch changed. */
function withEntry(overrides: Partial<NachaEntry>, index = 0): NachaFileSpec {
  const spec = twoBatchSpec();
  const [first, second] = spec.batches as [NachaBatch, NachaBatch];
  const entries = first.entries.map((e, i) => (i === index ? { ...e, ...overrides } : e));
  return { ...spec, batches: [{ ...first, entries }, second] };
}

function withBatch(overrides: Partial<NachaBatch>, index = 0): NachaFileSpec {
  const spec = twoBatchSpec();
  return { ...spec, batches: spec.batches.map((b, i) => (i === index ? { ...b, ...overrides } : b)) };
}

const E0 = 'batches[0].entries[0]';

test('refuses characters outside printable ASCII, naming the field', () => {
  refused(withEntry({ individualName: 'JOSÉ DOE' }), `${E0}.individualName`);
  refused(withEntry({ accountNumber: '1234\t5' }), `${E0}.accountNumber`);
  refused(withBatch({ companyName: 'EWA\nSERVER' }), 'batches[0].companyName');
  refused({ ...twoBatchSpec(), immediateOriginName: 'EWA — SERVER' }, 'immediateOriginName');
});

test('refuses an over-long field instead of cutting it', () => {
  refused(withEntry({ individualId: 'X'.repeat(16) }), `${E0}.individualId`);
  refused(withEntry({ accountNumber: '1'.repeat(18) }), `${E0}.accountNumber`);
  refused(withBatch({ companyEntryDescription: 'EWA ADVANCE' }), 'batches[0].companyEntryDescription');
  refused({ ...twoBatchSpec(), immediateDestinationName: 'D'.repeat(24) }, 'immediateDestinationName');
  refused({ ...twoBatchSpec(), immediateOriginName: 'O'.repeat(24) }, 'immediateOriginName');
  refused({ ...twoBatchSpec(), referenceCode: 'REF000001' }, 'referenceCode');
});

test('refuses a blank required field', () => {
  refused(withEntry({ individualName: '   ' }), `${E0}.individualName`);
  refused(withEntry({ accountNumber: '' }), `${E0}.accountNumber`);
  refused(withBatch({ companyEntryDescription: '' }), 'batches[0].companyEntryDescription');
  refused(withBatch({ companyName: '' }), 'batches[0].companyName');
});

test('refuses identifiers of the wrong length', () => {
  refused({ ...twoBatchSpec(), immediateOrigin: '123456789' }, 'immediateOrigin');
  refused({ ...twoBatchSpec(), immediateOrigin: '12345678901' }, 'immediateOrigin');
  refused(withBatch({ companyIdentification: '123456789' }), 'batches[0].companyIdentification');
  refused(withBatch({ originatingDfi: '091000019' }), 'batches[0].originatingDfi');
  refused(withEntry({ receivingRoutingNumber: '02100002' }), `${E0}.receivingRoutingNumber`);
  refused({ ...twoBatchSpec(), immediateDestination: '91000019' }, 'immediateDestination');
});

test('refuses a routing number whose ABA check digit is wrong', () => {
  assert.equal(withCheckDigit('02100002'), '021000021');
  refused(withEntry({ receivingRoutingNumber: '021000022' }), `${E0}.receivingRoutingNumber`);
  refused({ ...twoBatchSpec(), immediateDestination: '091000018' }, 'immediateDestination');
});

test('refuses an amount that is not a safe positive integer of at most ten digits', () => {
  for (const amountMinor of [0, -1, 1.5, Number.NaN, 10_000_000_000, Number.MAX_SAFE_INTEGER + 1]) {
    refused(withEntry({ amountMinor }), `${E0}.amountMinor`);
  }
});

test('refuses a transaction code other than a checking or savings credit', () => {
  refused(withEntry({ transactionCode: 27 as 22 }), `${E0}.transactionCode`);
});

test('refuses an empty batch, and a file without batches', () => {
  refused(withBatch({ entries: [] }, 1), 'batches[1].entries');
  refused({ ...twoBatchSpec(), batches: [] }, 'batches');
});

test('refuses a duplicate trace number in one file, even across batches', () => {
  const spec = twoBatchSpec();
  const [first, second] = spec.batches as [NachaBatch, NachaBatch];
  const duplicate = { ...second.entries[0]!, traceNumber: first.entries[0]!.traceNumber };
  refused(
    { ...spec, batches: [first, { ...second, entries: [duplicate, second.entries[1]!] }] },
    'batches[1].entries[0].traceNumber',
  );
});

test("refuses a trace number that does not start with the batch's originating DFI, or is not 15 digits", () => {
  refused(withEntry({ traceNumber: '021000020000001' }), `${E0}.traceNumber`);
  refused(withEntry({ traceNumber: '09100001000001' }), `${E0}.traceNumber`);
});

test('refuses trace numbers that do not ascend within a batch', () => {
  refused(withEntry({ traceNumber: '091000010000009' }, 1), 'batches[0].entries[2].traceNumber');
});

test('refuses batch numbers out of range or not ascending', () => {
  refused(withBatch({ batchNumber: 0 }), 'batches[0].batchNumber');
  refused(withBatch({ batchNumber: 10_000_000 }), 'batches[0].batchNumber');
  refused(withBatch({ batchNumber: 1.5 }), 'batches[0].batchNumber');
  refused(withBatch({ batchNumber: 1 }, 1), 'batches[1].batchNumber');
});

test('refuses a file id modifier other than one of A-Z, 0-9', () => {
  for (const fileIdModifier of ['a', 'AB', '', '-'])
    refused({ ...twoBatchSpec(), fileIdModifier }, 'fileIdModifier');
});

test('refuses an invalid creation instant and an effective date that is not a calendar day', () => {
  refused({ ...twoBatchSpec(), createdAt: new Date(Number.NaN) }, 'createdAt');
  refused(withBatch({ effectiveEntryDate: '2026-02-30' }), 'batches[0].effectiveEntryDate');
  refused(withBatch({ effectiveEntryDate: '03/11/2026' }), 'batches[0].effectiveEntryDate');
});

test('refuses totals that do not fit the 12-digit control fields', () => {
  const amountMinor = 9_999_999_999;
  const entries = (count: number, first: number) =>
    Array.from({ length: count }, (_, i) =>
      entry({ amountMinor, traceNumber: `${ODFI}${String(first + i).padStart(7, '0')}` }),
    );
  refused(withBatch({ entries: entries(101, 1) }), 'batches[0].totalCreditMinor');
  refused(
    {
      ...twoBatchSpec(),
      batches: [
        withBatch({ entries: entries(60, 1) }).batches[0]!,
        withBatch({ entries: entries(60, 61) }, 1).batches[1]!,
      ],
    },
    'totalCreditMinor',
  );
});

// Random valid specs: what the module writes, read back apart from it, gives the same entries and controls, and
// nach2 writes the same records.
const printable = (min: number, max: number) =>
  fc.stringMatching(new RegExp(`^[!-~][ -~]{${Math.max(0, min - 1)},${max - 1}}$`));

const entryArbitrary = fc.record({
  transactionCode: fc.constantFrom(22 as const, 32 as const),
  receivingRoutingNumber: fc.stringMatching(/^\d{8}$/).map(withCheckDigit),
  accountNumber: fc.stringMatching(/^[0-9A-Za-z][0-9A-Za-z-]{0,16}$/),
  amountMinor: fc.integer({ min: 1, max: 9_999_999_999 }),
  individualId: fc.stringMatching(/^[ -~]{0,15}$/),
  individualName: printable(1, 30),
});

const batchArbitrary = fc.record({
  companyName: printable(1, 20),
  companyIdentification: fc.stringMatching(/^\d{10}$/),
  companyEntryDescription: printable(1, 10),
  effectiveEntryDate: fc
    .integer({ min: 0, max: 36_000 })
    .map((days) => new Date(Date.UTC(2000, 0, 1) + days * 86_400_000).toISOString().slice(0, 10)),
  entries: fc.array(entryArbitrary, { minLength: 1, maxLength: 8 }),
});

const specArbitrary = fc
  .record({
    immediateDestination: fc.stringMatching(/^\d{8}$/).map(withCheckDigit),
    immediateDestinationName: printable(1, 23),
    immediateOrigin: fc.stringMatching(/^\d{10}$/),
    immediateOriginName: printable(1, 23),
    createdAt: fc.date({
      min: new Date('2000-01-02T00:00:00Z'),
      max: new Date('2099-12-30T00:00:00Z'),
      noInvalidDate: true,
    }),
    fileIdModifier: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    referenceCode: printable(1, 8),
    originatingDfi: fc.stringMatching(/^\d{8}$/),
    firstBatchNumber: fc.integer({ min: 1, max: 9_999_000 }),
    firstSequence: fc.integer({ min: 0, max: 9_999_000 }),
    batches: fc.array(batchArbitrary, { minLength: 1, maxLength: 4 }),
  })
  .map(({ originatingDfi, firstBatchNumber, firstSequence, batches, ...file }): NachaFileSpec => {
    let sequence = firstSequence;
    return {
      ...file,
      batches: batches.map((batch, i) => ({
        ...batch,
        originatingDfi,
        batchNumber: firstBatchNumber + i,
        entries: batch.entries.map((e) => ({
          ...e,
          traceNumber: `${originatingDfi}${String(sequence++).padStart(7, '0')}`,
        })),
      })),
    };
  });

test('property: a written file reads back to the same entries and controls, and nach2 agrees', async () => {
  await fc.assert(
    fc.asyncProperty(specArbitrary, async (spec) => {
      const text = writeNachaFile(spec);
      const file = readOrigination(text);
      const allEntries = spec.batches.flatMap((batch) => batch.entries);
      spec.batches.forEach((batch, i) => {
        assert.deepEqual(file.batches[i]!.entries, expectedEntries(batch));
        assert.equal(file.batches[i]!.control.entryHash, hashOf(batch.entries));
      });
      assert.equal(file.control.entryCount, allEntries.length);
      assert.equal(
        file.control.totalCreditMinor,
        allEntries.reduce((total, e) => total + e.amountMinor, 0),
      );
      assert.equal(file.control.entryHash, hashOf(allEntries));
      assert.deepEqual(text.slice(0, -1).split('\n'), await writtenByNach2(spec));
    }),
    { seed: 0x4ac4, numRuns: 150 },
  );
});
