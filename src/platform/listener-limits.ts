import type { Server } from 'node:http';
import type { FastifyHttpOptions } from 'fastify';
import type { HttpLimits } from '../config.ts';

/**
 * The time limits of a listener (Fastify's and node's), so that a client that sends its headers or its body slowly,
 * or sends nothing, cannot hold a connection: past `requestTimeoutMs` an incomplete request is answered 408 and its
 * connection closed, and a silent connection is closed after `connectionTimeoutMs`. Node looks for late requests
 * every `connectionsCheckingInterval`; a quarter of the shortest limit keeps each one within a quarter of itself.
 */
export function listenerLimits(limits: HttpLimits): Partial<FastifyHttpOptions<Server>> {
  const checkEveryMs = Math.max(
    10,
    Math.min(30_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
  );
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: checkEveryMs,
    },
  };
}
