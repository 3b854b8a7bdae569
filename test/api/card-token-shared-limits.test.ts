import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { freePort } from '../helpers/free-port.ts';
import { redisAnswers, TEST_REDIS_URL } from '../helpers/redis.ts';

// The card token limits with REDIS_URL: counted in Redis by every process (here two apps, as two processes would
// be), and in each process alone while Redis does not answer: never a 500, never no limit at all.

const PATH = '/v2/cards/generic';

/** A random card number that passes the Luhn check, so that no other run's per-card count meets it. */
function randomCardNumber(): string {
  const digits = [4, ...Array.from({ length: 14 }, () => randomInt(10))];
  const sum = digits
    .toReversed()
    .reduce(
      (total, digit, index) =>
        total + (index % 2 === 0 ? (digit * 2 > 9 ? digit * 2 - 9 : digit * 2) : digit),
      0,
    );
  return [...digits, (10 - (sum % 10)) % 10].join('');
}

function randomAddress(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

function post(app: FastifyInstance, remoteAddress: string, body: unknown = {}) {
  return app.inject({
    method: 'POST',
    url: PATH,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
    remoteAddress,
  });
}

const LIMITS = { EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '3', EWA_CARD_TOKENS_PER_CARD_PER_MINUTE: '2' };

test('with Redis, two processes count one window per address and per card', async (t) => {
  if (!(await redisAnswers())) {
    t.skip(`needs Redis at ${TEST_REDIS_URL} (set EWA_TEST_REDIS_URL)`);
    return;
  }
  const env = { ...LIMITS, REDIS_URL: TEST_REDIS_URL };
  const [one, two] = [await buildTestApp(t, env), await buildTestApp(t, env)];
  const address = randomAddress();
  const statuses = [];
  for (const app of [one, two, one, two]) statuses.push((await post(app.payments, address)).statusCode);
  assert.deepEqual(statuses, [400, 400, 400, 429]);
  const refused = await post(one.payments, address);
  assert.equal(refused.statusCode, 429);
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  assert.equal(refused.json().errors[0].code, 'TOO_MANY_REQUESTS');

  // The per-card limit: a card that is not a sandbox test card counts, whatever else is wrong with the request.
  const card = { card_number: randomCardNumber() };
  const byCard = [];
  for (const app of [one, two, one])
    byCard.push((await post(app.payments, randomAddress(), card)).statusCode);
  assert.deepEqual(byCard, [400, 400, 429]);

  // Under the namespace, each key names its limit and what it counts, and expires with its window.
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  t.after(() => redis.disconnect());
  const key = `ewa:rate-limit:card-client:${address}`;
  assert.equal(await redis.get(key), '5');
  const ttl = await redis.pttl(key);
  assert.ok(ttl > 0 && ttl <= 60_000, `${key} expires within its window (${ttl} ms)`);
  assert.deepEqual(await redis.keys(`*${address}*`), [key]);
});

test('Redis away: each process counts alone, and no request fails for it', async (t) => {
  const closedPort = await freePort();
  const app = await buildTestApp(t, { ...LIMITS, REDIS_URL: `redis://127.0.0.1:${closedPort}` });
  const address = randomAddress();
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await post(app.payments, address)).statusCode);
  assert.deepEqual(statuses, [400, 400, 400, 429, 429]);
  assert.ok(
    app.logs.some(
      (line) => line.msg === 'Redis does not answer: rate limits are counted in this process alone',
    ),
    'the operator is told, once',
  );
});
