import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InputError } from '../../src/errors/input-error.ts';
import { currencyFractionDigits, parseDecimalAmount } from '../../src/operator/decimal-amount.ts';
import { applyPolicyChange, type OrganizationPolicy } from '../../src/operator/organization-policy.ts';
import { type CsvRecord, readCsvRecords } from '../../src/operator/roster-reader.ts';
import { parseRosterHeader, parseRosterRow } from '../../src/operator/roster-row.ts';

async function read(text: string | (string | Buffer)[], recordCharsMax = 1_000) {
  const records: CsvRecord[] = [];
  let problem: unknown;
  for await (const chunk of readCsvRecords(Array.isArray(text) ? text : [text], { recordCharsMax })) {
    records.push(...chunk.records);
    problem ??= chunk.problem;
  }
  return { lines: records.map((record) => [record.line, record.fields.join('|')]), problem };
}

test('records carry the line they start on, whatever the line endings and quoted line breaks', async () => {
  const expected = [
    [1, 'a|b'],
    [2, '1|2'],
    [4, 'x\ny|3'],
    [6, '4|5'],
  ];
  const lf = await read('a,b\n1,2\n\n"x\ny",3\n4,5\n');
  assert.deepEqual(lf.lines, expected);
  const crlf = await read('\uFEFFa,b\r\n1,2\r\n\r\n"x\r\ny",3\r\n4,5');
  assert.deepEqual(
    crlf.lines.map(([line]) => line),
    [1, 2, 4, 6],
    'CRLF counts once, a BOM is dropped',
  );
  assert.equal(crlf.lines[0]![1], 'a|b');
  const cr = await read('a,b\r1,2\r\r"x\ry",3\r4,5');
  assert.deepEqual(
    cr.lines.map(([line]) => line),
    [1, 2, 4, 6],
  );
  // Endings mixed in one file (lines joined from two systems): each one still ends its record.
  const mixed = await read('a,b\r\n1,2\n3,4\r\n5,6\r7,8\n');
  assert.deepEqual(mixed.lines, [
    [1, 'a|b'],
    [2, '1|2'],
    [3, '3|4'],
    [4, '5|6'],
    [5, '7|8'],
  ]);
  const blanks = await read('a,b\n  ,  \n1,2\n');
  assert.deepEqual(blanks.lines, [
    [1, 'a|b'],
    [3, '1|2'],
  ]);
});

test('any chunking of the input, even inside a UTF-8 character, gives the same records', async () => {
  const bytes = Buffer.from('a,b\r\n"q ""x""",Zoë\r\n\r\n"multi\r\nline",Ærø 🚀\r\n4,"5,5"\n6,7\r8,9\r\n');
  const whole = await read([bytes]);
  assert.equal(whole.lines[1]![1], 'q "x"|Zoë');
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 6 }),
      async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const pieces = [0, ...points].map((start, i) => bytes.subarray(start, points[i] ?? bytes.length));
        assert.deepEqual(await read(pieces), whole);
      },
    ),
    { seed: 4242, numRuns: 200 },
  );
});

test('text that is not CSV stops the reading at its line, after the records before it', async () => {
  const unclosed = await read('a,b\n1,2\n"open,3\n4,5\n');
  assert.deepEqual(unclosed.lines, [
    [1, 'a|b'],
    [2, '1|2'],
  ]);
  assert.equal((unclosed.problem as { line: number }).line, 3);
  const long = await read(`a,b\n1,2\n${'x'.repeat(200)},3\n`, 100);
  assert.deepEqual(long.lines.length, 2);
  assert.match((long.problem as { detail: string }).detail, /not valid CSV from this line on/);
});

