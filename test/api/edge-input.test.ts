import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { textProblem } from '../../src/domain/input-text.ts';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import {
  bankAccountBody,
  createOrganization,
  createWorker,
  restClient,
  workerToken,
} from '../helpers/factories.ts';
import { operatorClient } from '../helpers/operator.ts';

/** Every request of these tests meets the edge of a listener; a worker with a token is enough to reach the routes. */
async function setUp(t: Parameters<typeof buildTestApp>[0]) {
  // Many card requests come from one test address: the per-address limit is not what these tests are about.
  const app = await buildTestApp(t, { EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '100000' });
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const token = await workerToken(app, worker.personId);
  return { app, worker, token, rest: restClient(app, token) };
}

/** Rows of the tables a refused write could have touched. */
async function tableCounts(app: TestApp): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['accounts', 'people', 'jobs', 'transfers']) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(
      app.database.db,
    );
    counts[table] = rows[0]!.n;
  }
  return counts;
}

const CARD = {
  first_name: 'Edith',
  last_name: 'Clarke',
  card_number: '4111111111111111',
  expiration_year: '2031',
  expiration_month: '02',
  address_line_one: '123 Kebly Street',
  address_city: 'Fort Lee',
  address_state: 'NJ',
  address_zip_code: '07237',
  address_country: 'US',
};

test('filter names that are names of Object.prototype are unknown fields (400), not a 500', async (t) => {
  const { worker, rest } = await setUp(t);
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    for (const list of [
      '/rest/transfers?',
      '/rest/paychecks?',
      `/rest/accounts?filter[person.id]=${worker.personId}&`,
    ]) {
      for (const key of [`filter[${name}]`, `filter[${name}__gt]`]) {
        const response = await rest.get(`${list}${encodeURIComponent(key)}=1`);
        assertErrorAnswer(response, 400, 'INVALID_FILTER_FIELD', { source: { parameter: key } });
      }
    }
    const freeForm = await rest.get(`/rest/transfers?filter=${encodeURIComponent(`${name}:"x"`)}`);
    assertErrorAnswer(freeForm, 400, 'INVALID_FILTER_FIELD', { source: { parameter: 'filter' } });
  }
});

test('a query parameter the operation does not know is refused by name, not ignored', async (t) => {
  const { worker, rest } = await setUp(t);
  for (const [url, name] of [
    ['/rest/transfers?sort=-amount', 'sort'],
    ['/rest/paychecks?fields[paychecks]=status', 'fields[paychecks]'],
    [`/rest/accounts?filter[person.id]=${worker.personId}&__proto__=1`, '__proto__'],
    ['/rest/jobs?page[number]=2', 'page[number]'],
  ] as const) {
    const response = await rest.get(url);
    assertErrorAnswer(response, 400, 'INVALID_PARAMETERS', { source: { parameter: name } });
    assert.equal(response.json().errors[0].detail, `Parameter ${name} is not a known field.`);
  }
  // What the operations name still works, and an unknown filter field is still named by the operation.
  assert.equal(
    (await rest.get('/rest/transfers?include=final_funding_sources&page[size]=5')).statusCode,
    200,
  );
  assertErrorAnswer(await rest.get('/rest/transfers?filter[color]=blue'), 400, 'INVALID_FILTER_FIELD', {
    source: { parameter: 'filter[color]' },
  });
});

test('a query parameter given twice is refused naming it: a filter as INVALID_FILTER_QUERY, others INVALID_PARAMETERS', async (t) => {
  const { app, rest } = await setUp(t);
  for (const [url, code, name] of [
    [
      '/rest/paychecks?filter[status]=DEPOSITED&filter[status]=ESTIMATED',
      'INVALID_FILTER_QUERY',
      'filter[status]',
    ],
    [
      '/rest/transfers?filter[submitted_at__gt]=2026-01-01T00:00:00Z&filter[submitted_at__gt]=2026-02-01T00:00:00Z',
      'INVALID_FILTER_QUERY',
      'filter[submitted_at__gt]',
    ],
    ['/rest/transfers?filter=status:"PENDING"&filter=status:"SETTLED"', 'INVALID_FILTER_QUERY', 'filter'],
    ['/rest/transfers?page[size]=1&page[size]=2', 'INVALID_PARAMETERS', 'page[size]'],
    [
      '/rest/transfers?include=final_funding_sources&include=final_funding_sources',
      'INVALID_PARAMETERS',
      'include',
    ],
  ] as const) {
    const response = await rest.get(url);
    const error = assertErrorAnswer(response, 400, code, { source: { parameter: name } });
    assert.equal(error.detail, `${name} may be given only once.`, url);
  }
  const { call } = await operatorClient(app);
  const operator = await call('GET', '/admin/organizations?page[size]=1&page[size]=2');
  assertErrorAnswer(operator, 400, 'INVALID_PARAMETERS', { source: { parameter: 'page[size]' } });
});

