import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { createOrganization, createWorker, workerToken } from '../helpers/factories.ts';

interface RawAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are on a new connection and reads one answer (the server closes, or the body is whole). */
async function rawExchange(port: number, request: string): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  // The server may close while a large request is still being written; what it answered is still read.
  socket.on('error', () => {});
  socket.write(request);
  await new Promise((resolve) => socket.once('close', resolve));
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { statusCode: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

const JSON_API = 'application/vnd.api+json';

test('a path that is not valid percent-encoding is a 400 error document on every path of both listeners', async (t) => {
  const app = await buildTestApp(t);
  for (const url of [
    '/rest/accounts/%E0%A4%A',
    '/rest/%ZZ',
    '/admin/organizations/%C0%80',
    '/%FF',
    '/rest/jobs/%',
  ]) {
    const response = await app.api.inject({ url });
    assertErrorAnswer(response, 400, 'INVALID_USER_INPUT');
    assert.equal(response.headers['x-request-id'], JSON.parse(response.body).errors[0].meta.request_id);
  }
  const card = await app.payments.inject({ method: 'POST', url: '/v2/cards/%E0%A4%A' });
  assertErrorAnswer(card, 400, 'INVALID_USER_INPUT', { mediaType: 'application/json' });
  // The caller's request id is kept here too, and the refusal has its access line.
  const kept = await app.api.inject({ url: '/rest/%ZZ', headers: { 'x-request-id': 'partner-req-0001' } });
  assert.equal(kept.headers['x-request-id'], 'partner-req-0001');
  const line = app.logs.find(
    (entry) => entry.request_id === 'partner-req-0001' && entry.msg === 'request completed',
  );
  assert.equal(line?.status, 400);
});

test('a path id of any length reaches its route and is not found there, as any id that is not a UUID', async (t) => {
  const app = await buildTestApp(t);
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const token = await workerToken(app, worker.personId);
  for (const length of [64, 65, 101, 1_000, 8_000]) {
    const response = await app.api.inject({
      url: `/rest/accounts/${'a'.repeat(length)}`,
      headers: { authorization: `Bearer ${token}` },
    });
    const { detail } = assertErrorAnswer(response, 404, 'RECORD_NOT_FOUND');
    // The id is shown whole when it is id-sized, cut short when it is not.
    assert.equal(detail, `No account ${'a'.repeat(64)}${length > 64 ? '…' : ''} is visible to this token.`);
    const admin = await app.api.inject({ url: `/admin/organizations/${'b'.repeat(length)}/jobs` });
    assert.ok(admin.statusCode >= 400 && admin.statusCode < 500, admin.body);
    assert.equal(admin.headers['content-type'], JSON_API);
  }
});

test("what Node's HTTP parser refuses is an error document with a request id, and the connection closes", async (t) => {
  const app = await buildTestApp(t);
  const apiPort = await listen(app.api);
  const paymentsPort = await listen(app.payments);
  for (const [port, path, mediaType] of [
    [apiPort, '/rest/health', JSON_API],
    [apiPort, '/admin/organizations', JSON_API],
    [paymentsPort, '/v2/cards/generic', 'application/json'],
  ] as const) {
    const large = await rawExchange(
      port,
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assertErrorAnswer(large, 431, 'REQUEST_HEADERS_TOO_LARGE', { mediaType });
    assert.equal(large.headers.connection, 'close');

    const smuggled = await rawExchange(
      port,
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    assertErrorAnswer(smuggled, 400, 'INVALID_USER_INPUT', { mediaType });
    assert.equal(smuggled.headers.connection, 'close');

    const garbage = await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n');
    assertErrorAnswer(garbage, 400, 'INVALID_USER_INPUT', { mediaType });
  }
  // Each refusal has a log line with its request id, so that a caller's report can be found.
  const refusals = app.logs.filter((entry) => entry.msg === 'request refused by the HTTP parser');
  assert.equal(refusals.length, 9);
  assert.ok(refusals.every((entry) => typeof entry.request_id === 'string'));
});

test('two Host headers, none on HTTP/1.1, or a Host that is not one host: a 400 in the shape of each listener, and the connection closes', async (t) => {
  const app = await buildTestApp(t);
  const [apiPort, paymentsPort, authPort] = [
    await listen(app.api),
    await listen(app.payments),
    await listen(app.auth),
  ];
  const twoHosts = (method: string, path: string, extra = '') =>
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nhost: elsewhere.example\r\n${extra}Connection: close\r\n\r\n`;
  const api = await rawExchange(apiPort, twoHosts('GET', '/rest/health'));
  assertErrorAnswer(api, 400, 'INVALID_USER_INPUT', { mediaType: JSON_API });
  const detail = JSON.parse(api.body).errors[0];
  assert.equal(detail.detail, 'Send one Host header: this request has more than one.');
  assert.deepEqual(detail.source, { header: 'Host' });
  const card = await rawExchange(
    paymentsPort,
    twoHosts('POST', '/v2/cards/generic', 'Content-Type: application/json\r\nContent-Length: 2\r\n').replace(
      /\r\n\r\n$/,
      '\r\n\r\n{}',
    ),
  );
  assertErrorAnswer(card, 400, 'INVALID_USER_INPUT', { mediaType: 'application/json' });
  const discovery = await rawExchange(authPort, twoHosts('GET', '/.well-known/openid-configuration'));
  assert.equal(discovery.statusCode, 400, discovery.body);

  const one = await rawExchange(
    authPort,
    'GET /.well-known/openid-configuration HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  );
  assert.equal(one.statusCode, 200);

  // The probes and paths served by nothing answer in their listener's shape too.
  const cardProbe = await rawExchange(paymentsPort, twoHosts('GET', '/livez'));
  assertErrorAnswer(cardProbe, 400, 'INVALID_USER_INPUT', { mediaType: 'application/json' });
  for (const path of ['/livez', '/nothing-here']) {
    const authAnswer = await rawExchange(authPort, twoHosts('GET', path));
    assert.equal(authAnswer.statusCode, 400, authAnswer.body);
    assert.deepEqual(JSON.parse(authAnswer.body), {
      error: 'invalid_request',
      error_code: 'invalid_request',
      error_description: 'Send one Host header: this request has more than one.',
    });
  }

  // On a connection kept alive, the refusal closes it: what follows could be read otherwise by a proxy.
  const keptAlive = await rawExchange(
    apiPort,
    'GET /livez HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\nGET /livez HTTP/1.1\r\nHost: a\r\n\r\n',
  );
  assert.equal(keptAlive.statusCode, 400);
  assert.equal(keptAlive.headers.connection, 'close');
  assert.doesNotMatch(keptAlive.body, /HTTP\/1\.1 200/);

  for (const [request, detail] of [
    ['GET /livez HTTP/1.1\r\nConnection: close\r\n\r\n', 'Send a Host header: HTTP/1.1 requires one.'],
    [
      'GET http://localhost/livez HTTP/1.1\r\nConnection: close\r\n\r\n',
      'Send a Host header: HTTP/1.1 requires one.',
    ],
    [
      'GET /livez HTTP/1.1\r\nHost: a, b\r\nConnection: close\r\n\r\n',
      'The Host header must name one host (and port), nothing else.',
    ],
  ]) {
    const answer = await rawExchange(apiPort, request!);
    const error = assertErrorAnswer(answer, 400, 'INVALID_USER_INPUT', { mediaType: JSON_API });
    assert.equal(error.detail, detail);
  }
  // HTTP/1.0 has no Host; an IPv6 address with a port is one host.
  assert.equal((await rawExchange(apiPort, 'GET /livez HTTP/1.0\r\n\r\n')).statusCode, 200);
  assert.equal(
    (await rawExchange(apiPort, 'GET /livez HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n'))
      .statusCode,
    200,
  );
});

test('CONNECT is a 405 in the shape of each listener, and the connection closes', async (t) => {
  const app = await buildTestApp(t);
  const connect = 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n';
  for (const [listener, mediaType] of [
    [app.api, JSON_API],
    [app.payments, 'application/json'],
  ] as const) {
    const answer = await rawExchange(await listen(listener), connect);
    assertErrorAnswer(answer, 405, 'METHOD_NOT_ALLOWED', { mediaType });
    assert.equal(answer.headers.allow, '', 'a tunnel target allows no method');
    assert.equal(answer.headers.connection, 'close');
  }
  // A request pipelined before the CONNECT is answered first.
  const pipelined = await rawExchange(
    (app.api.server.address() as AddressInfo).port,
    `GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n${connect}`,
  );
  assert.equal(pipelined.statusCode, 200, pipelined.body);
  assert.match(pipelined.body, /HTTP\/1\.1 405 Method Not Allowed/);
  const auth = await rawExchange(await listen(app.auth), connect);
  assert.equal(auth.statusCode, 405, auth.body);
  assert.match(JSON.parse(auth.body).error_description, /CONNECT is not served here/);
});

test('a request not received in time is a 408 error document', async (t) => {
  const app = await buildTestApp(t);
  const port = await listen(app.api);
  const accepted: Socket[] = [];
  app.api.server.on('connection', (socket: Socket) => accepted.push(socket));
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  socket.write('GET /rest/health HTTP/1.1\r\nHost: localhost\r\n');
  while (accepted.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  // Node raises this when the listener's request timeout passes with the request unfinished; raised here at once.
  const timeout = Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
  app.api.server.emit('clientError', timeout, accepted[0]);
  await new Promise((resolve) => socket.once('close', resolve));
  const text = Buffer.concat(chunks).toString('utf8');
  assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.match(text, /\r\nX-Request-Id: req-\d+\r\n/);
  const body = JSON.parse(text.split('\r\n\r\n')[1]!);
  assert.equal(body.errors[0].code, 'REQUEST_TIMEOUT');
});

test('an absolute-form request target gets the negotiation and version check of its route', async (t) => {
  const app = await buildTestApp(t);
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const token = await workerToken(app, worker.personId);
  const port = await listen(app.api);
  const request = (headers: string) =>
    rawExchange(
      port,
      `GET http://localhost:${port}/rest/transfers HTTP/1.1\r\nHost: localhost:${port}\r\n` +
        `Authorization: Bearer ${token}\r\nConnection: close\r\n${headers}\r\n`,
    );
  const ok = await request('');
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.headers['content-type'], JSON_API);
  assertErrorAnswer(await request('Accept: text/html\r\n'), 406, 'NOT_ACCEPTABLE', {
    source: { header: 'Accept' },
  });
  assertErrorAnswer(await request('Service-API-Version: 2\r\n'), 400, 'INVALID_VERSION_HEADER', {
    source: { header: 'Service-API-Version' },
  });
  const missing = await rawExchange(
    port,
    `PUT http://localhost:${port}/rest/transfers HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
  );
  assertErrorAnswer(missing, 405, 'METHOD_NOT_ALLOWED');
  assert.match(JSON.parse(missing.body).errors[0].detail, /^\/rest\/transfers accepts/);
});

test('a 500 is logged at error level with its request id and its cause; so is an error after the response', async (t) => {
  const app = await buildTestApp(t, {}, async (api) => {
    api.get('/rest/test/fails', { config: { public: true } }, async () => {
      throw new Error('the cause of the failure', { cause: new Error('connection refused by the database') });
    });
    api.get(
      '/rest/test/fails-after',
      {
        config: { public: true },
        onResponse: async () => Promise.reject(new Error('an onResponse hook failed')),
      },
      async () => ({ data: [] }),
    );
  });
  const response = await app.api.inject({
    url: '/rest/test/fails',
    headers: { 'x-request-id': 'forced-500-0001' },
  });
  assertErrorAnswer(response, 500, 'UNEXPECTED_ERROR');
  assert.ok(!response.body.includes('cause'), 'the cause is not shown to the caller');
  const errorLine = app.logs.find((entry) => entry.level === 50 && entry.request_id === 'forced-500-0001');
  assert.ok(errorLine, 'no error line for the 500');
  const err = errorLine.err as { message: string; stack: string };
  assert.match(err.message, /the cause of the failure/);
  assert.match(err.message, /connection refused by the database/);

  await app.api.inject({ url: '/rest/test/fails-after', headers: { 'x-request-id': 'after-0001' } });
  await new Promise((resolve) => setImmediate(resolve));
  const afterLine = app.logs.find((entry) => entry.level === 50 && entry.request_id === 'after-0001');
  assert.ok(afterLine, 'an error after the response left no line');
  assert.match((afterLine.err as { message: string }).message, /an onResponse hook failed/);
});
