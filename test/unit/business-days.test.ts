import assert from 'node:assert/strict';
import { test } from 'node:test';
import { federalHolidays, isBusinessDay, nextBusinessDay } from '../../src/rails/business-days.ts';

test('2026 bank holidays: Independence Day on a Saturday is not observed on Friday', () => {
  assert.deepEqual(federalHolidays(2026), [
    '2026-01-01',
    '2026-01-19',
    '2026-02-16',
    '2026-05-25',
    '2026-06-19',
    '2026-09-07',
    '2026-10-12',
    '2026-11-11',
    '2026-11-26',
    '2026-12-25',
  ]);
  assert.equal(isBusinessDay('2026-07-03'), true);
  assert.equal(isBusinessDay('2026-11-26'), false);
});

test('2027 bank holidays: Independence Day on a Sunday is observed Monday; Saturday ones are dropped', () => {
  assert.deepEqual(federalHolidays(2027), [
    '2027-01-01',
    '2027-01-18',
    '2027-02-15',
    '2027-05-31',
    '2027-07-05',
    '2027-09-06',
    '2027-10-11',
    '2027-11-11',
    '2027-11-25',
  ]);
  assert.equal(isBusinessDay('2027-07-05'), false);
  assert.equal(isBusinessDay('2027-06-18'), true);
  assert.equal(isBusinessDay('2027-12-24'), true);
});

test('a returned holiday list is a copy; the cache stays intact', () => {
  federalHolidays(2026).length = 0;
  assert.equal(federalHolidays(2026).length, 10);
});

test('weekends are not business days', () => {
  assert.equal(isBusinessDay('2026-03-07'), false);
  assert.equal(isBusinessDay('2026-03-08'), false);
  assert.equal(isBusinessDay('2026-03-09'), true);
});

test('the next business day is strictly after, skipping weekends and holidays', () => {
  assert.equal(nextBusinessDay('2026-03-10'), '2026-03-11');
  assert.equal(nextBusinessDay('2026-03-06'), '2026-03-09');
  assert.equal(nextBusinessDay('2026-03-07'), '2026-03-09');
  assert.equal(nextBusinessDay('2026-11-25'), '2026-11-27');
  assert.equal(nextBusinessDay('2026-12-24'), '2026-12-28');
  assert.equal(nextBusinessDay('2026-12-31'), '2027-01-04');
  assert.equal(nextBusinessDay('2027-07-02'), '2027-07-06');
  assert.equal(nextBusinessDay('2026-01-16'), '2026-01-20');
});