test('a request without a body is not parsed whatever its Content-Type; an operation that takes a body says it is empty', async (t) => {
  const { app, worker, token, rest } = await setUp(t);
  const authorization = `Bearer ${token}`;
  for (const type of ['application/vnd.api+json', 'application/json', 'text/plain']) {
    const created = await rest.post('/rest/accounts', bankAccountBody(worker.personId));
    assert.equal(created.statusCode, 200, created.body);
    const deleted = await app.api.inject({
      method: 'DELETE',
      url: `/rest/accounts/${created.json().data.id}`,
      headers: { authorization, 'content-type': type },
    });
    assert.equal(deleted.statusCode, 204, `${type}: ${deleted.body}`);
    assert.equal(
      (await app.api.inject({ url: '/rest/jobs', headers: { authorization, 'content-type': type } }))
        .statusCode,
      200,
      type,
    );
  }
  const before = await tableCounts(app);
  const empty = await app.api.inject({
    method: 'POST',
    url: '/rest/accounts',
    headers: { authorization, 'content-type': 'application/vnd.api+json' },
  });
  const error = assertErrorAnswer(empty, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
  assert.equal(error.detail, 'The request body is empty; send a JSON document.');
  // Neither a body nor a Content-Type: the same answer, after the token check as with them.
  const none = await app.api.inject({ method: 'POST', url: '/rest/accounts', headers: { authorization } });
  const noneError = assertErrorAnswer(none, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
  assert.equal(noneError.detail, 'The request body is empty; send a JSON document.');
  assertErrorAnswer(await app.api.inject({ method: 'POST', url: '/rest/accounts' }), 401, 'INVALID_TOKEN');
  // A body that is there is still held to the media type.
  assertErrorAnswer(
    await app.api.inject({
      method: 'POST',
      url: '/rest/accounts',
      headers: { authorization, 'content-type': 'application/json' },
      payload: JSON.stringify(bankAccountBody(worker.personId)),
    }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    { source: { header: 'Content-Type' } },
  );
  assert.deepEqual(await tableCounts(app), before);
});

test('a member sent twice in one object is 400 naming it, on /rest and on card tokenization; nothing is written', async (t) => {
  const { app, worker, token } = await setUp(t);
  const before = await tableCounts(app);
  const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
    app.api.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json', ...headers },
      payload,
    });
  const account = JSON.stringify(bankAccountBody(worker.personId)).replace(
    '"name":"Everyday checking"',
    '"name":"Other","name":"Everyday checking"',
  );
  assertErrorAnswer(await post('/rest/accounts', account), 400, 'INVALID_FIELDS', {
    source: { pointer: '/data/attributes/name' },
  });
  const transfer = '{"data":{"type":"transfers","attributes":{"amount":99999999,"amount":601}}}';
  const refused = assertErrorAnswer(await post('/rest/transfers', transfer), 400, 'INVALID_PARAMETERS', {
    source: { pointer: '/data/attributes/amount' },
  });
  assert.equal(
    refused.detail,
    '/data/attributes/amount is given twice in its object: send each member once.',
  );
  // Spelled another way by an escape, it is the same name.
  assertErrorAnswer(
    await post('/rest/transfers', '{"data":{"type":"transfers","attributes":{"amount":1,"amoun\\u0074":2}}}'),
    400,
    'INVALID_PARAMETERS',
    { source: { pointer: '/data/attributes/amount' } },
  );
  // A name with a control or a bidirectional character is shown escaped, as the edge check shows it.
  const hidden = assertErrorAnswer(
    await post(
      '/rest/transfers',
      '{"data":{"type":"transfers","attributes":{"a\\u202e\\u0000":1,"a\\u202e\\u0000":2}}}',
    ),
    400,
    'INVALID_PARAMETERS',
    // The pointer is the member's own (JSON escapes its NUL); the detail shows both characters escaped.
    { source: { pointer: '/data/attributes/a\u202e\u0000' } },
  );
  assert.equal(
    hidden.detail,
    '/data/attributes/a\\u202e\\u0000 is given twice in its object: send each member once.',
  );
  const card = JSON.stringify(CARD).replace('{', '{"card_number":"4000000000000002",');
  for (const [listener, url] of [
    [app.payments, '/v2/cards/generic'],
    [app.api, '/cards/generic'],
  ] as const) {
    const answer = await listener.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: card,
    });
    assertErrorAnswer(answer, 400, 'INVALID_FIELDS', {
      source: { pointer: '/card_number' },
      mediaType: 'application/json',
    });
  }
  assert.deepEqual(await tableCounts(app), before);
});

