/**
 * POST /v2/cards/generic (payments listener) and POST /cards/generic (API listener): tokens for the sandbox's test
 * cards that open to the card without its CVV, every validation rule with the field it names, the sandbox's
 * refusal of other cards, CORS, both rate limits with Retry-After and their reset, the body limit, and logs that
 * never hold card data.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { CARD_TOKEN_BODY_LIMIT_BYTES } from '../../src/tokenization/routes.ts';
import { UAT_TEST_CARDS } from '../../src/tokenization/test-cards.ts';
import { BASE_URL, buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';

const PAYMENTS_PATH = '/v2/cards/generic';
/** Luhn-valid, and not one of the sandbox's test cards. */
const OTHER_CARD = '4242424242424242';
const OTHER_CARD_2 = '5105105105105100';
const CVV = '9876';

/** A clock the test moves; the whole server reads it. */
function movableClock(start = FIXED_NOW) {
  let current = new Date(start);
  return {
    now: () => new Date(current),
    set: (instant: string) => {
      current = new Date(instant);
    },
    advanceSeconds: (seconds: number) => {
      current = new Date(current.getTime() + seconds * 1000);
    },
  };
}

async function setUp(t: TestContext, env: Record<string, string> = {}) {
  const clock = movableClock();
  const app = await buildTestApp(t, env, { now: clock.now });
  return { app, clock };
}

/** Many requests, one client: only the rate-limit tests keep the per-address default. */
const UNLIMITED = { EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '100000' };

function cardBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Edith',
    last_name: 'Clarke',
    card_number: '4111111111111111',
    expiration_year: '2031',
    expiration_month: '02',
    cvv: CVV,
    address_line_one: '123 Kebly Street',
    address_line_two: 'Unit C',
    address_city: 'Fort Lee',
    address_state: 'NJ',
    address_zip_code: '07237',
    address_country: 'US',
    ...overrides,
  };
}

function without(field: string): Record<string, unknown> {
  const body = cardBody();
  delete body[field];
  return body;
}

