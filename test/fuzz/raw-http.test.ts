import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { buildListeningApp } from '../helpers/listening-app.ts';
import { createTestPerson, userToken } from '../helpers/tokens.ts';
import type { Answer, Shape } from './answer-shapes.ts';
import { DatabaseWatch } from './database-fingerprint.ts';
import { exchangeChecked } from './fuzz-request.ts';
import { selected } from './fuzz-settings.ts';
import { rawRequest } from './raw-http.ts';

/**
 * What `inject` cannot send, over real sockets to the three listeners: absolute-form request targets,
 * conflicting Content-Length and Transfer-Encoding, headers over 16 KB, bytes the HTTP parser refuses, bad
 * percent-encodings in the raw path. Each answer has the same properties as every fuzzed answer (no 5xx,
 * within the bound, the documented shape of where the request was going, nothing changed in the database),
 * and a request target spelled another way answers what the plain one answers.
 */

type Listener = 'api' | 'auth' | 'payments';

interface RawCase {
  name: string;
  listener: Listener;
  shape: Shape;
  /** The request as bytes (latin1), given the listener's `host:port` and a user token. */
  bytes(host: string, token: string): string;
}

const request = (head: string[], body = '') => `${head.join('\r\n')}\r\n\r\n${body}`;
const CHUNKED_TRANSFER = '{"data":{}}';

/** Framing that request smugglers use: both Content-Length and Transfer-Encoding, or two lengths. */
function framingCases(listener: Listener, shape: Shape, path: string, contentType: string): RawCase[] {
  return [
    {
      name: `${listener} ${path}: Content-Length and Transfer-Encoding both`,
      listener,
      shape,
      bytes: (host, token) =>
        request(
          [
            `POST ${path} HTTP/1.1`,
            `Host: ${host}`,
            `Authorization: Bearer ${token}`,
            `Content-Type: ${contentType}`,
            'Content-Length: 5',
            'Transfer-Encoding: chunked',
            'Connection: close',
          ],
          `${CHUNKED_TRANSFER.length.toString(16)}\r\n${CHUNKED_TRANSFER}\r\n0\r\n\r\n`,
        ),
    },
    {
      name: `${listener} ${path}: two different Content-Length`,
      listener,
      shape,
      bytes: (host, token) =>
        request(
          [
            `POST ${path} HTTP/1.1`,
            `Host: ${host}`,
            `Authorization: Bearer ${token}`,
            `Content-Type: ${contentType}`,
            'Content-Length: 11',
            'Content-Length: 12',
            'Connection: close',
          ],
          CHUNKED_TRANSFER,
        ),
    },
    {
      name: `${listener} ${path}: a header over 16 KB`,
      listener,
      shape,
      bytes: (host, token) =>
        request([
          `POST ${path} HTTP/1.1`,
          `Host: ${host}`,
          `Authorization: Bearer ${token}`,
          `X-Fill: ${'a'.repeat(17_000)}`,
          'Content-Length: 0',
          'Connection: close',
        ]),
    },
    {
      name: `${listener} ${path}: a chunk size that is not hexadecimal`,
      listener,
      shape,
      bytes: (host, token) =>
        request(
          [
            `POST ${path} HTTP/1.1`,
            `Host: ${host}`,
            `Authorization: Bearer ${token}`,
            `Content-Type: ${contentType}`,
            'Transfer-Encoding: chunked',
            'Connection: close',
          ],
          'zz\r\n{}\r\n0\r\n\r\n',
        ),
    },
  ];
}

/** Request targets the HTTP parser or the router refuses. */
function targetCases(listener: Listener, shape: Shape, prefix: string): RawCase[] {
  const get = (name: string, target: string): RawCase => ({
    name: `${listener} ${prefix}: ${name}`,
    listener,
    shape,
    bytes: (host, token) =>
      request([
        `GET ${target} HTTP/1.1`,
        `Host: ${host}`,
        `Authorization: Bearer ${token}`,
        'Connection: close',
      ]),
  });
  return [
    get('bad percent-encoding in the raw path', `${prefix}/%zz`),
    get('an encoded lone surrogate in the raw path', `${prefix}/%ED%A0%80`),
    get('a NUL byte in the raw path', `${prefix}/a\u0000b`),
    get('byte 0xFF in the raw path', `${prefix}/\u00ff`),
    get('an id over 100 characters', `${prefix}/${'a'.repeat(101)}`),
    get('a space inside the request target', `${prefix}/a b`),
    {
      name: `${listener} ${prefix}: a folded header line (obs-fold)`,
      listener,
      shape,
      bytes: (host, token) =>
        request([
          `GET ${prefix}/x HTTP/1.1`,
          `Host: ${host}`,
          `Authorization: Bearer ${token}`,
          'X-A: b',
          ' c',
          'Connection: close',
        ]),
    },
  ];
}