test('date-time filters outside years 0001 to 9999 (UTC) are INVALID_FILTER_VALUE naming the parameter', async (t) => {
  const { rest } = await setUp(t);
  const refused = [
    ['filter[submitted_at__gt]', '0000-01-01'],
    ['filter[submitted_at__gt]', '0000-12-31T23:59:59Z'],
    ['filter[submitted_at__gt]', '0001-01-01T00:30:00+01:00'], // year 0 in UTC
    ['filter[submitted_at__gt]', '9999-12-31T23:00:00-05:00'], // year 10000 in UTC
  ];
  for (const [parameter, value] of refused) {
    const response = await rest.get(
      `/rest/transfers?${encodeURIComponent(parameter!)}=${encodeURIComponent(value!)}`,
    );
    assertErrorAnswer(response, 400, 'INVALID_FILTER_VALUE', { source: { parameter: parameter! } });
  }
  const paychecks = await rest.get(
    `/rest/paychecks?${encodeURIComponent('filter[pay_period_starts_at__gte]')}=0000-06-01`,
  );
  assertErrorAnswer(paychecks, 400, 'INVALID_FILTER_VALUE', {
    source: { parameter: 'filter[pay_period_starts_at__gte]' },
  });
  for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
    const response = await rest.get(`/rest/transfers?filter[submitted_at__gt]=${encodeURIComponent(value)}`);
    assert.equal(response.statusCode, 200, `${value}: ${response.body}`);
  }
});

const REFUSED_TEXT = {
  nul: 'a\u0000b',
  control: 'a\u0007b',
  newline: 'a\nb',
  bidi: 'a\u202eb',
  'zero-width': 'a\u200bb',
  'lone surrogate': 'a\ud800b',
};

test('a NUL, control, bidirectional or zero-width character in a query, a path id or a body is a 400 at the edge', async (t) => {
  const { app, worker, rest } = await setUp(t);
  const before = await tableCounts(app);
  for (const [kind, text] of Object.entries(REFUSED_TEXT)) {
    // A lone surrogate cannot be percent-encoded (it is not UTF-8); it can only come in a JSON body.
    const encoded = kind === 'lone surrogate' ? '' : encodeURIComponent(text);
    const label = `${kind} (${encoded})`;
    if (encoded) {
      // Query values and names, on a list and on the free-form filter.
      assertErrorAnswer(
        await rest.get(`/rest/transfers?filter[submitted_at__gt]=${encoded}`),
        400,
        'INVALID_PARAMETERS',
        {
          source: { parameter: 'filter[submitted_at__gt]' },
        },
      );
      assertErrorAnswer(
        await rest.get(`/rest/accounts?filter[person.id]=${worker.personId}&filter[account_type]=${encoded}`),
        400,
        'INVALID_PARAMETERS',
        { source: { parameter: 'filter[account_type]' } },
      );
      const nameAnswer = assertErrorAnswer(
        await rest.get(`/rest/transfers?x${encoded}=1`),
        400,
        'INVALID_PARAMETERS',
      );
      assert.equal(textProblem(nameAnswer.detail), undefined, `the detail carries the character: ${label}`);
      assert.equal(textProblem(nameAnswer.source?.parameter ?? ''), undefined, label);
      // Path ids.
      for (const path of ['/rest/accounts/', '/rest/jobs/', '/rest/people/', '/rest/transfers/']) {
        const response = await rest.get(`${path}${encoded}`);
        const error = assertErrorAnswer(response, 400, 'INVALID_PARAMETERS');
        assert.ok(error.source?.parameter, `${path} ${label}: ${response.body}`);
      }
      assertErrorAnswer(await rest.delete(`/rest/accounts/${encoded}`), 400, 'INVALID_PARAMETERS');
    }
    // Bodies: a human-readable name, a nested name, a member name; each refused with its pointer.
    assertErrorAnswer(
      await rest.post('/rest/accounts', bankAccountBody(worker.personId, { name: text })),
      400,
      'INVALID_FIELDS',
      {
        source: { pointer: '/data/attributes/name' },
      },
    );
    assertErrorAnswer(
      await rest.post('/rest/accounts', bankAccountBody(worker.personId, {}, { last_name: text })),
      400,
      'INVALID_FIELDS',
      { source: { pointer: '/data/attributes/details/last_name' } },
    );
    const keyed = bankAccountBody(worker.personId);
    (keyed.data as Record<string, unknown>).meta = { [text]: 1 };
    assertErrorAnswer(await rest.post('/rest/accounts', keyed), 400, 'INVALID_FIELDS');
    // The card endpoint, on both listeners that serve it.
    for (const [listener, url] of [
      [app.payments, '/v2/cards/generic'],
      [app.api, '/cards/generic'],
    ] as const) {
      const card = await listener.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ ...CARD, address_city: text }),
      });
      assertErrorAnswer(card, 400, 'INVALID_FIELDS', {
        source: { pointer: '/address_city' },
        mediaType: 'application/json',
      });
    }
  }
  assert.deepEqual(await tableCounts(app), before, 'a refused write changed the database');
});

