import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { AppError } from '../../src/errors/app-error.ts';
import { parseFilters } from '../../src/platform/filters.ts';
import { BASE_URL, buildTestApp } from '../helpers/build-test-app.ts';

const JSON_API = 'application/vnd.api+json';

const ProbeBody = Type.Object({
  data: Type.Object(
    {
      type: Type.Literal('probes'),
      attributes: Type.Object(
        { amount: Type.Integer({ minimum: 0 }), name: Type.String({ maxLength: 10 }) },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
});

/** The real app with probe routes, registered the way a resource registers its own. */
async function appWithProbes(t: Parameters<typeof buildTestApp>[0]) {
  return buildTestApp(t, { EWA_BODY_LIMIT_BYTES: '2048' }, async (app) => {
    app.post('/rest/probes', { schema: { body: ProbeBody }, config: { public: true } }, async (request) => ({
      data: request.body,
    }));
    app.post(
      '/rest/strict-probes',
      {
        schema: { body: ProbeBody },
        config: {
          public: true,
          schemaErrorCodes: { missing: 'MISSING_REQUIRED_FIELD', invalid: 'INVALID_FIELDS' },
        },
      },
      async (request) => ({ data: request.body }),
    );
    app.get(
      '/rest/probes',
      {
        config: { public: true },
        // A route names the filters it reads; any other query parameter is refused before it runs.
        schema: {
          querystring: Type.Object({
            include: Type.Optional(Type.String({ enum: ['things'] })),
            'filter[status]': Type.Optional(Type.String()),
          }),
        },
      },
      async (request) => ({
        data: parseFilters(request.query as Record<string, unknown>, {
          status: { type: { enum: ['OPEN'] } },
        }),
      }),
    );
    app.delete('/rest/probes/gone', { config: { public: true } }, async (_request, reply) =>
      reply.code(204).send(),
    );
    app.get('/rest/probes/boom', { config: { public: true } }, async () => {
      throw new Error('connection to postgres://admin:hunter2@db.internal failed');
    });
  });
}

function send(
  app: Awaited<ReturnType<typeof appWithProbes>>['api'],
  url: string,
  payload: string,
  type = JSON_API,
) {
  return app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } });
}

test('unknown paths answer 404 NOT_FOUND as a JSON:API error with the request id', async (t) => {
  const { api } = await appWithProbes(t);
  const response = await api.inject({ method: 'GET', url: '/rest/nothing-here' });
  assert.equal(response.statusCode, 404);
  assert.equal(response.headers['content-type'], JSON_API);
  const body = response.json();
  assert.equal(body.errors.length, 1);
  const [error] = body.errors;
  assert.equal(error.status, '404');
  assert.equal(error.code, 'NOT_FOUND');
  assert.equal(typeof error.detail, 'string');
  assert.equal(error.links.about, `${BASE_URL}/rest/errors#NOT_FOUND`);
  assert.equal(error.meta.request_id, response.headers['x-request-id']);
  assert.match(error.meta.request_id, /^req-\d{4}$/);
});

test('a known path with another method answers 405 with an Allow header', async (t) => {
  const { api } = await appWithProbes(t);
  const response = await api.inject({ method: 'DELETE', url: '/rest/health' });
  assert.equal(response.statusCode, 405);
  assert.equal(response.headers.allow, 'GET');
  assert.equal(response.json().errors[0].code, 'METHOD_NOT_ALLOWED');
});

