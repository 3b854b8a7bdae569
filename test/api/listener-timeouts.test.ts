import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helpers/build-test-app.ts';

/** Far beyond the limits below: a connection still open by then was never going to be cut. */
const GIVE_UP_MS = 10_000;

interface Outcome {
  closed: boolean;
  received: string;
}

/**
 * Opens a connection, sends `partial` (a request that never completes) and waits for the server to close it, up to
 * GIVE_UP_MS. Returns whether it did, and what it sent before closing.
 */
function sendAndStall(port: number, partial: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ closed: false, received });
    }, GIVE_UP_MS);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closed: true, received });
    });
    socket.write(partial);
  });
}

function assertCutOff(outcome: Outcome, what: string) {
  assert.ok(outcome.closed, `${what}: the connection was still open after ${GIVE_UP_MS} ms`);
  // Node answers 408 when it can still write, after any answer given before the body was read (a 401 without a
  // token); a connection cut in the middle of a body may get nothing.
  if (outcome.received !== '') assert.match(outcome.received, /HTTP\/1\.1 408 /, what);
}

async function listening(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

const HALF_A_CARD = '{"first_name":"Edith","last_name":"Cla';

test('on every listener, a body that stops half way is cut off by the request timeout, unauthenticated too', async (t) => {
  const app = await buildTestApp(t, { EWA_REQUEST_TIMEOUT_MS: '600', EWA_HEADERS_TIMEOUT_MS: '300' });
  const ports = {
    api: await listening(app.api),
    auth: await listening(app.auth),
    payments: await listening(app.payments),
  };
  const halfBody = (path: string, type: string) =>
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: 400\r\n\r\n${HALF_A_CARD}`;
  const outcomes = await Promise.all([
    sendAndStall(ports.payments, halfBody('/v2/cards/generic', 'application/json')),
    sendAndStall(ports.api, halfBody('/cards/generic', 'application/json')),
    sendAndStall(ports.api, halfBody('/rest/transfers', 'application/vnd.api+json')),
    sendAndStall(ports.auth, halfBody('/oauth2/token', 'application/x-www-form-urlencoded')),
  ]);
  assertCutOff(outcomes[0]!, 'card tokenization on the payments listener');
  assertCutOff(outcomes[1]!, 'card tokenization on the API listener');
  assertCutOff(outcomes[2]!, 'POST /rest/transfers');
  assertCutOff(outcomes[3]!, 'the token endpoint');
});

test('on every listener, a client that closes its connection half way through a body is not logged as a failure of ours', async (t) => {
  const app = await buildTestApp(t);
  const ports = {
    api: await listening(app.api),
    auth: await listening(app.auth),
    payments: await listening(app.payments),
  };
  const sent = [
    [ports.payments, '/v2/cards/generic', 'application/json'],
    [ports.api, '/cards/generic', 'application/json'],
    [ports.api, '/rest/transfers', 'application/vnd.api+json'],
    [ports.auth, '/oauth2/token', 'application/x-www-form-urlencoded'],
  ] as const;
  await Promise.all(
    sent.map(
      ([port, path, type]) =>
        new Promise<void>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(
              `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: 400\r\n\r\n${HALF_A_CARD}`,
            );
            setTimeout(() => socket.destroy(), 100);
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve());
        }),
    ),
  );
  // The server learns of each close at once; its handlers have run well before this.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // Not an error (what production.md says to alert on), nor the warning of a database away.
  const raised = app.logs.filter((line) => (line.level as number) >= 40);
  assert.deepEqual(raised, []);
});

test('on every listener, headers that never end are cut off by the headers timeout', async (t) => {
  const app = await buildTestApp(t, { EWA_REQUEST_TIMEOUT_MS: '5000', EWA_HEADERS_TIMEOUT_MS: '300' });
  const halfHeaders = 'GET /rest/health HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n';
  const outcomes = await Promise.all(
    [app.api, app.auth, app.payments].map(async (listener) =>
      sendAndStall(await listening(listener), halfHeaders),
    ),
  );
  outcomes.forEach((outcome, i) => {
    assertCutOff(outcome, ['api', 'auth', 'payments'][i]!);
  });
});

test('a connection that sends nothing at all is closed after the connection timeout', async (t) => {
  const app = await buildTestApp(t, { EWA_CONNECTION_TIMEOUT_MS: '300' });
  const outcome = await sendAndStall(await listening(app.payments), '');
  assertCutOff(outcome, 'a silent connection');
});
