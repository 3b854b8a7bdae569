import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  ACH_WINDOW_CUTOFFS,
  effectiveEntryDateFor,
  firstSettlementDayFrom,
  settlementInstant,
  windowFor,
  windowsDueBy,
} from '../../src/rails/ach/ach-windows.ts';

// 2026: daylight saving starts Sunday 8 March and ends Sunday 1 November. 6 March and 30 October are Fridays.

/** A fake bank calendar: weekends and the given holidays are closed. */
function calendar(...holidays: string[]) {
  const isBusinessDay = (day: string): boolean => {
    const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
    return weekday !== 0 && weekday !== 6 && !holidays.includes(day);
  };
  const nextBusinessDay = (day: string): string => {
    let candidate = day;
    do {
      candidate = new Date(Date.parse(`${candidate}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    } while (!isBusinessDay(candidate));
    return candidate;
  };
  return { isBusinessDay, nextBusinessDay };
}

const open = calendar();
const at = (iso: string) => new Date(iso);

function windowAt(iso: string, isBusinessDay = open.isBusinessDay) {
  const window = windowFor(at(iso), isBusinessDay);
  return { id: window.id, cutoffAt: window.cutoffAt.toISOString(), fileIdModifier: window.fileIdModifier };
}

test('the three cut-offs', () => {
  assert.deepEqual(ACH_WINDOW_CUTOFFS, ['10:30', '14:45', '16:45']);
});

test('before 10:30 the first window; at a cut-off or between windows the next one', () => {
  // Tuesday 10 March 2026, EDT (UTC-4).
  assert.deepEqual(windowAt('2026-03-10T13:00:00Z'), {
    id: '2026-03-10/1030',
    cutoffAt: '2026-03-10T14:30:00.000Z',
    fileIdModifier: 'A',
  });
  assert.equal(windowAt('2026-03-10T14:29:59.999Z').id, '2026-03-10/1030');
  assert.equal(windowAt('2026-03-10T14:30:00Z').id, '2026-03-10/1445'); // strictly after
  assert.deepEqual(windowAt('2026-03-10T16:00:00Z'), {
    id: '2026-03-10/1445',
    cutoffAt: '2026-03-10T18:45:00.000Z',
    fileIdModifier: 'B',
  });
  assert.deepEqual(windowAt('2026-03-10T19:00:00Z'), {
    id: '2026-03-10/1645',
    cutoffAt: '2026-03-10T20:45:00.000Z',
    fileIdModifier: 'C',
  });
});

test("after 16:45 the next business day's first window, by New York's date, not UTC's", () => {
  assert.equal(windowAt('2026-03-10T21:00:00Z').id, '2026-03-11/1030');
  assert.equal(windowAt('2026-03-11T03:59:00Z').id, '2026-03-11/1030'); // 23:59 on the 10th in New York
  assert.equal(windowAt('2026-03-11T04:00:00Z').id, '2026-03-11/1030'); // midnight on the 11th
});

test('Friday after 16:45 goes to Monday, or to Tuesday when Monday is a holiday; weekends too', () => {
  // Friday 6 March is EST, Monday 9 March EDT: the cut-off moves an hour earlier in UTC.
  assert.deepEqual(windowAt('2026-03-06T22:00:00Z'), {
    id: '2026-03-09/1030',
    cutoffAt: '2026-03-09T14:30:00.000Z',
    fileIdModifier: 'A',
  });
  const mondayOff = calendar('2026-03-09').isBusinessDay;
  assert.equal(windowAt('2026-03-06T22:00:00Z', mondayOff).id, '2026-03-10/1030');
  assert.equal(windowAt('2026-03-07T15:00:00Z').id, '2026-03-09/1030'); // a Saturday morning
  assert.equal(windowAt('2026-03-09T13:00:00Z', mondayOff).id, '2026-03-10/1030'); // on the holiday itself
});

test('daylight saving: cut-offs keep their New York time on the Mondays after both changes', () => {
  assert.equal(windowAt('2026-03-06T12:00:00Z').cutoffAt, '2026-03-06T15:30:00.000Z'); // EST
  assert.equal(windowAt('2026-03-09T12:00:00Z').cutoffAt, '2026-03-09T14:30:00.000Z'); // EDT
  assert.equal(windowAt('2026-03-09T20:00:00Z').cutoffAt, '2026-03-09T20:45:00.000Z');
  assert.equal(windowAt('2026-10-30T12:00:00Z').cutoffAt, '2026-10-30T14:30:00.000Z'); // EDT
  assert.deepEqual(windowAt('2026-10-30T21:00:00Z'), {
    id: '2026-11-02/1030',
    cutoffAt: '2026-11-02T15:30:00.000Z', // EST
    fileIdModifier: 'A',
  });
  assert.equal(windowAt('2026-11-02T19:00:00Z').cutoffAt, '2026-11-02T19:45:00.000Z');
  assert.equal(windowAt('2026-11-02T21:00:00Z').cutoffAt, '2026-11-02T21:45:00.000Z');
});

test('windows due: every cut-off in (since, now], oldest first, across a weekend and a DST change', () => {
  const due = windowsDueBy(at('2026-03-10T14:30:00Z'), at('2026-03-06T19:45:00Z'), open.isBusinessDay);
  assert.deepEqual(
    due.map((window) => window.id),
    ['2026-03-06/1645', '2026-03-09/1030', '2026-03-09/1445', '2026-03-09/1645', '2026-03-10/1030'],
  );
  assert.deepEqual(
    due.map((window) => window.cutoffAt.toISOString()),
    [
      '2026-03-06T21:45:00.000Z',
      '2026-03-09T14:30:00.000Z',
      '2026-03-09T18:45:00.000Z',
      '2026-03-09T20:45:00.000Z',
      '2026-03-10T14:30:00.000Z',
    ],
  );
  assert.deepEqual(
    windowsDueBy(at('2026-03-10T14:00:00Z'), at('2026-03-10T13:00:00Z'), open.isBusinessDay),
    [],
  );
  assert.deepEqual(
    windowsDueBy(at('2026-03-10T13:00:00Z'), at('2026-03-10T14:00:00Z'), open.isBusinessDay),
    [],
  );
  // 31 days, the most allowed: 6 March, then four whole weeks to Friday 3 April, 21 business days of 3 windows.
  assert.equal(
    windowsDueBy(at('2026-04-06T00:00:00Z'), at('2026-03-06T00:00:00Z'), open.isBusinessDay).length,
    63,
  );
  assert.throws(
    () => windowsDueBy(at('2026-04-07T00:00:01Z'), at('2026-03-07T00:00:00Z'), open.isBusinessDay),
    RangeError,
  );
});

test('effective entry date: the business day after the window, or a later not-before day', () => {
  const { isBusinessDay, nextBusinessDay } = open;
  const friday = windowFor(at('2026-03-06T12:00:00Z'), isBusinessDay);
  assert.equal(effectiveEntryDateFor(friday, undefined, nextBusinessDay, isBusinessDay), '2026-03-09');
  assert.equal(effectiveEntryDateFor(friday, '2026-03-01', nextBusinessDay, isBusinessDay), '2026-03-09');
  assert.equal(effectiveEntryDateFor(friday, '2026-03-09', nextBusinessDay, isBusinessDay), '2026-03-09');
  assert.equal(effectiveEntryDateFor(friday, '2026-03-12', nextBusinessDay, isBusinessDay), '2026-03-12');
  assert.equal(effectiveEntryDateFor(friday, '2026-03-14', nextBusinessDay, isBusinessDay), '2026-03-16');

  const holidays = calendar('2026-03-09', '2026-03-16');
  assert.equal(
    effectiveEntryDateFor(friday, undefined, holidays.nextBusinessDay, holidays.isBusinessDay),
    '2026-03-10',
  );
  assert.equal(
    effectiveEntryDateFor(friday, '2026-03-16', holidays.nextBusinessDay, holidays.isBusinessDay),
    '2026-03-17',
  );
  assert.throws(() => effectiveEntryDateFor(friday, '2026-3-12', nextBusinessDay, isBusinessDay), RangeError);
  assert.throws(
    () => effectiveEntryDateFor(friday, '2026-02-30', nextBusinessDay, isBusinessDay),
    RangeError,
  );
});

test('settlement at 08:30 in New York, right across daylight-saving changes', () => {
  assert.equal(settlementInstant('2026-03-06').toISOString(), '2026-03-06T13:30:00.000Z');
  assert.equal(settlementInstant('2026-03-08').toISOString(), '2026-03-08T12:30:00.000Z'); // the change day
  assert.equal(settlementInstant('2026-03-09').toISOString(), '2026-03-09T12:30:00.000Z');
  assert.equal(settlementInstant('2026-10-30').toISOString(), '2026-10-30T12:30:00.000Z');
  assert.equal(settlementInstant('2026-11-01').toISOString(), '2026-11-01T13:30:00.000Z'); // the change day
  assert.equal(settlementInstant('2026-11-02').toISOString(), '2026-11-02T13:30:00.000Z');
  assert.throws(() => settlementInstant('2026-11-31'), RangeError);
});

test('first settlement day from an instant: its New York day, or the next when that day settled before it', () => {
  // Payday midnights, Friday 20 March 2026 (EDT, UTC-4): in New York and west of it, the same New York day.
  assert.equal(firstSettlementDayFrom(at('2026-03-20T04:00:00Z')), '2026-03-20'); // New York
  assert.equal(firstSettlementDayFrom(at('2026-03-20T07:00:00Z')), '2026-03-20'); // Los Angeles
  // East of New York payday begins on New York's Thursday, after its 08:30 settlement: Friday.
  assert.equal(firstSettlementDayFrom(at('2026-03-20T00:00:00Z')), '2026-03-20'); // UTC
  assert.equal(firstSettlementDayFrom(at('2026-03-19T15:00:00Z')), '2026-03-20'); // Tokyo
  // At the settlement instant itself, that day; a moment later, the next.
  assert.equal(firstSettlementDayFrom(at('2026-03-19T12:30:00Z')), '2026-03-19');
  assert.equal(firstSettlementDayFrom(at('2026-03-19T12:30:00.001Z')), '2026-03-20');
  assert.throws(() => firstSettlementDayFrom(new Date(Number.NaN)), RangeError);
  fc.assert(
    fc.property(
      fc.date({ min: new Date('2025-01-01'), max: new Date('2028-01-01'), noInvalidDate: true }),
      (instant) => {
        const day = firstSettlementDayFrom(instant);
        assert.ok(settlementInstant(day) >= instant, 'not before the instant');
        const dayBefore = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
        assert.ok(settlementInstant(dayBefore) < instant, 'the first such day');
      },
    ),
    { seed: 0x5e7, numRuns: 500 },
  );
});

test('property: the window is the first cut-off strictly after the instant, at its New York wall-clock time', () => {
  const newYorkTime = (instant: Date) =>
    instant.toLocaleString('sv-SE', { timeZone: 'America/New_York', hourCycle: 'h23' }).slice(0, 16);
  fc.assert(
    fc.property(
      fc.date({
        min: new Date('2025-01-01T00:00:00Z'),
        max: new Date('2028-12-31T00:00:00Z'),
        noInvalidDate: true,
      }),
      (instant) => {
        const window = windowFor(instant, open.isBusinessDay);
        assert.ok(window.cutoffAt > instant);
        assert.equal(
          newYorkTime(window.cutoffAt),
          `${window.day} ${window.id.slice(11, 13)}:${window.id.slice(13)}`,
        );
        assert.ok(open.isBusinessDay(window.day));
        // Nothing is due between the instant and the window but the window itself.
        assert.deepEqual(
          windowsDueBy(window.cutoffAt, instant, open.isBusinessDay).map((w) => w.id),
          [window.id],
        );
      },
    ),
    { seed: 0x4ac6, numRuns: 300 },
  );
});
