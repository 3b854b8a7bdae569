import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InputError } from '../../src/errors/input-error.ts';
import { csvCell, csvOf } from '../../src/reports/report-csv.ts';
import { readPeriod } from '../../src/reports/report-period.ts';

const span = (input: Parameters<typeof readPeriod>[0]) => {
  const period = readPeriod(input);
  return [period.from, period.to, period.startsAt.toISOString(), period.endsBefore.toISOString()];
};

test('a year, its quarters and halves are UTC days, the end exclusive at the next first midnight', () => {
  assert.deepEqual(span({ year: '2026' }), [
    '2026-01-01',
    '2026-12-31',
    '2026-01-01T00:00:00.000Z',
    '2027-01-01T00:00:00.000Z',
  ]);
  assert.deepEqual(span({ year: '2026', quarter: '1' }).slice(0, 2), ['2026-01-01', '2026-03-31']);
  assert.deepEqual(span({ year: '2026', quarter: '4' }).slice(1), [
    '2026-12-31',
    '2026-10-01T00:00:00.000Z',
    '2027-01-01T00:00:00.000Z',
  ]);
  assert.deepEqual(span({ year: '2028', quarter: '1' }).slice(0, 2), ['2028-01-01', '2028-03-31']);
  assert.deepEqual(span({ year: '2026', half: '1' }).slice(0, 2), ['2026-01-01', '2026-06-30']);
  assert.deepEqual(span({ year: '2026', half: '2' }).slice(0, 2), ['2026-07-01', '2026-12-31']);
  // A leap day, and a range of one day.
  assert.deepEqual(span({ from: '2028-02-29', to: '2028-02-29' }).slice(2), [
    '2028-02-29T00:00:00.000Z',
    '2028-03-01T00:00:00.000Z',
  ]);
  assert.deepEqual(span({ from: '2026-01-31', to: '2026-02-28' }).slice(0, 2), ['2026-01-31', '2026-02-28']);
});

test('a period named wrongly is an InputError naming the field', () => {
  const cases: [Parameters<typeof readPeriod>[0], string][] = [
    [{}, 'year'],
    [{ year: '26' }, 'year'],
    [{ year: '2101' }, 'year'],
    [{ year: '2026', quarter: '0' }, 'quarter'],
    [{ year: '2026', quarter: '1', half: '1' }, 'half'],
    [{ year: '2026', half: '3' }, 'half'],
    [{ from: '2026-01-01' }, 'to'],
    [{ to: '2026-01-01' }, 'from'],
    [{ from: '2026-02-29', to: '2026-03-01' }, 'from'],
    [{ from: '2026-03-01', to: '2026-02-28' }, 'from'],
    [{ from: '1999-12-31', to: '2026-02-28' }, 'from'],
    [{ year: '2026', from: '2026-01-01', to: '2026-01-02' }, 'year'],
  ];
  for (const [input, field] of cases)
    assert.throws(
      () => readPeriod(input),
      (error: unknown) => error instanceof InputError && error.field === field,
      JSON.stringify(input),
    );
  // A day outside the years reports cover is said as days, not as the year inside it.
  assert.throws(
    () => readPeriod({ from: '1999-12-31', to: '2026-02-28' }),
    /^InputError: from must be a day from 2000-01-01 to 2100-12-31 \(got "1999-12-31"\)\.$/,
  );
});

test('CSV cells: RFC 4180 quoting, and text a spreadsheet would run as a formula kept as text', () => {
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
  assert.equal(csvCell('=1+2'), "'=1+2");
  assert.equal(csvCell('+1'), "'+1");
  assert.equal(csvCell('-1'), "'-1");
  assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
  assert.equal(csvCell('=A1,"x"'), `"'=A1,""x"""`);
  assert.equal(csvCell(-5), '-5');
  assert.equal(csvCell(null), '');
  assert.equal(csvOf(['a', 'b'], [[1, 'x,y']]), 'a,b\r\n1,"x,y"\r\n');
});