test('Service-API-Version: absent or 3 is served, anything else is 400 INVALID_VERSION_HEADER', async (t) => {
  const { api } = await appWithProbes(t);
  assert.equal((await api.inject({ url: '/rest/probes' })).statusCode, 200);
  assert.equal(
    (await api.inject({ url: '/rest/probes', headers: { 'service-api-version': '3' } })).statusCode,
    200,
  );
  for (const version of ['2', '4', '3.0', 'v3', '']) {
    const response = await api.inject({ url: '/rest/probes', headers: { 'service-api-version': version } });
    if (version === '') continue; // an empty header is absent as far as HTTP goes
    assert.equal(response.statusCode, 400, version);
    const [error] = response.json().errors;
    assert.equal(error.code, 'INVALID_VERSION_HEADER');
    assert.deepEqual(error.source, { header: 'Service-API-Version' });
  }
  // The published description's name for it is <Name>-API-Version: any header of that form is read the same way,
  // and named as the client spelled it.
  assert.equal(
    (await api.inject({ url: '/rest/probes', headers: { 'Partner-API-Version': '3' } })).statusCode,
    200,
  );
  for (const headers of [{ 'Partner-API-Version': '4' }, { 'Partner-API-Version': 'abc' }]) {
    const response = await api.inject({ url: '/rest/probes', headers });
    assert.equal(response.statusCode, 400, JSON.stringify(headers));
    const [error] = response.json().errors;
    assert.equal(error.code, 'INVALID_VERSION_HEADER');
    // Named as sent (inject sends names in lower case; a socket keeps the client's case).
    assert.deepEqual(error.source, { header: 'partner-api-version' });
    assert.equal(
      error.detail,
      'The partner-api-version header names a version this server does not serve; use 3.',
    );
  }
  // Other headers that merely mention a version are not ours to judge.
  for (const header of ['X-Partner-API-Version', 'API-Version', 'Partner-API-Versions', 'X-API-Version'])
    assert.equal(
      (await api.inject({ url: '/rest/probes', headers: { [header]: '9' } })).statusCode,
      200,
      header,
    );
});

test('an Accept header that excludes the media type is 406 naming the header', async (t) => {
  const { api } = await appWithProbes(t);
  for (const accept of [
    'text/html',
    'application/xml, text/plain',
    `${JSON_API}; ext="bulk"`,
    'application/json;q=0',
  ]) {
    const response = await api.inject({ url: '/rest/nothing', headers: { accept } });
    assert.equal(response.statusCode, 406, accept);
    assert.equal(response.headers['content-type'], JSON_API);
    const [error] = response.json().errors;
    assert.equal(error.code, 'NOT_ACCEPTABLE');
    assert.deepEqual(error.source, { header: 'Accept' });
  }
  for (const accept of [
    '*/*',
    'application/*',
    JSON_API,
    `text/html, ${JSON_API};q=0.5`,
    // JSON:API 1.1: a profile is taken (this server applies none); an unsupported ext alone is not.
    `${JSON_API}; profile="https://example.com/p"`,
    `${JSON_API}; profile="https://example.com/a https://example.com/b"; q=0.9`,
    `${JSON_API}; ext="bulk", ${JSON_API}; profile="https://example.com/p"`,
  ]) {
    const response = await api.inject({ url: '/rest/probes', headers: { accept } });
    assert.equal(response.statusCode, 200, accept);
  }
});

test('request ids: a plain caller id is echoed, anything else is replaced', async (t) => {
  const { api } = await appWithProbes(t);
  const kept = await api.inject({ url: '/rest/probes', headers: { 'x-request-id': 'partner-trace-12345' } });
  assert.equal(kept.headers['x-request-id'], 'partner-trace-12345');
  const replaced = await api.inject({
    url: '/rest/nope',
    headers: { 'x-request-id': 'bad id\twith <html>' },
  });
  assert.match(String(replaced.headers['x-request-id']), /^req-\d{4}$/);
  assert.equal(replaced.json().errors[0].meta.request_id, replaced.headers['x-request-id']);
});

