import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import type { BenchWorker } from './money-fixture.ts';

/** The parts of autocannon's options this load uses beyond bench/autocannon.d.ts: several URLs, built requests. */
interface BuiltRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
interface LoadOptions {
  url: string[];
  connections: number;
  duration: number;
  requests: {
    method: string;
    path: string;
    setupRequest: (request: BuiltRequest) => BuiltRequest;
    onResponse: (status: number, body: string) => void;
  }[];
}
type Result = Awaited<ReturnType<typeof autocannon>>;
const run = autocannon as unknown as (options: LoadOptions) => Promise<Result>;

/** A real advance of the worker's earnings balance to their bank account, next business day (no fee). */
export function advanceBody(worker: BenchWorker, amountMinor: number): string {
  return JSON.stringify({
    data: {
      type: 'transfers',
      attributes: { amount: amountMinor, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY' },
      relationships: {
        origin: { data: { type: 'accounts', id: worker.balanceAccountId } },
        destination: { data: { type: 'accounts', id: worker.depositoryId } },
      },
    },
  });
}

export interface TransferLoad {
  result: Result;
  /** A few answers other than 2xx, to say why, when there are any. */
  refusals: string[];
}

/**
 * Real advances (not previews) against every URL at once: autocannon shares the connections among the URLs, so
 * N processes each get an equal part. Request i is worker i mod count's, with a fresh Idempotency-Key, so requests
 * spread over people and none is a replay.
 */
export function transferLoad(
  urls: readonly string[],
  workers: readonly BenchWorker[],
  tokens: readonly string[],
  options: { connections: number; seconds: number; amountMinor: number },
): Promise<TransferLoad> {
  const bodies = workers.map((worker) => advanceBody(worker, options.amountMinor));
  const authorizations = tokens.map((token) => `Bearer ${token}`);
  const refusals: string[] = [];
  let next = 0;
  return run({
    url: [...urls],
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: 'POST',
        path: '/rest/transfers',
        setupRequest(request) {
          const index = next++ % workers.length;
          return {
            ...request,
            method: 'POST',
            path: '/rest/transfers',
            headers: {
              authorization: authorizations[index]!,
              'content-type': 'application/vnd.api+json',
              'idempotency-key': randomUUID(),
            },
            body: bodies[index]!,
          };
        },
        onResponse(status, body) {
          if ((status < 200 || status > 299) && refusals.length < 5) refusals.push(`${status} ${body}`);
        },
      },
    ],
  }).then((result) => ({ result, refusals }));
}
