import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { writeNachaFile } from '../../src/rails/ach/nacha-file.ts';
import { NachaFormatError } from '../../src/rails/ach/nacha-layout.ts';
import { CHANGE_REASONS, parseReturnFile, RETURN_REASONS } from '../../src/rails/ach/nacha-returns.ts';

// Written by hand from the Nacha layout, not by our writer: four returns (R01-R04) in a PPD batch, one notification
// of change (C01) in a COR batch. Lines: 1 header; 2-11 batch 1 (3/4, 5/6, 7/8, 9/10 entry and addenda);
// 12-15 batch 2 (13 entry, 14 addenda); 16 file control; 17-20 filler.
const GOLDEN = readFileSync(new URL('../fixtures/ach/returns-golden.ach', import.meta.url), 'utf8');

function lines(): string[] {
  return GOLDEN.slice(0, -1).split('\n');
}

function join(records: string[]): string {
  return `${records.join('\n')}\n`;
}

/** `records` with `line` (1-based) replaced by `replace(old)`. */
function tampered(line: number, replace: (old: string) => string): string {
  const records = lines();
  records[line - 1] = replace(records[line - 1]!);
  return join(records);
}

function splice(text: string, from: number, replacement: string): string {
  return text.slice(0, from - 1) + replacement + text.slice(from - 1 + replacement.length);
}

function refusedAt(text: string, line: number, message?: RegExp): void {
  assert.throws(
    () => parseReturnFile(text),
    (error) => {
      assert.ok(error instanceof NachaFormatError, String(error));
      assert.equal(error.line, line, error.message);
      assert.ok(error.message.startsWith(`line ${line}: `));
      if (message) assert.match(error.message, message);
      return true;
    },
  );
}

const EXPECTED = {
  returns: [
    {
      returnCode: 'R01',
      originalTraceNumber: '091000010000001',
      amountMinor: 12_500,
      transactionCode: 21,
      individualId: 'TRF0001',
      addendaInformation: 'BALANCE BELOW ENTRY AMOUNT',
    },
    {
      returnCode: 'R02',
      originalTraceNumber: '091000010000002',
      amountMinor: 30_000,
      transactionCode: 31,
      individualId: 'TRF0002',
      addendaInformation: '',
    },
    {
      returnCode: 'R03',
      originalTraceNumber: '091000010000003',
      amountMinor: 4_999,
      transactionCode: 21,
      individualId: 'TRF0003',
      addendaInformation: '',
    },
    {
      returnCode: 'R04',
      originalTraceNumber: '091000010000004',
      amountMinor: 100,
      transactionCode: 31,
      individualId: 'TRF0004',
      addendaInformation: '',
    },
  ],
  notifications: [
    {
      changeCode: 'C01',
      originalTraceNumber: '091000010000005',
      correctedData: '987654321',
      transactionCode: 21,
      individualId: 'TRF0005',
      originalReceivingDfi: '07100001',
    },
  ],
  address: {
    immediateDestination: '1234567890',
    immediateOrigin: ' 091000019',
    batches: [
      { line: 2, companyIdentification: '1234567890' },
      { line: 12, companyIdentification: '1234567890' },
    ],
  },
};

test('golden return file: four returns and a notification of change, reported apart', () => {
  assert.equal(lines().length, 20);
  assert.deepEqual(parseReturnFile(GOLDEN), EXPECTED);
  for (const r of EXPECTED.returns) assert.ok(RETURN_REASONS[r.returnCode], r.returnCode);
  for (const n of EXPECTED.notifications) assert.ok(CHANGE_REASONS[n.changeCode], n.changeCode);
  assert.deepEqual(
    Object.keys(CHANGE_REASONS),
    Array.from({ length: 14 }, (_, i) => `C${String(i + 1).padStart(2, '0')}`),
  );
  for (const description of Object.values(CHANGE_REASONS)) assert.match(description, /^[ -~]{5,110}$/);
});

test('tolerates \\r\\n line ends, a missing final newline and missing filler records', () => {
  assert.deepEqual(parseReturnFile(GOLDEN.replaceAll('\n', '\r\n')), EXPECTED);
  assert.deepEqual(parseReturnFile(GOLDEN.slice(0, -1)), EXPECTED);
  assert.deepEqual(parseReturnFile(join(lines().slice(0, 16))), EXPECTED);
  assert.deepEqual(parseReturnFile(lines().slice(0, 16).join('\r\n')), EXPECTED);
});

test('refuses a record that is not 94 characters, with its line', () => {
  refusedAt(
    tampered(5, (line) => line.slice(0, 93)),
    5,
    /93 characters/,
  );
  refusedAt(
    tampered(8, (line) => `${line} `),
    8,
    /95 characters/,
  );
  refusedAt(join([...lines().slice(0, 16), '', ...lines().slice(16)]), 17);
  refusedAt('', 1);
});