function postCard(
  listener: FastifyInstance,
  body: unknown,
  options: { url?: string; headers?: Record<string, string>; remoteAddress?: string } = {},
): Promise<LightMyRequestResponse> {
  return listener.inject({
    method: 'POST',
    url: options.url ?? PAYMENTS_PATH,
    headers: { 'content-type': 'application/json', ...options.headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}

interface ErrorObject {
  status: string;
  code: string;
  detail: string;
  source?: { pointer?: string; header?: string };
  links: { about: string };
  meta: { request_id: string };
}

/** The one error of a response, checked for the shape every card tokenization error has. */
function errorOf(response: LightMyRequestResponse, status: number): ErrorObject {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const { errors } = response.json() as { errors: ErrorObject[] };
  assert.equal(errors.length, 1);
  const [error] = errors as [ErrorObject];
  assert.equal(error.status, String(status));
  assert.equal(error.links.about, `${BASE_URL}/rest/errors#${error.code}`);
  assert.equal(error.meta.request_id, response.headers['x-request-id']);
  for (const secret of [OTHER_CARD, OTHER_CARD_2, ...UAT_TEST_CARDS, CVV]) {
    assert.ok(!response.body.includes(secret), `the error repeats card data: ${response.body}`);
  }
  return error;
}

function assertFieldError(
  response: LightMyRequestResponse,
  code: string,
  pointer: string,
  label: string,
): void {
  const error = errorOf(response, 400);
  assert.equal(error.code, code, `${label}: ${response.body}`);
  assert.deepEqual(error.source, { pointer }, `${label}: ${response.body}`);
  const field = pointer.slice(1);
  if (field) assert.ok(error.detail.includes(field), `${label}: the detail names ${field}: ${error.detail}`);
}

async function openToken(app: TestApp, response: LightMyRequestResponse, now: Date) {
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = response.json() as { token: string };
  assert.deepEqual(Object.keys(body), ['token']);
  assert.match(body.token, /^[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+\.[\w-]+$/, 'a compact JWE has five parts');
  const keys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  return { token: body.token, opened: await keys.open(body.token, now) };
}

test('each sandbox test card gets a token that opens to the card, without its CVV', async (t) => {
  const { app, clock } = await setUp(t);
  const tokens = new Set<string>();
  for (const card_number of UAT_TEST_CARDS) {
    const sent = cardBody({ card_number });
    const { token, opened } = await openToken(app, await postCard(app.payments, sent), clock.now());
    const { cvv: _cvv, ...expected } = sent;
    assert.deepEqual(opened.card, expected);
    assert.ok(!('cvv' in opened.card));
    assert.ok(!token.includes(card_number));
    assert.equal(
      opened.expiresAt.getTime(),
      clock.now().getTime() + app.config.cards.tokenTtlSeconds * 1000,
      'expires after EWA_CARD_TOKEN_TTL_SECONDS',
    );
    tokens.add(opened.jti);
  }
  assert.equal(tokens.size, 3, 'every token has its own id');

  // CVV and the second address line are optional, and may be null; an empty one counts as absent.
  for (const optional of [{ cvv: null, address_line_two: null }, { cvv: '', address_line_two: '' }, {}]) {
    const sent = { ...without('cvv'), ...optional };
    delete sent.address_line_two;
    Object.assign(sent, optional);
    const { opened } = await openToken(app, await postCard(app.payments, sent), clock.now());
    assert.equal(opened.card.address_line_two, undefined, JSON.stringify(optional));
    assert.ok(!('cvv' in opened.card));
  }

  // The token expires: after its lifetime it no longer opens.
  const { token } = await openToken(app, await postCard(app.payments, cardBody()), clock.now());
  const keys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  clock.advanceSeconds(app.config.cards.tokenTtlSeconds + 1);
  await assert.rejects(keys.open(token, clock.now()));
});

test('every required field, when absent or null, is MISSING_REQUIRED_FIELD naming it; a non-string is INVALID_FIELDS', async (t) => {
  const { app } = await setUp(t, UNLIMITED);
  const required = [
    'first_name',
    'last_name',
    'card_number',
    'expiration_year',
    'expiration_month',
    'address_line_one',
    'address_city',
    'address_state',
    'address_zip_code',
    'address_country',
  ];
  for (const field of required) {
    assertFieldError(
      await postCard(app.payments, without(field)),
      'MISSING_REQUIRED_FIELD',
      `/${field}`,
      field,
    );
    assertFieldError(
      await postCard(app.payments, cardBody({ [field]: null })),
      'MISSING_REQUIRED_FIELD',
      `/${field}`,
      `${field} null`,
    );
    for (const wrong of [1234, true, ['x'], { value: 'x' }]) {
      assertFieldError(
        await postCard(app.payments, cardBody({ [field]: wrong })),
        'INVALID_FIELDS',
        `/${field}`,
        `${field} ${JSON.stringify(wrong)}`,
      );
    }
  }
  for (const field of ['cvv', 'address_line_two']) {
    assertFieldError(
      await postCard(app.payments, cardBody({ [field]: 123 })),
      'INVALID_FIELDS',
      `/${field}`,
      field,
    );
  }
});

test('each malformed field is INVALID_FIELDS with its pointer, and no detail repeats what was sent', async (t) => {
  const { app } = await setUp(t, UNLIMITED);
  const cases: [string, unknown][] = [
    ['first_name', ''],
    ['first_name', '   '],
    ['first_name', 'E'.repeat(101)],
    ['first_name', 'Edith\u0000'],
    ['first_name', 'Ed\nith'],
    ['last_name', ''],
    ['last_name', 'C'.repeat(101)],
    ['last_name', 'Clarke\u007f'],
    ['card_number', ''],
    ['card_number', '4111 1111 1111 1111'],
    ['card_number', '4111-1111-1111-1111'],
    ['card_number', '41111111111'], // 11 digits
    ['card_number', '41111111111111111111'], // 20 digits
    ['card_number', '4111111111111112'], // check digit wrong
    ['card_number', '４１１１１１１１１１１１１１１１'], // full-width digits are not digits here
    ['expiration_year', '31'],
    ['expiration_year', '20311'],
    ['expiration_year', '２０３１'],
    ['expiration_month', '2'],
    ['expiration_month', '00'],
    ['expiration_month', '13'],
    ['expiration_month', 'February'],
    ['cvv', '12'],
    ['cvv', '12345'],
    ['cvv', 'abc'],
    ['address_line_one', ''],
    ['address_line_one', 'x'.repeat(101)],
    ['address_line_one', '1 Main St\r\n'],
    ['address_line_two', 'x'.repeat(101)],
    ['address_line_two', '   '],
    ['address_line_two', 'Unit\tC'],
    ['address_city', ''],
    ['address_city', 'y'.repeat(101)],
    ['address_state', 'nj'],
    ['address_state', 'N'],
    ['address_state', 'NJY'],
    ['address_state', 'N1'],
    ['address_zip_code', '0723'],
    ['address_zip_code', '07237-1234'],
    ['address_zip_code', 'ABCDE'],
    ['address_country', 'us'],
    ['address_country', 'USA'],
    ['address_country', 'UK'], // reserved, not assigned: the code is GB
    ['address_country', 'XK'],
    ['address_country', 'ZZ'],
  ];
  for (const [field, value] of cases) {
    const response = await postCard(app.payments, cardBody({ [field]: value }));
    assertFieldError(response, 'INVALID_FIELDS', `/${field}`, `${field}=${JSON.stringify(value)}`);
    if (typeof value === 'string' && value.trim().length >= 3) {
      assert.ok(!response.body.includes(value), `the detail repeats ${JSON.stringify(value)}`);
    }
  }
  // The edges that must pass: 100 characters, 12- and 19-digit Luhn numbers, accented and non-Latin names.
  for (const accepted of [
    { first_name: 'E'.repeat(100), address_line_one: 'x'.repeat(100), address_city: 'y'.repeat(100) },
    { first_name: 'Zoë', last_name: '李' },
    { address_country: 'GB', address_state: 'LN' },
  ]) {
    const response = await postCard(app.payments, cardBody(accepted));
    assert.equal(response.statusCode, 200, `${JSON.stringify(accepted)}: ${response.body}`);
  }
});

test('a card is good through the last day of its expiry month in UTC, and refused after', async (t) => {
  const { app, clock } = await setUp(t, UNLIMITED);
  const expiring = (year: string, month: string) =>
    postCard(app.payments, cardBody({ expiration_year: year, expiration_month: month }));

  clock.set('2026-03-11T15:30:00.000Z');
  assert.equal((await expiring('2026', '03')).statusCode, 200, 'this month');
  assertFieldError(await expiring('2026', '02'), 'INVALID_FIELDS', '/expiration_month', 'last month');
  assertFieldError(await expiring('2025', '12'), 'INVALID_FIELDS', '/expiration_year', 'last year');
  assertFieldError(
    await expiring('2025', '04'),
    'INVALID_FIELDS',
    '/expiration_year',
    'last year, later month',
  );
  assert.equal((await expiring('2046', '12')).statusCode, 200, 'twenty years ahead');
  assertFieldError(await expiring('2047', '01'), 'INVALID_FIELDS', '/expiration_year', 'too far ahead');

  clock.set('2026-03-31T23:59:59.999Z');
  assert.equal((await expiring('2026', '03')).statusCode, 200, 'the last instant of the month, UTC');
  clock.set('2026-04-01T00:00:00.000Z');
  const expired = await expiring('2026', '03');
  assertFieldError(expired, 'INVALID_FIELDS', '/expiration_month', 'the first instant of the next month');
  assert.match(errorOf(expired, 400).detail, /expired/);

  clock.set('2027-01-01T00:00:00.000Z');
  assertFieldError(await expiring('2026', '12'), 'INVALID_FIELDS', '/expiration_year', 'across new year');
});

test('the sandbox tokenizes only its test cards: any other valid card is refused without being repeated', async (t) => {
  const { app } = await setUp(t, UNLIMITED);
  assert.equal(app.config.env, 'uat');
  for (const card_number of [OTHER_CARD, OTHER_CARD_2, '378282246310005', '6011111111111117']) {
    const response = await postCard(app.payments, cardBody({ card_number }));
    assertFieldError(response, 'INVALID_FIELDS', '/card_number', card_number);
    assert.match(
      errorOf(response, 400).detail,
      /test cards listed in docs\/integrators\/card-tokenization\.md/,
    );
    assert.ok(!response.body.includes(card_number));
  }
  // Any CVV and any future expiry pass with a test card.
  for (const cvv of ['000', '999', '1234', null]) {
    const response = await postCard(app.payments, cardBody({ cvv, expiration_year: '2040' }));
    assert.equal(response.statusCode, 200, String(cvv));
  }
});

test('unknown fields are refused by name; a name that could be card data is not repeated', async (t) => {
  const { app } = await setUp(t, UNLIMITED);
  assertFieldError(
    await postCard(app.payments, cardBody({ nickname: 'Main card' })),
    'INVALID_FIELDS',
    '/nickname',
    'one unknown field',
  );
  const several = await postCard(app.payments, cardBody({ cvc: '123', zip: '07237' }));
  assert.deepEqual(errorOf(several, 400).source, { pointer: '/cvc' });
  assert.match(errorOf(several, 400).detail, /cvc, zip/);

  const strange = await postCard(app.payments, { ...cardBody(), [OTHER_CARD]: true });
  const error = errorOf(strange, 400);
  assert.equal(error.code, 'INVALID_FIELDS');
  assert.deepEqual(error.source, { pointer: '' });

  // A body that is not a JSON object, not JSON at all, empty, or not JSON by its media type.
  for (const payload of ['[]', '"4111111111111111"', '42', 'null']) {
    const response = await postCard(app.payments, payload);
    assert.equal(errorOf(response, 400).code, 'INVALID_USER_INPUT', payload);
  }
  const broken = await postCard(app.payments, '{"card_number":"4111111111111111",');
  assert.equal(errorOf(broken, 400).code, 'INVALID_USER_INPUT');
  const empty = await app.payments.inject({ method: 'POST', url: PAYMENTS_PATH });
  assert.equal(errorOf(empty, 400).code, 'INVALID_USER_INPUT');
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json']) {
    const response = await postCard(app.payments, cardBody(), { headers: { 'content-type': type } });
    const unsupported = errorOf(response, 415);
    assert.equal(unsupported.code, 'UNSUPPORTED_MEDIA_TYPE', type);
    assert.deepEqual(unsupported.source, { header: 'Content-Type' });
  }
  const withCharset = await postCard(app.payments, cardBody(), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  assert.equal(withCharset.statusCode, 200);
  // A prototype-poisoning body is refused rather than parsed.
  const poisoned = await postCard(
    app.payments,
    `{"__proto__":{"x":1},${JSON.stringify(cardBody()).slice(1)}`,
  );
  const refusal = errorOf(poisoned, 400);
  assert.equal(refusal.code, 'INVALID_USER_INPUT');
  assert.match(refusal.detail ?? '', /member named __proto__/, 'valid JSON is not said to be invalid');
});

test('CORS: preflight and requests from an allowed origin get the headers; another origin gets none', async (t) => {
  const allowed = 'https://partner.example';
  const { app } = await setUp(t, { ...UNLIMITED, EWA_CARD_CORS_ORIGINS: `${allowed},https://other.example` });
  const preflight = (origin: string, method = 'POST') =>
    app.payments.inject({
      method: 'OPTIONS',
      url: PAYMENTS_PATH,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type',
      },
    });

  const ok = await preflight(allowed);
  assert.equal(ok.statusCode, 204);
  assert.equal(ok.headers['access-control-allow-origin'], allowed);
  assert.equal(ok.headers['access-control-allow-methods'], 'POST');
  assert.equal(ok.headers['access-control-allow-headers'], 'Content-Type');
  assert.equal(ok.headers['access-control-max-age'], '600');
  assert.equal(ok.headers.vary, 'Origin');
  assert.equal(ok.headers['access-control-allow-credentials'], undefined);

  for (const refused of [await preflight('https://evil.example'), await preflight(allowed, 'DELETE')]) {
    assert.equal(refused.statusCode, 204);
    for (const header of Object.keys(refused.headers)) {
      assert.ok(!header.startsWith('access-control-'), `${header} sent to a refused preflight`);
    }
  }

  const fromPartner = await postCard(app.payments, cardBody(), { headers: { origin: allowed } });
  assert.equal(fromPartner.statusCode, 200);
  assert.equal(fromPartner.headers['access-control-allow-origin'], allowed);
  assert.match(String(fromPartner.headers['access-control-expose-headers']), /Retry-After/);
  // Errors carry the headers too, so that the page can show what to fix.
  const invalid = await postCard(app.payments, cardBody({ cvv: 'x' }), { headers: { origin: allowed } });
  assert.equal(invalid.statusCode, 400);
  assert.equal(invalid.headers['access-control-allow-origin'], allowed);

  const fromElsewhere = await postCard(app.payments, cardBody(), {
    headers: { origin: 'https://evil.example' },
  });
  assert.equal(fromElsewhere.headers['access-control-allow-origin'], undefined);
  assert.equal(fromElsewhere.headers.vary, 'Origin');
  const noOrigin = await postCard(app.payments, cardBody());
  assert.equal(noOrigin.headers['access-control-allow-origin'], undefined);
});

test('CORS in the sandbox answers any origin with *', async (t) => {
  const { app } = await setUp(t);
  assert.deepEqual(app.config.cards.corsOrigins, ['*']);
  const preflight = await app.payments.inject({
    method: 'OPTIONS',
    url: PAYMENTS_PATH,
    headers: { origin: 'https://anyone.example', 'access-control-request-method': 'POST' },
  });
  assert.equal(preflight.headers['access-control-allow-origin'], '*');
  assert.equal(preflight.headers.vary, undefined);
  const response = await postCard(app.payments, cardBody(), {
    headers: { origin: 'https://anyone.example' },
  });
  assert.equal(response.headers['access-control-allow-origin'], '*');
});

test('per client address: every attempt counts, the next one is 429 with Retry-After until the minute ends', async (t) => {
  const { app, clock } = await setUp(t, { EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '4' });
  const origin = { origin: 'https://partner.example' };
  const from = (remoteAddress: string, body: unknown = cardBody()) =>
    postCard(app.payments, body, { remoteAddress, headers: origin });

  assert.equal((await from('203.0.113.7')).statusCode, 200);
  assert.equal((await from('203.0.113.7', cardBody({ cvv: 'x' }))).statusCode, 400, 'an invalid attempt');
  assert.equal((await from('203.0.113.7', '{')).statusCode, 400, 'a broken body');
  // The same limit covers the API listener's path: one tokenizer serves both.
  const viaApi = await postCard(app.api, cardBody(), { url: '/cards/generic', remoteAddress: '203.0.113.7' });
  assert.equal(viaApi.statusCode, 200);

  const limited = await from('203.0.113.7');
  const error = errorOf(limited, 429);
  assert.equal(error.code, 'TOO_MANY_REQUESTS');
  assert.equal(limited.headers['retry-after'], '60');
  assert.match(error.detail, /60 seconds/);
  assert.equal(limited.headers['access-control-allow-origin'], '*', 'the page can read the 429');
  assert.equal((await from('198.51.100.1')).statusCode, 200, 'another address is not limited');
  // Preflights are not attempts.
  const preflight = await app.payments.inject({
    method: 'OPTIONS',
    url: PAYMENTS_PATH,
    remoteAddress: '203.0.113.7',
    headers: { ...origin, 'access-control-request-method': 'POST' },
  });
  assert.equal(preflight.statusCode, 204);

  clock.advanceSeconds(45);
  const stillLimited = await from('203.0.113.7');
  assert.equal(stillLimited.statusCode, 429);
  assert.equal(stillLimited.headers['retry-after'], '15');
  clock.advanceSeconds(15);
  assert.equal((await from('203.0.113.7')).statusCode, 200, 'a new minute, a new window');

  // IPv6 clients are counted by their /64: rotating the interface id does not get more attempts.
  for (let index = 1; index <= 4; index++) {
    assert.equal((await from(`2001:db8:1:2::${index}`)).statusCode, 200);
  }
  assert.equal((await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode, 429);
  assert.equal((await from('2001:db8:1:3::1')).statusCode, 200, 'the next /64 is another client');
});

test('per card: attempts on one card number are limited across addresses, with Retry-After; test cards are not', async (t) => {
  const { app, clock } = await setUp(t, { ...UNLIMITED, EWA_CARD_TOKENS_PER_CARD_PER_MINUTE: '3' });
  const attempt = (remoteAddress: string, overrides: Record<string, unknown> = {}) =>
    postCard(app.payments, cardBody({ card_number: OTHER_CARD, ...overrides }), { remoteAddress });

  // Refused by the sandbox, but counted: a card tester learns nothing from a different answer.
  assert.equal((await attempt('203.0.113.1')).statusCode, 400);
  assert.equal(
    (await attempt('203.0.113.2', { expiration_month: '13' })).statusCode,
    400,
    'counted though invalid',
  );
  assert.equal((await attempt('203.0.113.3', { cvv: '000' })).statusCode, 400);
  const limited = await attempt('203.0.113.4', { cvv: '001' });
  const error = errorOf(limited, 429);
  assert.equal(error.code, 'TOO_MANY_REQUESTS');
  assert.match(error.detail, /this card/);
  assert.equal(limited.headers['retry-after'], '60');

  const other = await postCard(app.payments, cardBody({ card_number: OTHER_CARD_2 }));
  assert.equal(other.statusCode, 400, 'another card is not limited');
  const malformed = await attempt('203.0.113.5', { card_number: '4242424242424241' });
  assert.equal(
    errorOf(malformed, 400).code,
    'INVALID_FIELDS',
    'a number that fails Luhn is not a card to count',
  );

  clock.advanceSeconds(59);
  assert.equal((await attempt('203.0.113.6')).headers['retry-after'], '1');
  clock.advanceSeconds(1);
  assert.equal(
    (await attempt('203.0.113.7')).statusCode,
    400,
    'the window closed: back to the sandbox answer',
  );

  // The sandbox's test cards are shared by every developer: no per-card limit on them.
  for (let index = 0; index < 6; index++) {
    assert.equal((await postCard(app.payments, cardBody(), { remoteAddress: '192.0.2.9' })).statusCode, 200);
  }
});

test('a body over the 8 KB limit of these routes is 413, before anything else is read', async (t) => {
  const { app } = await setUp(t, UNLIMITED);
  assert.ok(app.config.bodyLimitBytes > CARD_TOKEN_BODY_LIMIT_BYTES, 'stricter than the server-wide limit');
  const padded = JSON.stringify(cardBody({ address_line_two: 'x'.repeat(CARD_TOKEN_BODY_LIMIT_BYTES) }));
  for (const [listener, url] of [
    [app.payments, PAYMENTS_PATH],
    [app.api, '/cards/generic'],
  ] as const) {
    const response = await postCard(listener, padded, { url });
    const error = errorOf(response, 413);
    assert.equal(error.code, 'PAYLOAD_TOO_LARGE');
    assert.match(error.detail, /8192 bytes/);
  }
  const justUnder = JSON.stringify(cardBody()).length;
  assert.ok(justUnder < CARD_TOKEN_BODY_LIMIT_BYTES);
});

test('the API listener serves the same handler at /cards/generic; the payments listener serves nothing else', async (t) => {
  const { app, clock } = await setUp(t, UNLIMITED);
  const { opened } = await openToken(
    app,
    await postCard(app.api, cardBody({ card_number: '5555555555554444' }), { url: '/cards/generic' }),
    clock.now(),
  );
  assert.equal(opened.card.card_number, '5555555555554444');
  assertFieldError(
    await postCard(app.api, without('address_zip_code'), { url: '/cards/generic' }),
    'MISSING_REQUIRED_FIELD',
    '/address_zip_code',
    'API listener',
  );
  const preflight = await app.api.inject({
    method: 'OPTIONS',
    url: '/cards/generic',
    headers: { origin: 'https://partner.example', 'access-control-request-method': 'POST' },
  });
  assert.equal(preflight.statusCode, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], '*');
  // No bearer token is needed, and one that is sent is ignored rather than checked.
  const withToken = await postCard(app.api, cardBody(), {
    url: '/cards/generic',
    headers: { authorization: 'Bearer not-a-token' },
  });
  assert.equal(withToken.statusCode, 200);

  const otherMethod = await app.payments.inject({ method: 'GET', url: PAYMENTS_PATH });
  assert.equal(otherMethod.statusCode, 405, 'another method on the card path');
  assert.equal(otherMethod.headers.allow, 'OPTIONS, POST');
  assert.equal(otherMethod.json().errors[0].code, 'METHOD_NOT_ALLOWED');
  for (const [method, url] of [
    ['POST', '/cards/generic'],
    ['POST', '/v2/cards'],
    ['GET', '/'],
  ] as const) {
    const response = await app.payments.inject({ method, url });
    assert.equal(response.statusCode, 404, `${method} ${url} on the payments listener`);
    assert.equal(response.json().errors[0].code, 'NOT_FOUND');
  }
  assert.equal((await app.api.inject({ method: 'POST', url: PAYMENTS_PATH })).statusCode, 404);
});

test('the OpenAPI document describes the operation with the published id and no security', async (t) => {
  const { app } = await setUp(t);
  const document = (await app.api.inject({ url: '/rest/openapi.json' })).json();
  const operation = document.paths['/cards/generic'].post;
  assert.equal(operation.operationId, 'createGenericCardToken');
  assert.deepEqual(operation.security, []);
  assert.ok(operation.requestBody.content['application/json'].schema.properties.card_number);
  assert.equal(
    document.paths['/cards/generic'].options,
    undefined,
    'the preflight route is not an operation',
  );
});

test('after good and bad requests on both listeners, no log line holds a card number, a CVV or a token', async (t) => {
  const { app } = await setUp(t, {
    EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '12',
    EWA_CARD_TOKENS_PER_CARD_PER_MINUTE: '2',
    EWA_LOG_LEVEL: 'trace',
  });
  const tokens: string[] = [];
  const requests: (readonly [FastifyInstance, string, unknown])[] = [
    ...[...UAT_TEST_CARDS].map(
      (card_number) => [app.payments, PAYMENTS_PATH, cardBody({ card_number })] as const,
    ),
    [app.api, '/cards/generic', cardBody({ card_number: '4007589999999912' })],
    [app.payments, PAYMENTS_PATH, cardBody({ card_number: OTHER_CARD })],
    [app.payments, PAYMENTS_PATH, cardBody({ card_number: OTHER_CARD })],
    [app.payments, PAYMENTS_PATH, cardBody({ card_number: OTHER_CARD })], // 429 for the card
    [app.payments, PAYMENTS_PATH, cardBody({ card_number: OTHER_CARD_2, expiration_month: '13' })],
    [app.payments, PAYMENTS_PATH, `{"card_number":"${OTHER_CARD_2}","cvv":"${CVV}"`], // broken JSON
    [app.payments, PAYMENTS_PATH, { card_numbr: OTHER_CARD_2, cvv: CVV }], // misspelt
    [app.payments, PAYMENTS_PATH, cardBody({ address_line_two: 'x'.repeat(9000) })], // 413
    [app.payments, PAYMENTS_PATH, cardBody()],
    [app.payments, PAYMENTS_PATH, cardBody()], // 429 for the address
  ];
  const statuses: number[] = [];
  for (const [listener, url, body] of requests) {
    const response = await postCard(listener, body, { url, headers: { traceparent: 'x' } });
    statuses.push(response.statusCode);
    if (response.statusCode === 200) tokens.push(response.json().token);
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 400, 400, 429, 400, 400, 400, 413, 200, 429]);
  const text = JSON.stringify(app.logs);
  assert.ok(app.logs.filter((line) => line.msg === 'request completed').length >= requests.length);
  for (const secret of [...UAT_TEST_CARDS, OTHER_CARD, OTHER_CARD_2, ...tokens]) {
    assert.ok(!text.includes(secret), `a log line holds ${secret.slice(0, 12)}…`);
  }
  // Four digits may be part of a request id, a time or a latency by chance: the CVV as a value of its own may not.
  assert.doesNotMatch(text, new RegExp(`(?<![0-9a-f.-])${CVV}(?![0-9a-f.-])`), 'a log line holds the CVV');
  // Not even a redacted card field: nothing logs a request body or a card, in whole or in part.
  assert.ok(!text.includes('card_number'), 'no card field is logged');
});

test('EWA_TRUST_PROXY: behind a trusted proxy the limit counts X-Forwarded-For; untrusted, the header is ignored', async (t) => {
  for (const [trust, separate] of [
    ['10.0.0.0/8', true],
    ['false', false],
  ] as const) {
    const { app } = await setUp(t, { EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '1', EWA_TRUST_PROXY: trust });
    const via = (client: string) =>
      postCard(app.payments, cardBody(), {
        remoteAddress: '10.1.2.3',
        headers: { 'x-forwarded-for': client },
      });
    assert.equal((await via('203.0.113.7')).statusCode, 200, trust);
    assert.equal((await via('198.51.100.1')).statusCode, separate ? 200 : 429, trust);
    assert.equal((await via('203.0.113.7')).statusCode, 429, trust);
  }
});