test('a W3C traceparent is carried into meta.trace_id', async (t) => {
  const { api } = await appWithProbes(t);
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const response = await api.inject({ url: '/rest/nope', headers: { traceparent } });
  assert.equal(response.json().errors[0].meta.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
});

test('the errors page lists every code with an anchor', async (t) => {
  const { api } = await appWithProbes(t);
  const response = await api.inject({ url: '/rest/errors', headers: { accept: 'text/html' } });
  assert.equal(response.statusCode, 200);
  assert.match(response.body, /id="INVALID_FILTER_FIELD"/);
  assert.match(response.body, /id="UNEXPECTED_ERROR"/);
});

test('filters: unknown field, bad value, unsupported operation and malformed keys', () => {
  const spec = {
    'person.id': { type: 'uuid' as const },
    status: { type: { enum: ['ESTIMATED', 'DEPOSITED'] } },
    deposit_expected_at: { type: 'date-time' as const, operators: ['gte', 'lt'] as const },
  };
  const codeOf = (query: Record<string, unknown>) => {
    try {
      parseFilters(query, spec);
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof AppError);
      return `${error.code} ${JSON.stringify(error.source)}`;
    }
  };
  assert.equal(
    codeOf({ 'filter[first_name]': 'x' }),
    'INVALID_FILTER_FIELD {"parameter":"filter[first_name]"}',
  );
  assert.equal(
    codeOf({ 'filter[person.id]': 'nope' }),
    'INVALID_FILTER_VALUE {"parameter":"filter[person.id]"}',
  );
  assert.equal(codeOf({ 'filter[status]': 'LOST' }), 'INVALID_FILTER_VALUE {"parameter":"filter[status]"}');
  assert.equal(
    codeOf({ 'filter[deposit_expected_at__gte]': 'yesterday' }),
    'INVALID_FILTER_VALUE {"parameter":"filter[deposit_expected_at__gte]"}',
  );
  assert.equal(
    codeOf({ 'filter[status__gt]': 'ESTIMATED' }),
    'INVALID_FIELD_OPERATION {"parameter":"filter[status__gt]"}',
  );
  assert.equal(codeOf({ 'filter[]': 'x' }), 'INVALID_FILTER_QUERY {"parameter":"filter[]"}');
  assert.equal(codeOf({ 'filter[status': 'x' }), 'INVALID_FILTER_QUERY {"parameter":"filter[status"}');
  assert.equal(
    codeOf({ 'filter[status]': ['ESTIMATED', 'DEPOSITED'] }),
    'INVALID_FILTER_QUERY {"parameter":"filter[status]"}',
  );
  const parsed = parseFilters(
    {
      'filter[person.id]': '3FA8F641-5717-4562-B3FC-2C963F66AFA6',
      'filter[deposit_expected_at__gte]': '2026-03-01T00:00:00-05:00',
      'filter[deposit_expected_at__lt]': '2026-04-01T00:00:00Z',
      include: 'ignored',
    },
    spec,
  );
  assert.deepEqual(parsed, [
    { field: 'person.id', operator: 'eq', value: '3fa8f641-5717-4562-b3fc-2c963f66afa6' },
    { field: 'deposit_expected_at', operator: 'gte', value: new Date('2026-03-01T05:00:00Z') },
    { field: 'deposit_expected_at', operator: 'lt', value: new Date('2026-04-01T00:00:00Z') },
  ]);
});

