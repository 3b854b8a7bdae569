import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter } from '../../src/tokenization/rate-limit.ts';

function limiter(limit: number, keysMax = 1000) {
  let nowMs = Date.UTC(2026, 2, 11);
  const rateLimiter = new RateLimiter({ limit, windowMs: 60_000, keysMax, now: () => new Date(nowMs) });
  return { rateLimiter, advanceMs: (ms: number) => (nowMs += ms) };
}

test('a key gets `limit` attempts per window; refused attempts still count and say how long to wait', () => {
  const { rateLimiter, advanceMs } = limiter(2);
  assert.deepEqual(rateLimiter.hit('a'), { allowed: true });
  advanceMs(10_000);
  assert.deepEqual(rateLimiter.hit('a'), { allowed: true });
  assert.deepEqual(rateLimiter.hit('a'), { allowed: false, retryAfterSeconds: 50 });
  assert.deepEqual(rateLimiter.hit('b'), { allowed: true }, 'keys are independent');
  advanceMs(49_001);
  assert.deepEqual(rateLimiter.hit('a'), { allowed: false, retryAfterSeconds: 1 }, 'rounded up, never 0');
  advanceMs(999);
  assert.deepEqual(
    rateLimiter.hit('a'),
    { allowed: true },
    'the window opened at the first attempt has closed',
  );
});

test('memory stays bounded: expired windows are swept, and past keysMax the oldest window is forgotten', () => {
  const { rateLimiter, advanceMs } = limiter(1, 100);
  for (let index = 0; index < 1000; index++) rateLimiter.hit(`key-${index}`);
  assert.equal(rateLimiter.size, 100);
  assert.equal(rateLimiter.hit('key-999').allowed, false, 'the newest keys are still limited');
  assert.equal(rateLimiter.hit('key-0').allowed, true, 'the oldest were forgotten');
  advanceMs(60_000);
  rateLimiter.hit('fresh');
  assert.equal(rateLimiter.size, 1, 'every expired window went on the next attempt');
});

test('a clock that goes back opens a new window rather than blocking for the gap', () => {
  const { rateLimiter, advanceMs } = limiter(1);
  rateLimiter.hit('a');
  assert.equal(rateLimiter.hit('a').allowed, false);
  advanceMs(-3_600_000);
  assert.equal(rateLimiter.hit('a').allowed, true);
});
