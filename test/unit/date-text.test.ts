import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { INSTANT_MAX, INSTANT_MIN, isCalendarDay, parseInstant } from '../../src/domain/date-text.ts';

const iso = (text: string, form?: Parameters<typeof parseInstant>[1]) =>
  parseInstant(text, form)?.toISOString();

test('a day not on the calendar is refused, where Date would move it to another day', () => {
  for (const day of [
    '2026-02-29',
    '2026-02-30',
    '2026-04-31',
    '2026-11-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
  ])
    assert.equal(isCalendarDay(day), false, day);
  for (const day of ['2100-02-29', '1900-02-29', '0000-01-01', '2026-1-01', '20260101', ' 2026-01-01'])
    assert.equal(isCalendarDay(day), false, day);
  for (const day of ['2028-02-29', '2000-02-29', '2026-12-31', '0001-01-01', '9999-12-31'])
    assert.equal(isCalendarDay(day), true, day);
  assert.equal(isCalendarDay(20260101), false);
});

test('an instant is a date-time with its offset; each other form only where the field takes it', () => {
  assert.equal(iso('2026-03-20T14:00:00Z'), '2026-03-20T14:00:00.000Z');
  assert.equal(iso('2026-03-20T14:00Z'), '2026-03-20T14:00:00.000Z');
  assert.equal(iso('2026-03-20T14:00:00.123456789+05:30'), '2026-03-20T08:30:00.123Z');
  assert.equal(iso('2026-03-20T14:00:00-0500'), '2026-03-20T19:00:00.000Z');
  assert.equal(iso('2026-03-20'), undefined, 'a bare day leaves the zone to guess');
  assert.equal(iso('2026-03-20T14:00:00'), undefined, 'Date would read it in the server’s zone');
  assert.equal(iso('2026-03-20t14:00:00z'), '2026-03-20T14:00:00.000Z', 'RFC 3339 allows t and z');
  assert.equal(
    iso('2016-12-31T23:59:60Z'),
    '2017-01-01T00:00:00.000Z',
    'a leap second is read as the next instant',
  );
  assert.equal(iso('2016-12-31T23:59:60.5Z'), '2017-01-01T00:00:00.000Z');
  assert.equal(iso('2017-01-01T00:59:60+01:00'), '2017-01-01T00:00:00.000Z', 'a leap second at 23:59 UTC');
  assert.equal(iso('2026-03-20', { bareDay: true }), '2026-03-20T00:00:00.000Z');
  assert.equal(iso('2026-03-20T14:00', { utcWithoutOffset: true }), '2026-03-20T14:00:00.000Z');
  for (const text of [
    '2026-02-30T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-03-20T24:00:00Z',
    '2026-03-20T23:60:00Z',
    '2026-03-20T12:00:60Z',
    '2026-06-30T23:59:60+01:00',
    '2026-03-20T12:00:00+24:00',
    '2026-03-20T12:00:00+05:60',
    '2026-03-20 12:00:00Z',
    '+002026-03-20T12:00:00Z',
    '2026-03-20T12:00:00.Z',
    'Fri, 20 Mar 2026 12:00:00 GMT',
    '',
  ])
    assert.equal(iso(text, { bareDay: true, utcWithoutOffset: true }), undefined, text);
  assert.equal(parseInstant(Date.UTC(2026, 2, 20)), undefined);
  assert.equal(iso('2026-02-30', { bareDay: true }), undefined);
});

test('instants are years 0001 to 9999 once in UTC', () => {
  assert.equal(parseInstant('0001-01-01T00:00:00Z')?.getTime(), INSTANT_MIN.getTime());
  assert.equal(parseInstant('9999-12-31T23:59:59.999Z')?.getTime(), INSTANT_MAX.getTime());
  for (const text of ['0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:00:00-05:00'])
    assert.equal(iso(text), undefined, text);
});

test('any day Date reads back as written is taken, and no other', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      (year, month, day) => {
        const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
        const read = new Date(`${text}T00:00:00Z`);
        const real = !Number.isNaN(read.getTime()) && read.toISOString().startsWith(text);
        assert.equal(isCalendarDay(text), real, text);
        assert.equal(parseInstant(`${text}T00:00:00Z`)?.toISOString().slice(0, 10), real ? text : undefined);
      },
    ),
  );
});