test('a body in another media type is 415 naming Content-Type; charset utf-8 is fine', async (t) => {
  const { api } = await appWithProbes(t);
  const body = JSON.stringify({ data: { type: 'probes', attributes: { amount: 1, name: 'a' } } });
  for (const type of [
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    `${JSON_API}; ext=bulk`,
    `${JSON_API}; profile="https://example.com/p"; ext="https://example.com/ext"`,
    `${JSON_API}; version=2`,
  ]) {
    const response = await send(api, '/rest/probes', body, type);
    assert.equal(response.statusCode, 415, type);
    const [error] = response.json().errors;
    assert.equal(error.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.deepEqual(error.source, { header: 'Content-Type' });
  }
  assert.equal((await send(api, '/rest/probes', body)).statusCode, 200);
  assert.equal((await send(api, '/rest/probes', body, `${JSON_API}; charset=utf-8`)).statusCode, 200);
  // JSON:API 1.1: a server must take the profile parameter (it may ignore the profiles).
  for (const type of [
    `${JSON_API}; profile="https://example.com/p"`,
    `${JSON_API};profile=https://example.com/p`,
  ]) {
    const response = await send(api, '/rest/probes', body, type);
    assert.equal(response.statusCode, 200, `${type}: ${response.body}`);
    assert.equal(response.headers['content-type'], JSON_API);
  }
});

test('a 204 answer has no body and no Content-Type', async (t) => {
  const { api } = await appWithProbes(t);
  const response = await api.inject({ method: 'DELETE', url: '/rest/probes/gone' });
  assert.equal(response.statusCode, 204);
  assert.equal(response.body, '');
  assert.equal(response.headers['content-type'], undefined);
  assert.ok(response.headers['x-request-id'], 'the other headers stay');
});

test('schema failures name the field: source.pointer for the body, source.parameter for the query', async (t) => {
  const { api } = await appWithProbes(t);
  const cases: [string, string, string][] = [
    [
      JSON.stringify({ data: { type: 'probes', attributes: { name: 'a' } } }),
      '/data/attributes/amount',
      'INVALID_PARAMETERS',
    ],
    [
      JSON.stringify({ data: { type: 'probes', attributes: { amount: '5', name: 'a' } } }),
      '/data/attributes/amount',
      'INVALID_PARAMETERS',
    ],
    [
      JSON.stringify({ data: { type: 'probes', attributes: { amount: 1.5, name: 'a' } } }),
      '/data/attributes/amount',
      'INVALID_PARAMETERS',
    ],
    [
      JSON.stringify({ data: { type: 'things', attributes: { amount: 1, name: 'a' } } }),
      '/data/type',
      'INVALID_PARAMETERS',
    ],
    [
      JSON.stringify({ data: { type: 'probes', attributes: { amount: 1, name: 'a', extra: 1 } } }),
      '/data/attributes/extra',
      'INVALID_PARAMETERS',
    ],
    [JSON.stringify({}), '/data', 'INVALID_PARAMETERS'],
  ];
  for (const [payload, pointer, code] of cases) {
    const response = await send(api, '/rest/probes', payload);
    assert.equal(response.statusCode, 400, payload);
    const [error] = response.json().errors;
    assert.equal(error.code, code, payload);
    assert.deepEqual(error.source, { pointer }, payload);
    assert.ok(error.detail.includes(pointer), error.detail);
  }
  const missing = await send(
    api,
    '/rest/strict-probes',
    JSON.stringify({ data: { type: 'probes', attributes: { amount: 1 } } }),
  );
  assert.equal(missing.json().errors[0].code, 'MISSING_REQUIRED_FIELD');
  assert.deepEqual(missing.json().errors[0].source, { pointer: '/data/attributes/name' });
  const invalid = await send(
    api,
    '/rest/strict-probes',
    JSON.stringify({ data: { type: 'probes', attributes: { amount: -1, name: 'a' } } }),
  );
  assert.equal(invalid.json().errors[0].code, 'INVALID_FIELDS');
  const query = await api.inject({ url: '/rest/probes?include=nothing' });
  assert.equal(query.statusCode, 400);
  assert.equal(query.json().errors[0].code, 'INVALID_PARAMETERS');
  assert.deepEqual(query.json().errors[0].source, { parameter: 'include' });
});

test('malformed JSON, an empty body and an oversized body are clear 4xx errors', async (t) => {
  const { api } = await appWithProbes(t);
  const malformed = await send(api, '/rest/probes', '{"data": {');
  assert.equal(malformed.statusCode, 400);
  assert.equal(malformed.json().errors[0].code, 'INVALID_USER_INPUT');
  const empty = await api.inject({
    method: 'POST',
    url: '/rest/probes',
    headers: { 'content-type': JSON_API },
  });
  assert.equal(empty.statusCode, 400);
  const large = await send(api, '/rest/probes', JSON.stringify({ pad: 'x'.repeat(4096) }));
  assert.equal(large.statusCode, 413);
  assert.equal(large.json().errors[0].code, 'PAYLOAD_TOO_LARGE');
});

test('filters over HTTP: INVALID_FILTER_FIELD and INVALID_FILTER_VALUE with source.parameter', async (t) => {
  const { api } = await appWithProbes(t);
  const field = await api.inject({ url: '/rest/probes?filter[owner]=me' });
  assert.equal(field.statusCode, 400);
  assert.equal(field.json().errors[0].code, 'INVALID_FILTER_FIELD');
  assert.deepEqual(field.json().errors[0].source, { parameter: 'filter[owner]' });
  const value = await api.inject({ url: '/rest/probes?filter%5Bstatus%5D=SHUT' });
  assert.equal(value.json().errors[0].code, 'INVALID_FILTER_VALUE');
  const ok = await api.inject({ url: '/rest/probes?filter[status]=OPEN' });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json().data, [{ field: 'status', operator: 'eq', value: 'OPEN' }]);
});

test('an unexpected error is 500 UNEXPECTED_ERROR, logged, with nothing internal in the response', async (t) => {
  const { api, logs } = await appWithProbes(t);
  const response = await api.inject({ url: '/rest/probes/boom' });
  assert.equal(response.statusCode, 500);
  const [error] = response.json().errors;
  assert.equal(error.code, 'UNEXPECTED_ERROR');
  assert.doesNotMatch(response.body, /hunter2|postgres|stack|Error:/);
  assert.ok(logs.some((line) => line.level === 50 && JSON.stringify(line).includes('hunter2')));
});
