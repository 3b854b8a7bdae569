import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localDateOf, localInstant, localTimeOf } from '../../src/domain/calendar.ts';

/**
 * The calendar remembers each zone's offset per quarter hour; these compare it with Intl asked afresh, at random
 * instants and around every transition of zones with unusual offsets and changes (half-hour and 45-minute offsets,
 * a half-hour daylight saving, the southern hemisphere).
 */
const ZONES = [
  'America/New_York',
  'America/Los_Angeles',
  'America/St_Johns',
  'Europe/London',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Asia/Kathmandu',
  'UTC',
];

function reference(instant: Date, timeZone: string): { day: string; time: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return { day: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
}

/** A seeded generator: the same instants on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** The instants where the zone's offset changes between 2020 and 2030, found by bisection over each day. */
function transitions(timeZone: string): number[] {
  const offsetAt = (ms: number) => {
    const { day, time } = reference(new Date(ms), timeZone);
    return Date.parse(`${day}T${time}:00Z`) - Math.floor(ms / 60_000) * 60_000;
  };
  const found: number[] = [];
  const day = 86_400_000;
  for (let ms = Date.UTC(2020, 0, 1); ms < Date.UTC(2030, 0, 1); ms += day) {
    if (offsetAt(ms) === offsetAt(ms + day)) continue;
    let [low, high] = [ms, ms + day];
    while (high - low > 60_000) {
      const middle = Math.floor((low + high) / 2 / 60_000) * 60_000;
      if (offsetAt(middle) === offsetAt(low)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}

test('local days and times agree with Intl at random instants', () => {
  const random = seeded(7);
  for (const timeZone of ZONES) {
    for (let i = 0; i < 2000; i++) {
      const instant = new Date(Date.UTC(1990, 0, 1) + Math.floor(random() * 60 * 365 * 86_400_000));
      const expected = reference(instant, timeZone);
      assert.equal(localDateOf(instant, timeZone), expected.day, `${timeZone} ${instant.toISOString()}`);
      assert.equal(localTimeOf(instant, timeZone), expected.time, `${timeZone} ${instant.toISOString()}`);
    }
  }
});

test('local days and times agree with Intl minute by minute around every transition', () => {
  for (const timeZone of ZONES) {
    const changes = transitions(timeZone);
    if (timeZone !== 'UTC' && timeZone !== 'Asia/Kathmandu') assert.ok(changes.length >= 18, timeZone);
    for (const change of changes) {
      for (let ms = change - 3_600_000; ms <= change + 3_600_000; ms += 60_000) {
        for (const instant of [new Date(ms), new Date(ms - 1), new Date(ms + 59_999)]) {
          const expected = reference(instant, timeZone);
          assert.equal(localDateOf(instant, timeZone), expected.day, `${timeZone} ${instant.toISOString()}`);
          assert.equal(localTimeOf(instant, timeZone), expected.time, `${timeZone} ${instant.toISOString()}`);
        }
      }
    }
  }
});

test('localInstant finds the instant a wall clock reads, across daylight saving', () => {
  assert.equal(
    localInstant('2026-03-08', '01:30', 'America/New_York').toISOString(),
    '2026-03-08T06:30:00.000Z',
  );
  assert.equal(
    localInstant('2026-03-08', '03:30', 'America/New_York').toISOString(),
    '2026-03-08T07:30:00.000Z',
  );
  assert.equal(
    localInstant('2026-11-01', '00:00', 'America/New_York').toISOString(),
    '2026-11-01T04:00:00.000Z',
  );
  assert.equal(
    localInstant('2026-11-02', '00:00', 'America/New_York').toISOString(),
    '2026-11-02T05:00:00.000Z',
  );
  assert.equal(
    localInstant('2026-04-05', '12:00', 'Australia/Lord_Howe').toISOString(),
    '2026-04-05T01:30:00.000Z',
  );
  const random = seeded(11);
  for (const timeZone of ZONES) {
    for (let i = 0; i < 500; i++) {
      const instant = new Date(
        Date.UTC(2020, 0, 1) + Math.floor(random() * 3650) * 86_400_000 + 17 * 3_600_000,
      );
      const wall = reference(instant, timeZone);
      const found = localInstant(wall.day, wall.time, timeZone);
      assert.deepEqual(reference(found, timeZone), wall, `${timeZone} ${instant.toISOString()}`);
    }
  }
});
