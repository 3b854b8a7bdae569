import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { connectRedis } from '../../src/platform/redis.ts';
import { eventually } from '../helpers/eventually.ts';
import { freezablePath } from '../helpers/freezable-path.ts';
import { redisAnswers, TEST_REDIS_URL } from '../helpers/redis.ts';

/** A logger that keeps the messages of its warnings and errors. */
function warnings() {
  const lines: string[] = [];
  const keep = (...args: unknown[]) => lines.push(String(args.at(-1)));
  const log = { warn: keep, error: keep } as unknown as FastifyBaseLogger;
  return { lines, log };
}

test('a Redis that stops answering on an open connection is said once, and later commands fail at once until it answers again', async (t) => {
  if (!(await redisAnswers())) {
    t.skip('needs Redis: set EWA_TEST_REDIS_URL or run one on 127.0.0.1:6379');
    return;
  }
  const target = new URL(TEST_REDIS_URL);
  const path = await freezablePath(target.hostname, Number(target.port || 6379));
  t.after(() => path.close());
  const { lines, log } = warnings();
  const redis = await connectRedis(`redis://127.0.0.1:${path.port}`, log);
  t.after(() => redis.disconnect());
  assert.equal(await redis.ping(), 'PONG');

  path.freeze();
  await assert.rejects(redis.ping(), /Command timed out/);
  assert.deepEqual(lines, ['Redis does not answer: rate limits are counted in this process alone']);
  // No command waits out the timeout again while Redis does not answer.
  for (let attempt = 0; attempt < 5; attempt++) {
    const started = performance.now();
    await assert.rejects(redis.ping());
    assert.ok(
      performance.now() - started < 400,
      `attempt ${attempt} waited ${performance.now() - started} ms`,
    );
  }
  assert.equal(lines.length, 1, lines.join('\n'));

  path.thaw();
  await eventually(async () => (await redis.ping().catch(() => 'not yet')) === 'PONG', 15_000);
  assert.equal(lines.at(-1), 'Redis answers again: rate limits are shared again');
});

test('a REDIS_URL database the Redis does not have is said as an error, and nothing is written to another database', async (t) => {
  if (!(await redisAnswers())) {
    t.skip('needs Redis: set EWA_TEST_REDIS_URL or run one on 127.0.0.1:6379');
    return;
  }
  const target = new URL(TEST_REDIS_URL);
  const { lines, log } = warnings();
  // Redis has 16 databases unless configured otherwise: 9999 is none of them.
  const redis = await connectRedis(`redis://${target.host}/9999`, log);
  t.after(() => redis.disconnect());
  const key = `ewa:test:wrong-database:${process.pid}`;
  await assert.rejects(redis.set(key, '1'));
  assert.deepEqual(lines, [
    "REDIS_URL's database does not exist on that Redis: rate limits are counted in this process alone",
  ]);
  const zero = await connectRedis(`redis://${target.host}/0`, warnings().log);
  t.after(() => zero.disconnect());
  assert.equal(await zero.exists(key), 0, 'nothing in database 0');
});
