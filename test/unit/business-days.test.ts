import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { addDays, daysBetween, weekdayOf } from '../../src/domain/calendar.ts';
import { federalHolidays, isBusinessDay, nextBusinessDay } from '../../src/rails/business-days.ts';

const MODULE_URL = new URL('../../src/rails/business-days.ts', import.meta.url).href;

// The Federal Reserve's published holiday schedules (federalreserve.gov, "Holidays Observed").
test('2025 bank holidays: the Federal Reserve list', () => {
  assert.deepEqual(federalHolidays(2025), [
    '2025-01-01',
    '2025-01-20',
    '2025-02-17',
    '2025-05-26',
    '2025-06-19',
    '2025-07-04',
    '2025-09-01',
    '2025-10-13',
    '2025-11-11',
    '2025-11-27',
    '2025-12-25',
  ]);
});

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
  // New Year's Day 2028 is a Saturday: Friday Dec 31, 2027 stays a business day, and 2028 starts with MLK Day.
  assert.equal(isBusinessDay('2027-12-31'), true);
  assert.equal(federalHolidays(2028)[0], '2028-01-17');
});

test('Saturday holidays are not observed; Sunday ones move to Monday (1990-2100)', () => {
  for (let year = 1990; year <= 2100; year++) {
    const holidays = federalHolidays(year);
    const fixed = ['01-01', '07-04', '11-11', '12-25', ...(year >= 2022 ? ['06-19'] : [])];
    for (const monthDay of fixed) {
      const day = `${year}-${monthDay}`;
      const weekday = weekdayOf(day);
      if (weekday === 6) {
        assert.equal(isBusinessDay(addDays(day, -1)), true, `Friday before ${day}`);
        assert.ok(!holidays.includes(addDays(day, -1)), `Friday before ${day}`);
      } else if (weekday === 0) {
        assert.ok(holidays.includes(addDays(day, 1)), `Monday after ${day}`);
      } else {
        assert.ok(holidays.includes(day), day);
      }
    }
    for (const day of holidays) {
      assert.ok(day.startsWith(`${year}-`), day);
      assert.ok(weekdayOf(day) >= 1 && weekdayOf(day) <= 5, `${day} is a weekday`);
    }
    assert.deepEqual(holidays, [...holidays].sort());
  }
  assert.ok(federalHolidays(2022).includes('2022-06-20'));
  assert.ok(federalHolidays(2022).includes('2022-12-26'));
  assert.equal(isBusinessDay('2021-12-31'), true);
  assert.equal(isBusinessDay('2023-01-02'), false);
  assert.equal(isBusinessDay('2023-11-10'), true);
});

test('Juneteenth: no bank holiday before 2022, though federal employees had Friday June 18, 2021 off', () => {
  assert.ok(!federalHolidays(2020).some((day) => day.startsWith('2020-06')));
  assert.ok(!federalHolidays(2021).some((day) => day.startsWith('2021-06')));
  assert.equal(isBusinessDay('2021-06-18'), true);
  assert.equal(nextBusinessDay('2021-06-17'), '2021-06-18');
  assert.equal(isBusinessDay('2022-06-20'), false);
  assert.equal(isBusinessDay('2023-06-19'), false);
});

test('Inauguration Day is not a bank holiday', () => {
  assert.equal(isBusinessDay('2017-01-20'), true);
  assert.equal(isBusinessDay('2021-01-20'), true);
  // 2025: Inauguration Day fell on MLK Day, a bank holiday in its own right, listed once.
  assert.equal(federalHolidays(2025).filter((day) => day === '2025-01-20').length, 1);
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

test('the next business day across Thanksgiving, Christmas and long weekends', () => {
  assert.equal(nextBusinessDay('2025-11-26'), '2025-11-28');
  assert.equal(nextBusinessDay('2025-12-24'), '2025-12-26');
  assert.equal(nextBusinessDay('2025-08-29'), '2025-09-02');
  assert.equal(nextBusinessDay('2025-01-17'), '2025-01-21');
  assert.equal(nextBusinessDay('2026-05-22'), '2026-05-26');
  assert.equal(nextBusinessDay('2026-07-02'), '2026-07-03');
  assert.equal(nextBusinessDay('2027-12-30'), '2027-12-31');
  assert.equal(nextBusinessDay('2027-12-31'), '2028-01-03');
});

test('property: for 1,000 random days in 1990-2100 the next business day is one, after, within 7 days', () => {
  // mulberry32, seeded: the same days on every run.
  let seed = 0x5eed_2026;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const span = daysBetween('1990-01-01', '2100-12-31');
  for (let i = 0; i < 1000; i++) {
    const day = addDays('1990-01-01', Math.floor(random() * (span + 1)));
    const next = nextBusinessDay(day);
    assert.equal(isBusinessDay(next), true, `${day} -> ${next}`);
    const gap = daysBetween(day, next);
    assert.ok(gap >= 1 && gap <= 7, `${day} -> ${next}`);
    for (let between = addDays(day, 1); between < next; between = addDays(between, 1))
      assert.equal(isBusinessDay(between), false, `${between} between ${day} and ${next}`);
  }
});

// The library builds and formats its dates in the process's local zone; the result must not depend on it.
// Each zone runs in a child process, since TZ is read when the process starts.
const FINGERPRINT_SCRIPT = `
const m = await import(${JSON.stringify(MODULE_URL)});
const holidays = {};
for (let year = 1990; year <= 2100; year++) holidays[year] = m.federalHolidays(year);
const probes = ['2021-06-18', '2026-07-03', '2026-11-25', '2026-12-24', '2027-07-02', '2027-12-31', '2028-02-18'];
const next = probes.map((day) => [day, m.isBusinessDay(day), m.nextBusinessDay(day)]);
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
process.stdout.write(JSON.stringify({ zone, holidays, next }));
`;

function fingerprintIn(timeZone: string): { zone: string; holidays: unknown; next: unknown } {
  const output = execFileSync(process.execPath, ['--input-type=module', '--eval', FINGERPRINT_SCRIPT], {
    env: { ...process.env, TZ: timeZone },
    encoding: 'utf8',
  });
  return JSON.parse(output);
}

test('the same days whatever the process time zone', () => {
  const reference = fingerprintIn('UTC');
  assert.equal(reference.zone, 'UTC');
  assert.deepEqual((reference.holidays as Record<string, string[]>)['2026'], federalHolidays(2026));
  for (const timeZone of [
    'America/Los_Angeles',
    'America/New_York',
    'Asia/Tokyo',
    'Pacific/Kiritimati',
    'Pacific/Pago_Pago',
    'America/Santiago',
  ]) {
    const result = fingerprintIn(timeZone);
    assert.equal(result.zone, timeZone);
    assert.deepEqual(result.holidays, reference.holidays, timeZone);
    assert.deepEqual(result.next, reference.next, timeZone);
  }
});
