import { createRequire } from 'node:module';
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RateLimitDecision } from './rate-limit.ts';

/** The two limits of card tokenization, as they are named in Redis. */
export type CardLimitName = 'card-client' | 'card';

/**
 * Counts one attempt of `key` against a limit in the store every process shares; rejects when that store does
 * not answer (the caller then counts in its own process).
 */
export type SharedCount = (
  request: FastifyRequest,
  limit: CardLimitName,
  key: string,
) => Promise<RateLimitDecision>;

export interface SharedLimitsOptions {
  redis: Redis;
  windowMs: number;
  maxOf: Record<CardLimitName, number>;
}

/** Keys in Redis start with this, so that an operator can tell ours from other data of the same Redis. */
export const RATE_LIMIT_NAMESPACE = 'ewa:rate-limit:';

/**
 * The card limits counted in Redis by @fastify/rate-limit's Redis store (one Lua script per attempt: INCR, and
 * PEXPIRE on the first), so that every process and host counts against one window per key. Registered on each
 * listener that serves card tokenization; the keys carry no listener, so both paths count together.
 */
export async function sharedCardLimits(
  app: FastifyInstance,
  options: SharedLimitsOptions,
): Promise<SharedCount> {
  await app.register(rateLimit, {
    global: false,
    store: keysUnderNamespace(options.redis),
    // A Redis error reaches the caller, which falls back to the process's own count rather than to no limit.
    skipOnError: false,
  });
  const keys = new WeakMap<FastifyRequest, string>();
  const limiter = (limit: CardLimitName) =>
    app.createRateLimit({
      max: options.maxOf[limit],
      timeWindow: options.windowMs,
      keyGenerator: (request) => `${limit}:${keys.get(request)}`,
    });
  const limiters = { 'card-client': limiter('card-client'), card: limiter('card') };
  return async (request, limit, key) => {
    keys.set(request, key);
    const result = await limiters[limit](request);
    if (result.isAllowed || !result.isExceeded) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, result.ttlInSeconds) };
  };
}

type RedisStoreCtor = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore;

/** The plugin's own Redis store (one Lua script per attempt); its module is not among the package's types. */
const RedisStore = createRequire(import.meta.url)(
  '@fastify/rate-limit/store/RedisStore.js',
) as RedisStoreCtor;

/**
 * The plugin's Redis store, with every key `ewa:rate-limit:<limit>:<key>`. Its own store gives a limiter made by
 * createRateLimit a child whose keys add the route's method and URL, which such a limiter has not: every key read
 * `ewa:rate-limit:undefinedundefined-…`.
 */
function keysUnderNamespace(redis: Redis): FastifyRateLimitStoreCtor {
  return class {
    readonly #store = new RedisStore(false, false, redis, RATE_LIMIT_NAMESPACE);
    incr(...args: Parameters<FastifyRateLimitStore['incr']>): void {
      this.#store.incr(...args);
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
