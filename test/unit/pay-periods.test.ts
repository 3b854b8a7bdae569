import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addDays, localDateOf, startOfLocalDay, weekdayOf } from '../../src/domain/calendar.ts';
import {
  type PayCalendar,
  payPeriodContaining,
  previousPayPeriod,
} from '../../src/money/earnings/pay-periods.ts';

const biweekly: PayCalendar = {
  frequency: 'BIWEEKLY',
  anchor: '2026-01-05',
  timeZone: 'America/New_York',
  paydayOffsetDays: 5,
};

test('a calendar day is its local midnight in UTC, across daylight saving changes', () => {
  assert.equal(startOfLocalDay('2026-01-15', 'America/New_York').toISOString(), '2026-01-15T05:00:00.000Z');
  assert.equal(startOfLocalDay('2026-07-15', 'America/New_York').toISOString(), '2026-07-15T04:00:00.000Z');
  assert.equal(startOfLocalDay('2026-03-08', 'America/New_York').toISOString(), '2026-03-08T05:00:00.000Z');
  assert.equal(startOfLocalDay('2026-03-09', 'America/New_York').toISOString(), '2026-03-09T04:00:00.000Z');
  assert.equal(
    startOfLocalDay('2026-11-01', 'America/Los_Angeles').toISOString(),
    '2026-11-01T07:00:00.000Z',
  );
  assert.equal(startOfLocalDay('2026-06-01', 'UTC').toISOString(), '2026-06-01T00:00:00.000Z');
  assert.equal(localDateOf(new Date('2026-03-11T03:00:00Z'), 'America/New_York'), '2026-03-10');
  assert.equal(addDays('2026-02-28', 1), '2026-03-01');
  assert.equal(weekdayOf('2026-11-22'), 0);
});

test('weekly and biweekly periods repeat from the anchor, before and after it', () => {
  const period = payPeriodContaining(biweekly, '2026-03-11');
  assert.equal(period.firstDay, '2026-03-02');
  assert.equal(period.lastDay, '2026-03-15');
  assert.equal(period.startsAt.toISOString(), '2026-03-02T05:00:00.000Z');
  assert.equal(period.endsAt.toISOString(), '2026-03-16T04:00:00.000Z');
  assert.equal(period.depositExpectedAt.toISOString(), '2026-03-20T04:00:00.000Z');
  assert.equal(previousPayPeriod(biweekly, period).firstDay, '2026-02-16');
  assert.equal(payPeriodContaining(biweekly, '2025-12-31').firstDay, '2025-12-22');
  const weekly = payPeriodContaining({ ...biweekly, frequency: 'WEEKLY' }, '2026-03-11');
  assert.equal(weekly.firstDay, '2026-03-09');
  assert.equal(weekly.lastDay, '2026-03-15');
});

test('twice-monthly and monthly periods follow the calendar', () => {
  const twice = { ...biweekly, frequency: 'TWICE_MONTHLY' as const };
  assert.deepEqual(
    [payPeriodContaining(twice, '2026-02-15').lastDay, payPeriodContaining(twice, '2026-02-16').lastDay],
    ['2026-02-15', '2026-02-28'],
  );
  const monthly = payPeriodContaining({ ...biweekly, frequency: 'MONTHLY' }, '2026-12-31');
  assert.equal(monthly.firstDay, '2026-12-01');
  assert.equal(monthly.endsAt.toISOString(), '2027-01-01T05:00:00.000Z');
});

test('every day belongs to exactly the period that contains it', () => {
  for (const frequency of ['WEEKLY', 'BIWEEKLY', 'TWICE_MONTHLY', 'MONTHLY'] as const) {
    let day = '2026-01-01';
    for (let i = 0; i < 400; i++, day = addDays(day, 1)) {
      const period = payPeriodContaining({ ...biweekly, frequency }, day);
      assert.ok(period.firstDay <= day && day <= period.lastDay, `${frequency} ${day}`);
      assert.equal(
        payPeriodContaining({ ...biweekly, frequency }, addDays(period.lastDay, 1)).firstDay,
        addDays(period.lastDay, 1),
      );
    }
  }
});