test('a query string that is not valid percent-encoding of UTF-8 is 400 naming the parameter, on every route', async (t) => {
  const { app, rest } = await setUp(t);
  const operator = await operatorClient(app);
  // An encoded surrogate (CESU-8), a truncated sequence, a byte that is never UTF-8, an overlong '/', and '%zz'.
  for (const bad of ['%ED%A0%80', '%E0%A4%A', '%FF', '%C0%AF', '%zz']) {
    for (const url of [
      `/rest/jobs?filter[external_identifiers.employee_id]=${bad}`,
      `/rest/accounts?filter=name:"${bad}"`,
      `/rest/transfers?page[after]=${bad}`,
    ]) {
      const parameter = decodeURIComponent(url.slice(url.indexOf('?') + 1).split('=')[0]!);
      const error = assertErrorAnswer(await rest.get(url), 400, 'INVALID_PARAMETERS', {
        source: { parameter },
      });
      assert.match(error.detail, /percent-encoding/, url);
    }
    // A name that is not UTF-8 is named as sent.
    assertErrorAnswer(await rest.get(`/rest/jobs?x${bad}=1`), 400, 'INVALID_PARAMETERS', {
      source: { parameter: `x${bad}` },
    });
    assertErrorAnswer(
      await operator.call('GET', `/admin/organizations?page[size]=${bad}`),
      400,
      'INVALID_PARAMETERS',
      {
        source: { parameter: 'page[size]' },
      },
    );
    const card = await app.api.inject({
      method: 'POST',
      url: `/cards/generic?x=${bad}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(CARD),
    });
    assertErrorAnswer(card, 400, 'INVALID_PARAMETERS', {
      source: { parameter: 'x' },
      mediaType: 'application/json',
    });
  }
  // Well-formed encodings still pass: a '+' for a space, an encoded '%' and a four-byte character.
  const accepted = await rest.get('/rest/jobs?filter[external_identifiers.employee_id]=a+%25+%F0%9F%98%80');
  assert.equal(accepted.statusCode, 200, accepted.body);
});

test('a body that is not UTF-8 is 400, and a charset other than UTF-8 is 415; nothing is written', async (t) => {
  const { app, worker, token } = await setUp(t);
  const before = await tableCounts(app);
  const json = JSON.stringify(bankAccountBody(worker.personId, { name: 'Caf\u00e9 account' }));
  const latin1 = Buffer.from(json, 'latin1'); // é as the single byte E9: not UTF-8
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' };
  const invalid = await app.api.inject({ method: 'POST', url: '/rest/accounts', headers, payload: latin1 });
  assertErrorAnswer(invalid, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
  for (const charset of ['iso-8859-1', 'utf-16', 'latin1']) {
    const declared = await app.api.inject({
      method: 'POST',
      url: '/rest/accounts',
      headers: { ...headers, 'content-type': `application/vnd.api+json; charset=${charset}` },
      payload: latin1,
    });
    assertErrorAnswer(declared, 415, 'UNSUPPORTED_MEDIA_TYPE', { source: { header: 'Content-Type' } });
  }
  // Valid JSON with a member named __proto__ is refused, and says why.
  const poisoned = await app.api.inject({
    method: 'POST',
    url: '/rest/accounts',
    headers,
    payload: `{"__proto__":{"admin":true},${json.slice(1)}`,
  });
  assertErrorAnswer(poisoned, 400, 'INVALID_USER_INPUT', { source: { pointer: '' } });
  assert.match(poisoned.json().errors[0].detail, /a member named __proto__/);
  // A body declared compressed is not read as its bytes: 415 naming the header.
  for (const encoding of ['gzip', 'br, gzip', 'x-unknown']) {
    const encoded = await app.api.inject({
      method: 'POST',
      url: '/rest/accounts',
      headers: { ...headers, 'content-encoding': encoding },
      payload: Buffer.from(json, 'utf8'),
    });
    assertErrorAnswer(encoded, 415, 'UNSUPPORTED_MEDIA_TYPE', { source: { header: 'Content-Encoding' } });
  }
  const utf8 = await app.api.inject({
    method: 'POST',
    url: '/rest/accounts',
    headers: {
      ...headers,
      'content-encoding': 'identity',
      'content-type': 'application/vnd.api+json; charset=UTF-8',
    },
    payload: Buffer.from(json, 'utf8'),
  });
  assert.equal(utf8.statusCode, 200, utf8.body);
  assert.equal(utf8.json().data.attributes.name, 'Caf\u00e9 account');
  const after = await tableCounts(app);
  assert.deepEqual(after, { ...before, accounts: before.accounts! + 1 }, 'only the UTF-8 request wrote');

  for (const [listener, url] of [
    [app.payments, '/v2/cards/generic'],
    [app.api, '/cards/generic'],
  ] as const) {
    const card = JSON.stringify({ ...CARD, address_city: 'S\u00e3o Paulo' });
    const notUtf8 = await listener.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: Buffer.from(card, 'latin1'),
    });
    assertErrorAnswer(notUtf8, 400, 'INVALID_USER_INPUT', { mediaType: 'application/json' });
    const declared = await listener.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      payload: Buffer.from(card, 'latin1'),
    });
    assertErrorAnswer(declared, 415, 'UNSUPPORTED_MEDIA_TYPE', {
      source: { header: 'Content-Type' },
      mediaType: 'application/json',
    });
    const encoded = await listener.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: Buffer.from(card, 'utf8'),
    });
    assertErrorAnswer(encoded, 415, 'UNSUPPORTED_MEDIA_TYPE', {
      source: { header: 'Content-Encoding' },
      mediaType: 'application/json',
    });
  }
});

test('negotiation and the version header belong to the route, however its path is spelled', async (t) => {
  const { token, app } = await setUp(t);
  const headers = { authorization: `Bearer ${token}` };
  for (const url of [
    '/rest/transfers',
    '/%72est/transfers',
    '/rest/%74ransfers',
    '/%72%65%73%74/transfers',
  ]) {
    const ok = await app.api.inject({ url, headers });
    assert.equal(ok.statusCode, 200, `${url}: ${ok.body}`);
    assert.equal(ok.headers['content-type'], 'application/vnd.api+json', url);
    assertErrorAnswer(
      await app.api.inject({ url, headers: { ...headers, accept: 'text/html' } }),
      406,
      'NOT_ACCEPTABLE',
      { source: { header: 'Accept' } },
    );
    assertErrorAnswer(
      await app.api.inject({ url, headers: { ...headers, 'service-api-version': '2' } }),
      400,
      'INVALID_VERSION_HEADER',
      { source: { header: 'Service-API-Version' } },
    );
  }
  const body = await app.api.inject({
    method: 'POST',
    url: '/%72est/accounts',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: '{}',
  });
  assertErrorAnswer(body, 415, 'UNSUPPORTED_MEDIA_TYPE', { source: { header: 'Content-Type' } });
  // A known path spelled otherwise, with a method it does not take, is 405 with the decoded path in the detail.
  const put = await app.api.inject({ method: 'PUT', url: '/%72est/transfers', headers });
  const error = assertErrorAnswer(put, 405, 'METHOD_NOT_ALLOWED');
  assert.match(error.detail, /\/rest\/transfers accepts GET, POST/);
});
