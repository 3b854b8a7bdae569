import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';

/** One POST the receiver got, with what verifying it said. */
export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  payload: { id: string; type: string; timestamp: string; data: Record<string, unknown> } & Record<
    string,
    unknown
  >;
  /** Verified with the `standardwebhooks` verifier and the secret the test gave it (see `secrets`). */
  verified: boolean;
  /** The status code it answered. */
  answered: number;
}

/**
 * A real webhook receiver on a local port: it verifies each delivery with the Standard Webhooks library against the
 * secrets it is given, answers what `answer` says (200 by default), and keeps every request. A `hold` keeps the
 * answer back until released (a receiver that is slow, or whose caller dies meanwhile).
 */
export async function startReceiver(t: TestContext) {
  const received: Received[] = [];
  const secrets: string[] = [];
  let answer: (request: Omit<Received, 'answered'>) => number = () => 200;
  const waiters: { when: (all: Received[]) => boolean; resolve: () => void }[] = [];
  let hold: ((request: Omit<Received, 'answered'>) => Promise<void>) | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers;
      const verified = secrets.some((secret) => {
        try {
          new Webhook(secret).verify(body, headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      const seen = { id: String(headers['webhook-id']), headers, body, payload: JSON.parse(body), verified };
      if (hold) await hold(seen);
      const status = answer(seen);
      received.push({ ...seen, answered: status });
      response.writeHead(status).end();
      for (const waiter of [...waiters])
        if (waiter.when(received)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    secrets,
    answerWith(next: (request: Omit<Received, 'answered'>) => number) {
      answer = next;
    },
    holdWith(next: ((request: Omit<Received, 'answered'>) => Promise<void>) | undefined) {
      hold = next;
    },
    /** Resolves once what was received satisfies `when`. */
    until(when: (all: Received[]) => boolean, timeoutMs = 20_000): Promise<void> {
      if (when(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `the receiver did not get what was awaited: ${received.map((r) => r.payload.type).join(', ')}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          when,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}