test('refuses an unknown record type and characters outside printable ASCII', () => {
  refusedAt(
    tampered(7, (line) => `4${line.slice(1)}`),
    7,
    /unknown record type '4'/,
  );
  refusedAt(
    tampered(3, (line) => splice(line, 55, 'JOSÉ')),
    3,
    /printable ASCII/,
  );
});

test('refuses an entry without its addenda', () => {
  const records = lines();
  records.splice(5, 1); // line 6, the addenda of the entry on line 5
  refusedAt(join(records), 5, /without its addenda/);
  refusedAt(
    tampered(3, (line) => splice(line, 79, '0')),
    3,
    /without its addenda/,
  );
  const last = lines();
  last.splice(13, 1); // line 14, the addenda of the last entry of batch 2: the control record follows
  refusedAt(join(last), 13, /without its addenda/);
});

test('refuses an addenda record without its entry', () => {
  const records = lines();
  records.splice(2, 1); // line 3, the entry of the addenda on line 4
  refusedAt(join(records), 3, /addenda record without its entry/);
});

test('refuses a batch control whose count, hash or totals disagree with its entries', () => {
  refusedAt(
    tampered(11, (line) => splice(line, 5, '000007')),
    11,
    /entry\/addenda count says 7, .* 8/,
  );
  refusedAt(
    tampered(11, (line) => splice(line, 11, '0036400005')),
    11,
    /entry hash/,
  );
  refusedAt(
    tampered(11, (line) => splice(line, 33, '000000047598')),
    11,
    /total credit/,
  );
  refusedAt(
    tampered(11, (line) => splice(line, 21, '000000000001')),
    11,
    /total debit/,
  );
  // An amount changed on an entry: the batch control (line 11) no longer adds up.
  refusedAt(
    tampered(3, (line) => splice(line, 30, '0000012501')),
    11,
    /total credit/,
  );
  refusedAt(
    tampered(15, (line) => splice(line, 88, '0000003')),
    15,
    /batch control number/,
  );
});

test('refuses a file control whose counts or totals disagree with the batches', () => {
  refusedAt(
    tampered(16, (line) => splice(line, 2, '000003')),
    16,
    /batch count/,
  );
  refusedAt(
    tampered(16, (line) => splice(line, 8, '000001')),
    16,
    /block count/,
  );
  refusedAt(
    tampered(16, (line) => splice(line, 14, '00000011')),
    16,
    /entry\/addenda count/,
  );
  refusedAt(
    tampered(16, (line) => splice(line, 22, '0045500006')),
    16,
    /entry hash/,
  );
  refusedAt(
    tampered(16, (line) => splice(line, 44, '000000047600')),
    16,
    /total credit/,
  );
  refusedAt(
    tampered(16, (line) => splice(line, 44, '00000004759X')),
    16,
    /not numeric/,
  );
});

test('refuses malformed return and change codes', () => {
  refusedAt(
    tampered(4, (line) => splice(line, 4, 'X01')),
    4,
    /malformed return code 'X01'/,
  );
  refusedAt(
    tampered(4, (line) => splice(line, 4, 'R1 ')),
    4,
    /malformed return code/,
  );
  refusedAt(
    tampered(4, (line) => splice(line, 4, 'C01')),
    4,
    /malformed return code/,
  );
  refusedAt(
    tampered(14, (line) => splice(line, 4, 'R01')),
    14,
    /malformed change code 'R01'/,
  );
  refusedAt(
    tampered(14, (line) => splice(line, 2, '05')),
    14,
    /addenda type '05'/,
  );
});

test('refuses an entry that is not a return, an addenda of another entry, and anything after the filler', () => {
  refusedAt(
    tampered(3, (line) => splice(line, 2, '22')),
    3,
    /transaction code 22/,
  );
  refusedAt(
    tampered(4, (line) => splice(line, 80, '021000024410009')),
    4,
    /addenda trace number/,
  );
  refusedAt(
    tampered(19, (line) => `${line.slice(0, 93)}8`),
    19,
    /filler/,
  );
  refusedAt(join(lines().slice(1)), 1, /file header/);
  refusedAt(join(lines().slice(0, 15)), 16, /batch header or the file control/);
  refusedAt(join([...lines().slice(0, 11), ...lines().slice(15)]), 12, /batch count/); // batch 2 dropped
});