test('bytes that are not UTF-8 stop the reading at their line, after the records before it', async () => {
  const latin1 = await read([Buffer.from('a,b\n1,2\nJ\xe9o,3\n4,5\n', 'latin1')]);
  assert.deepEqual(latin1.lines, [
    [1, 'a|b'],
    [2, '1|2'],
  ]);
  assert.deepEqual(latin1.problem, {
    line: 3,
    field: null,
    detail:
      'the file is not UTF-8 text from this line on: save it as UTF-8 and import it again; nothing after it was read.',
  });
  // Broken in a record that the piece does not finish, and at the very end, inside a character.
  const unfinished = await read([Buffer.from('a,b\n1,2\n3,\xff', 'latin1')]);
  assert.deepEqual(unfinished.lines.length, 2);
  assert.equal((unfinished.problem as { line: number }).line, 3);
  const cut = await read([Buffer.concat([Buffer.from('a,b\n1,2\n3,'), Buffer.from('é').subarray(0, 1)])]);
  assert.deepEqual(cut.lines.length, 2);
  assert.equal((cut.problem as { line: number }).line, 3);
  // A character split between two reads is whole text.
  const split = Buffer.from('a,b\nZoë,1\n');
  const whole = await read([split.subarray(0, 7), split.subarray(7)]);
  assert.equal(whole.problem, undefined);
  assert.deepEqual(whole.lines[1], [2, 'Zoë|1']);
});

test('the header: known columns in any case and order, each once, the required ones present', () => {
  const header = parseRosterHeader([
    ' Email ',
    'PRIMARY_IDENTIFIER',
    'first_name',
    'last_name',
    'wage_amount',
    'wage_frequency',
  ]);
  assert.equal(header.get('email'), 0);
  assert.equal(header.width, 6);
  const refusals: [string[], RegExp][] = [
    [['primary_identifier', 'emial'], /"emial" is not a roster column/],
    [['email', 'email'], /the column email appears twice/],
    [['email'], /lacks the required columns primary_identifier, first_name, last_name, wage_amount/],
  ];
  for (const [fields, message] of refusals) {
    assert.throws(
      () => parseRosterHeader(fields),
      (error) => error instanceof InputError && message.test(error.message),
    );
  }
});

test('a line is checked field by field; the first problem names its field', () => {
  const header = parseRosterHeader([
    'primary_identifier',
    'first_name',
    'last_name',
    'email',
    'wage_amount',
    'wage_frequency',
    'state_of_residence',
    'title',
  ]);
  const good = ['P-1', 'Alex', 'Rivera', 'Alex@Example.COM', '24.5', 'hourly', 'ny', ''];
  const parsed = parseRosterRow(good, header, { line: 7, fractionDigits: 2 });
  assert.ok('row' in parsed);
  assert.equal(parsed.row.email, 'alex@example.com');
  assert.equal(parsed.row.wageAmountMinor, 2450);
  assert.equal(parsed.row.wageFrequency, 'HOURLY');
  assert.equal(parsed.row.stateOfResidence, 'NY');
  assert.equal(parsed.row.title, null, 'an empty cell clears');
  assert.equal(parsed.row.location, undefined, 'a column not in the file keeps');
  const bad = (index: number, value: string) => {
    const fields = [...good];
    fields[index] = value;
    const result = parseRosterRow(fields, header, { line: 7, fractionDigits: 2 });
    assert.ok('problem' in result, value);
    return result.problem;
  };
  assert.deepEqual(bad(0, ''), {
    line: 7,
    field: 'primary_identifier',
    detail: 'primary_identifier is required.',
  });
  assert.equal(bad(0, 'x'.repeat(101)).field, 'primary_identifier');
  assert.equal(bad(1, 'A\u0007').field, 'first_name');
  // The one rule for names from outside (input-text.ts): no bidirectional or zero-width characters either.
  assert.equal(bad(2, 'Rivera\u202e').field, 'last_name');
  assert.equal(bad(7, 'Lead\u200b').field, 'title');
  assert.equal(bad(3, 'alex@localhost').field, 'email');
  for (const amount of ['24,00', '-1', '1e3', '24.001', '$24', '1234567890', ' ', 'NaN']) {
    assert.equal(bad(4, amount).field, 'wage_amount', amount);
  }
  assert.equal(bad(5, 'DAILY').field, 'wage_frequency');
  assert.equal(bad(6, 'PR').field, 'state_of_residence');
  const short = parseRosterRow(good.slice(1), header, { line: 9, fractionDigits: 2 });
  assert.deepEqual('problem' in short && short.problem, {
    line: 9,
    field: null,
    detail: 'the line has 7 fields; the header has 8.',
  });
});

