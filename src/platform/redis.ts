import { once } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';

/** A Redis command that takes longer fails, and what asked for it carries on without Redis (fail open). */
const COMMAND_TIMEOUT_MS = 500;
/** At start-up, how long to wait for the first connection before serving without Redis. */
const FIRST_CONNECTION_WAIT_MS = 2000;
/** At most one warning this often while Redis is away, not one per request. */
const WARNING_INTERVAL_MS = 30_000;

/**
 * The connection to REDIS_URL. Commands never queue while Redis is away (no offline queue, no retry of a command):
 * they fail at once, and each use decides what that means; the connection itself is retried in the background.
 */
export async function connectRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: FIRST_CONNECTION_WAIT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
  });
  let warnedAtMs = Number.NEGATIVE_INFINITY;
  const away = (error: Error) => {
    if (performance.now() - warnedAtMs < WARNING_INTERVAL_MS) return;
    warnedAtMs = performance.now();
    // The message only: the URL, which can carry a password, is never logged.
    log.warn(
      { redisError: error.message },
      'Redis does not answer: rate limits are counted in this process alone',
    );
  };
  // A database number the Redis does not have (SELECT refused) would leave the connection on database 0, another
  // tenant's maybe: the connection is closed for good instead, and the limits are counted in each process.
  let wrongDatabase = false;
  redis.on('error', (error: Error) => {
    if (wrongDatabase) return;
    if (!/DB index is out of range/i.test(error?.message ?? '')) return away(error);
    wrongDatabase = true;
    log.error(
      { redisError: error.message },
      "REDIS_URL's database does not exist on that Redis: rate limits are counted in this process alone",
    );
    redis.disconnect(false);
  });
  // A Redis that stops answering on a connection that stays open (stopped, a network that drops packets) raises no
  // error: each command would wait out its timeout. The first that does drops the connection, so that the next
  // fail at once while the background connects again (it is ready once Redis answers its ready check).
  const sendCommand = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<typeof sendCommand>) => {
    const answer = sendCommand(...args) as Promise<unknown>;
    answer.catch((error: Error) => {
      if (error?.message !== 'Command timed out' || redis.status !== 'ready') return;
      away(error);
      redis.disconnect(true);
    });
    return answer;
  }) as typeof redis.sendCommand;
  redis.on('ready', () => {
    if (wrongDatabase) return;
    if (warnedAtMs !== Number.NEGATIVE_INFINITY)
      log.warn('Redis answers again: rate limits are shared again');
    warnedAtMs = Number.NEGATIVE_INFINITY;
  });
  const timer = new AbortController();
  const waited = setTimeout(() => timer.abort(), FIRST_CONNECTION_WAIT_MS);
  try {
    await once(redis, 'ready', { signal: timer.signal });
  } catch {
    // Not there yet: serve without it; the background reconnects.
  } finally {
    clearTimeout(waited);
  }
  return redis;
}