test('return reasons: the common codes, each with a short description', () => {
  const codes = [
    'R01',
    'R02',
    'R03',
    'R04',
    'R05',
    'R06',
    'R07',
    'R08',
    'R09',
    'R10',
    'R12',
    'R13',
    'R14',
  ].concat(['R15', 'R16', 'R17', 'R20', 'R23', 'R24', 'R29', 'R31']);
  assert.deepEqual(Object.keys(RETURN_REASONS), codes);
  assert.equal(RETURN_REASONS.R01, 'insufficient funds');
  assert.equal(RETURN_REASONS.R02, 'account closed');
  assert.equal(RETURN_REASONS.R03, 'no account / unable to locate account');
  assert.equal(RETURN_REASONS.R04, 'invalid account number');
  for (const description of Object.values(RETURN_REASONS)) assert.match(description, /^[ -~]{5,60}$/);
});

/**
 * The return file a bank would send back for every entry of an origination file, built from that file's records:
 * each entry gets its return transaction code (22 -> 21, 32 -> 31) and an addenda with the original trace number.
 * Amounts and bank ids are kept, so the controls keep their hash and totals; only their counts double.
 */
function returnEverything(origination: string, returnCode: string): string {
  const records = origination
    .slice(0, -1)
    .split('\n')
    .filter((line) => line !== '9'.repeat(94));
  const out: string[] = [];
  let sequence = 0;
  for (const line of records) {
    if (line[0] === '6') {
      const trace = `02100002${String(++sequence).padStart(7, '0')}`;
      out.push(`6${Number(line.slice(1, 3)) - 1}${line.slice(3, 78)}1${trace}`);
      out.push(
        `799${returnCode}${line.slice(79, 94)}${' '.repeat(6)}${line.slice(3, 11)}${' '.repeat(44)}${trace}`,
      );
    } else if (line[0] === '8') {
      const count = Number(line.slice(4, 10)) * 2;
      out.push(`${line.slice(0, 4)}${String(count).padStart(6, '0')}${line.slice(10)}`);
    } else if (line[0] === '9') {
      const count = Number(line.slice(13, 21)) * 2;
      const blocks = Math.ceil((records.length + count / 2) / 10);
      out.push(
        `9${line.slice(1, 7)}${String(blocks).padStart(6, '0')}${String(count).padStart(8, '0')}${line.slice(21)}`,
      );
    } else {
      out.push(line);
    }
  }
  return join(out);
}

test('property: a return of every entry of a written file gives back each entry, amount and trace', () => {
  const routing = fc.constantFrom('021000021', '011000015', '121000248', '026009593', '091000019');
  const entries = fc.array(
    fc.record({
      transactionCode: fc.constantFrom(22 as const, 32 as const),
      receivingRoutingNumber: routing,
      accountNumber: fc.stringMatching(/^[0-9]{4,17}$/),
      amountMinor: fc.integer({ min: 1, max: 9_999_999_999 }),
      individualId: fc.stringMatching(/^[0-9A-Z-]{0,15}$/),
    }),
    { minLength: 1, maxLength: 12 },
  );
  fc.assert(
    fc.property(
      entries,
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom('R01', 'R02', 'R03', 'R04'),
      (rows, batchCount, code) => {
        const batches = Array.from({ length: batchCount }, (_, b) => ({
          companyName: 'EWA SERVER INC',
          companyIdentification: '1234567890',
          companyEntryDescription: 'EWA ADVANC',
          effectiveEntryDate: '2026-03-11',
          originatingDfi: '09100001',
          batchNumber: b + 1,
          entries: rows
            .map((row, i) => ({
              ...row,
              individualName: 'JANE DOE',
              traceNumber: `09100001${String(i).padStart(7, '0')}`,
            }))
            .filter((_, i) => i % batchCount === b),
        })).filter((batch) => batch.entries.length > 0);
        const origination = writeNachaFile({
          immediateDestination: '091000019',
          immediateDestinationName: 'WELLS FARGO BANK',
          immediateOrigin: '1234567890',
          immediateOriginName: 'EWA SERVER INC',
          createdAt: new Date('2026-03-10T14:07:00Z'),
          fileIdModifier: 'A',
          batches: batches.map((batch, i) => ({ ...batch, batchNumber: i + 1 })),
        });
        const parsed = parseReturnFile(returnEverything(origination, code));
        const expected = batches
          .flatMap((batch) => batch.entries)
          .map((e) => ({
            returnCode: code,
            originalTraceNumber: e.traceNumber,
            amountMinor: e.amountMinor,
            transactionCode: e.transactionCode - 1,
            individualId: e.individualId,
            addendaInformation: '',
          }));
        assert.deepEqual(parsed, {
          returns: expected,
          notifications: [],
          address: {
            immediateDestination: ' 091000019',
            immediateOrigin: '1234567890',
            batches: batches.map((_, i) => ({
              line: 2 + i * 2 + batches.slice(0, i).reduce((n, b) => n + b.entries.length * 2, 0),
              companyIdentification: '1234567890',
            })),
          },
        });
      },
    ),
    { seed: 0x4ac5, numRuns: 100 },
  );
});