/** An expectation the server does not know: answered as the request without it would be, not Node's bare 417. */
function expectationCase(listener: Listener, shape: Shape, method: string, path: string): RawCase {
  return {
    name: `${listener} ${method} ${path}: an unknown expectation (Expect: something-else)`,
    listener,
    shape,
    bytes: (host, token) =>
      request([
        `${method} ${path} HTTP/1.1`,
        `Host: ${host}`,
        `Authorization: Bearer ${token}`,
        'Expect: something-else',
        'Content-Length: 0',
        'Connection: close',
      ]),
  };
}

const CASES: RawCase[] = [
  expectationCase('api', 'json-api', 'GET', '/rest/accounts'),
  expectationCase('auth', 'oauth-json', 'POST', '/oauth2/token'),
  expectationCase('payments', 'card-error', 'POST', '/v2/cards/generic'),
  ...framingCases('api', 'json-api', '/rest/transfers', 'application/vnd.api+json'),
  ...framingCases('api', 'json-api', '/admin/organizations', 'application/vnd.api+json'),
  ...targetCases('api', 'json-api', '/rest/accounts'),
  ...targetCases('api', 'json-api', '/admin/organizations'),
  ...framingCases('auth', 'oauth-json', '/oauth2/token', 'application/x-www-form-urlencoded'),
  ...framingCases('auth', 'html', '/interaction/fuzz/login', 'application/x-www-form-urlencoded'),
  ...targetCases('auth', 'html', '/interaction'),
  ...framingCases('payments', 'card-error', '/v2/cards/generic', 'application/json'),
];

/**
 * The same request with its target spelled another way: it reaches the same route, so it gets the same
 * answer.
 */
const SPELLINGS: { name: string; target: (host: string) => string }[] = [
  { name: 'absolute-form target', target: (host) => `http://${host}/rest/transfers` },
  { name: 'absolute-form target naming another host', target: () => 'http://other.example/rest/transfers' },
  { name: 'a percent-encoded letter (/%72est)', target: () => '/%72est/transfers' },
  { name: 'absolute-form and a percent-encoded letter', target: (host) => `http://${host}/%72est/transfers` },
];

test('fuzz: raw HTTP on every listener', async (t) => {
  const app = await buildListeningApp(t);
  await app.payments.listen({ port: 0, host: '127.0.0.1' });
  const paymentsPort = (app.payments.server.address() as AddressInfo).port;
  const hosts: Record<Listener, string> = {
    api: new URL(app.apiUrl).host,
    auth: new URL(app.authUrl).host,
    payments: `127.0.0.1:${paymentsPort}`,
  };
  const token = await userToken(app, await createTestPerson(app), ['user:read', 'user:read_write']);
  const watch = new DatabaseWatch(app.database.db);
  const send = (listener: Listener, bytes: string) =>
    rawRequest(Number(hosts[listener].split(':')[1]), bytes);
  const describe = (bytes: string) => {
    const printable = JSON.stringify(bytes).slice(1, -1);
    return printable.length > 500 ? `${printable.slice(0, 500)}… (${bytes.length} bytes)` : printable;
  };

  for (const c of CASES) {
    const name = `raw ${c.name}`;
    if (!selected(name)) continue;
    await t.test(name, async () => {
      const bytes = c.bytes(hosts[c.listener], token);
      await exchangeChecked(watch, describe(bytes), () => send(c.listener, bytes), c.shape, name);
    });
  }

  // Negotiation and the version header belong to the route, whatever spelling of its URL reached it (defect
  // 7).
  const refusals: Record<string, string[]> = {
    'Accept: text/html': ['Accept: text/html'],
    'Service-API-Version: 2': ['Service-API-Version: 2'],
  };
  for (const spelling of SPELLINGS) {
    for (const [refusal, headers] of Object.entries(refusals)) {
      const name = `raw ${spelling.name}, ${refusal}`;
      if (!selected(name)) continue;
      await t.test(name, async () => {
        const head = (target: string) =>
          request([
            `GET ${target} HTTP/1.1`,
            `Host: ${hosts.api}`,
            `Authorization: Bearer ${token}`,
            ...headers,
            'Connection: close',
          ]);
        const plain = head('/rest/transfers');
        const respelled = head(spelling.target(hosts.api));
        const expected: Answer = await exchangeChecked(
          watch,
          describe(plain),
          () => send('api', plain),
          'json-api',
          name,
        );
        const answer = await exchangeChecked(
          watch,
          describe(respelled),
          () => send('api', respelled),
          'json-api',
          name,
        );
        assert.equal(
          answer.status,
          expected.status,
          `${describe(respelled)}\n→ ${answer.status} ${answer.body.slice(0, 300)}\nbut /rest/transfers → ${expected.status}`,
        );
      });
    }
  }
});