test('decimal amounts become minor units by string arithmetic, in the currency of the organization', () => {
  assert.equal(parseDecimalAmount('24.00', 2), 2400);
  assert.equal(parseDecimalAmount('0.1', 2), 10);
  assert.equal(parseDecimalAmount('19.99', 2), 1999);
  assert.equal(parseDecimalAmount('999999999.99', 2), 99_999_999_999);
  assert.equal(parseDecimalAmount('1000', 0), 1000);
  assert.equal(parseDecimalAmount('10.5', 0), undefined);
  assert.equal(parseDecimalAmount('1.234', 3), 1234);
  assert.deepEqual(['USD', 'JPY', 'KWD'].map(currencyFractionDigits), [2, 0, 3]);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 99_999_999_999 }), (minor) => {
      const text = `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
      assert.equal(parseDecimalAmount(text, 2), minor);
    }),
    { seed: 7, numRuns: 500 },
  );
});

test('a policy change is checked value by value, then as a whole', () => {
  const policy: OrganizationPolicy = {
    currency: 'USD',
    timeZone: 'America/New_York',
    payFrequency: 'BIWEEKLY',
    payCalendarAnchor: '2026-01-05',
    paydayOffsetDays: 5,
    accessRateBp: 5000,
    withholdingEstimateBp: 2500,
    transfersEnabled: true,
    minimumTransferMinor: 500,
    maximumTransferMinor: 100_000,
    maximumFeeMinor: 999,
    dailyTransferCountMax: 5,
    dailyTransferAmountMaxMinor: 100_000,
    feeCardInstantMinor: 299,
    feeCardNextDayMinor: 0,
    feeBankInstantMinor: null,
    feeBankNextDayMinor: 0,
    overpaymentDefaultResolution: 'NONE',
    overpaymentInstallments: 2,
    overpaymentWriteOffAfterPeriods: 6,
    overpaymentWriteOffDelinquent: false,
    paydayPayout: 'PROVIDER',
  };
  assert.deepEqual(applyPolicyChange(policy, { accessRateBp: 0, feeCardInstantMinor: null }), {
    ...policy,
    accessRateBp: 0,
    feeCardInstantMinor: null,
  });
  const refused = (change: Record<string, unknown>) => {
    try {
      applyPolicyChange(policy, change);
    } catch (error) {
      assert.ok(error instanceof InputError);
      return error.field;
    }
    assert.fail(`accepted ${JSON.stringify(change)}`);
  };
  assert.equal(refused({ accessRateBp: 10_001 }), 'access_rate_bp');
  assert.equal(refused({ paydayOffsetDays: 2.5 }), 'payday_offset_days');
  assert.equal(refused({ timeZone: 'Etc/GMT+5x' }), 'time_zone');
  assert.equal(refused({ currency: 'XYZ' }), 'currency');
  assert.equal(refused({ payCalendarAnchor: '1999-12-31' }), 'pay_calendar_anchor');
  assert.equal(refused({ maximumTransferMinor: 499 }), 'maximum_transfer_minor');
  assert.equal(refused({ minimumTransferMinor: 100_001 }), 'minimum_transfer_minor');
  assert.equal(refused({ maximumFeeMinor: 298 }), 'maximum_fee_minor');
  assert.equal(refused({ feeBankInstantMinor: 1_000 }), 'fee_bank_instant_minor');
  assert.equal(refused({ feeBankInstantMinor: -1 }), 'fee_bank_instant_minor');
  assert.equal(refused({ surprise: true }), 'surprise');
});
