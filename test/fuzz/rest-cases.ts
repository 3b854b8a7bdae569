import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import {
  type BodyPlan,
  bodyBytes,
  bodyPlan,
  type Encoding,
  type EntryChange,
  entryChanges,
  entryValues,
  formText,
  type JsonMutation,
  type SeedBody,
  stringNodes,
} from './body-plans.ts';
import type { FuzzRequest } from './fuzz-request.ts';
import {
  ACCEPTS,
  CONTENT_TYPES,
  extraHeaders,
  REQUEST_IDS,
  TRACEPARENTS,
  VERSIONS,
} from './header-variants.ts';
import {
  asHeaderValue,
  DATE_TEXTS,
  hostileText,
  hostileUrlPart,
  type UrlPart,
  urlPartText,
} from './hostile-values.ts';
import { forgedAuthorizations, type RestWorld, tokensFor } from './rest-world.ts';
import type { Operation } from './route-catalog.ts';

/** One request to an operation of the API or payments listener, as a description. */
export interface RestCase {
  method: string;
  /** One per path parameter. */
  ids: UrlPart[];
  query: EntryChange[];
  /** 0: a valid token of the right kind; 1: a valid token of another kind; 2: none; 3…: a forged one. */
  auth: number;
  contentType: string;
  accept: string;
  version: string | null;
  /** `(fresh)`: a new UUID; `(none)`: no header. */
  idempotencyKey: string;
  requestId: string | null;
  traceparent: string | null;
  extra: [string, string][];
  /** Which kind of valid body the mutations start from. */
  seed: number;
  body: BodyPlan;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'] as const;

const FILTER_EXPRESSIONS = [
  'name:"Fuzz Co"',
  'name~"co"',
  'person.id:"00000000-0000-0000-0000-000000000000" AND (account_type:"CARD" OR subtype~"x")',
  'external_identifiers.group~"nor" AND person.id:"x"',
  'name:"unterminated',
  'name:',
  ':"x"',
  'AND OR AND',
  '((((name:"x"',
  'name:"x"))))',
  '__proto__:"x"',
  'constructor.prototype:"x"',
  'toString~"x"',
  `${'('.repeat(5000)}name:"x"${')'.repeat(5000)}`,
  Array.from({ length: 2000 }, () => 'name:"x"').join(' OR '),
] as const;

/**
 * Query values worth trying: dates out of range, filter expressions, enum words, numbers, the fixture ids.
 */
function queryValues(world: RestWorld): fc.Arbitrary<UrlPart> {
  const ids = Object.values(world.ids).flat();
  const text = (values: readonly string[]) =>
    fc.constantFrom(...values).map((value) => ({ $: 'text' as const, text: value }));
  return entryValues([
    text(DATE_TEXTS),
    text(FILTER_EXPRESSIONS),
    text(ids),
    text(['CARD', 'DEPOSITORY', 'EARNINGS_BALANCE', 'CHECKING', 'ODP', 'PENDING', 'ESTIMATED', 'DEPOSITED']),
    text([
      'estimated_funding_sources',
      'final_funding_sources',
      'estimated_funding_sources,final_funding_sources,x',
      '',
    ]),
    text(['0', '-1', '1000', '1001', '1e3', '99999999999999999999', '0x10', ' 1']),
    hostileText.map((value) => ({ $: 'text' as const, text: `name:"${value}"` })),
  ]);
}

export function restCase(world: RestWorld, operation: Operation): fc.Arbitrary<RestCase> {
  const ids = Object.values(world.ids).flat();
  const idFor = (name: string) =>
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constantFrom(...(world.ids[name] ?? ids)).map((text) => ({ $: 'text' as const, text })),
      },
      { weight: 1, arbitrary: fc.uuid().map((text) => ({ $: 'text' as const, text })) },
      { weight: 3, arbitrary: hostileUrlPart },
    );
  const forged = forgedAuthorizations(tokensFor(world, operation).right ?? world.tokens.user).length;
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(operation.method) }, fc.constantFrom(...METHODS)),
    ids: fc.tuple(...operation.params.map(idFor)),
    query: entryChanges(operation.query, queryValues(world)),
    auth: fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 2 + forged })),
    contentType: fc.oneof({ weight: 10, arbitrary: fc.constant('(own)') }, fc.constantFrom(...CONTENT_TYPES)),
    accept: fc.oneof({ weight: 8, arbitrary: fc.constant('(none)') }, fc.constantFrom(...ACCEPTS)),
    version: fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, fc.constantFrom(...VERSIONS)),
    idempotencyKey: fc.oneof(
      { weight: 8, arbitrary: fc.constant('(fresh)') },
      fc.constantFrom('(none)', '', 'not-a-uuid', 'x'.repeat(300), '00000000-0000-0000-0000-000000000000'),
      hostileText.map(asHeaderValue),
    ),
    requestId: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, fc.constantFrom(...REQUEST_IDS)),
    traceparent: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, fc.constantFrom(...TRACEPARENTS)),
    extra: fc.oneof({ weight: 6, arbitrary: fc.constant<[string, string][]>([]) }, extraHeaders),
    seed: fc.nat({ max: world.seedKinds(operation) - 1 }),
    body: bodyPlan({ hasBody: operation.bodyType !== undefined }),
  });
}

/** The case that sends everything right: valid ids, token, headers and body. */
export function validCase(operation: Operation): RestCase {
  return {
    method: operation.method,
    ids: operation.params.map(() => ({ $: 'text', text: '(fixture)' })),
    query: [],
    auth: 0,
    contentType: '(own)',
    accept: '(none)',
    version: null,
    idempotencyKey: '(fresh)',
    requestId: null,
    traceparent: null,
    extra: [],
    seed: 0,
    body: operation.bodyType ? { kind: 'seed', json: [], text: [], encoding: 'utf8' } : { kind: 'none' },
  };
}

const text = (value: string): UrlPart => ({ $: 'text', text: value });
const add = (name: string, value: UrlPart): EntryChange => ({
  op: 'add',
  name: { $: 'verbatim', text: name },
  value,
});

/**
 * The classes the issue lists, tried on every operation before the random cases: prototype names in filters,
 * NUL and dates out of range in every filter, hostile path ids, NUL and a bidirectional override in each
 * string of the valid body, own `__proto__` members, deep JSON, another charset, bytes that are not UTF-8, a
 * body over the limit, forged and missing tokens.
 */
export function listedClasses(operation: Operation, seeds: (SeedBody | undefined)[]): RestCase[] {
  const valid = validCase(operation);
  const cases: RestCase[] = [
    valid,
    { ...valid, auth: 2 },
    { ...valid, auth: 3 },
    { ...valid, accept: 'text/html' },
  ];
  for (const name of ['filter[__proto__]', 'filter[constructor]', 'filter[toString]'])
    cases.push({ ...valid, query: [add(name, text('x'))] });
  for (const name of operation.query) {
    if (name.startsWith('filter[')) cases.push({ ...valid, query: [add(name, text('a\u0000b'))] });
    if (/_at(__[a-z]+)?\]$/.test(name))
      for (const date of ['0000-01-01T00:00:00Z', '300000-01-01T00:00:00Z'])
        cases.push({ ...valid, query: [add(name, text(date))] });
  }
  if (operation.query.includes('filter'))
    cases.push({ ...valid, query: [add('filter', text('name:"a\u0000"'))] });
  if (operation.params.length > 0) {
    const ids: UrlPart[] = [
      text('a\u0000b'),
      { $: 'long', unit: 'a', times: 101 },
      { $: 'verbatim', text: '%zz' },
    ];
    for (const id of ids) cases.push({ ...valid, ids: operation.params.map(() => id) });
  }
  if (operation.bodyType === undefined) return cases;
  const seeded = (json: JsonMutation[], encoding: Encoding = 'utf8'): BodyPlan => ({
    kind: 'seed',
    json,
    text: [],
    encoding,
  });
  seeds.forEach((seed, kind) => {
    if (seed?.type === 'json') {
      // Each string of the valid body in turn gets a NUL (PostgreSQL refuses it); each name, a bidirectional
      // override and a zero-width space (names must not look like other names).
      for (const { at, key } of stringNodes(seed.value)) {
        const values = /name|line|city/.test(String(key))
          ? ['Ro\u0000bin', 'Ro\u202ebin', 'Ro\u200bbin']
          : ['Ro\u0000bin'];
        for (const value of values)
          cases.push({
            ...valid,
            seed: kind,
            body: seeded([{ op: 'set', at, value: { $: 'json', value } }]),
          });
      }
    } else if (seed?.type === 'text') {
      const at = seed.text.indexOf('\n') + 3;
      const insert = { $: 'json', value: '\u0000' } as const;
      cases.push({
        ...valid,
        seed: kind,
        body: { kind: 'seed', json: [], text: [{ at, remove: 0, insert }], encoding: 'utf8' },
      });
    }
  });
  cases.push(
    {
      ...valid,
      body: seeded([{ op: 'add', at: 0, key: '__proto__', value: { $: 'json', value: { admin: true } } }]),
    },
    {
      ...valid,
      body: seeded([{ op: 'add', at: 2, key: 'constructor', value: { $: 'json', value: { prototype: 1 } } }]),
    },
    { ...valid, body: { kind: 'value', value: { $: 'deep', shape: 'array', depth: 10_000 } } },
    { ...valid, body: seeded([{ op: 'set', at: 3, value: { $: 'deep', shape: 'object', depth: 10_000 } }]) },
    { ...valid, body: seeded([{ op: 'set', at: 5, value: { $: 'bytes', bytes: [0xff, 0xfe] } }]) },
    { ...valid, body: seeded([{ op: 'set', at: 4, value: { $: 'raw', text: '"\\ud800"' } }]) },
    { ...valid, body: seeded([], 'latin1'), contentType: 'application/vnd.api+json; charset=latin1' },
    { ...valid, contentType: 'text/plain' },
    { ...valid, body: { kind: 'sized', bytes: 1_048_577 } },
  );
  return cases;
}

/** The request a case describes, with the world's tokens and a fresh valid body. */
export async function requestOf(world: RestWorld, operation: Operation, c: RestCase): Promise<FuzzRequest> {
  let index = 0;
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const part = c.ids[index++]!;
    return part.$ === 'text' && part.text === '(fixture)'
      ? (world.ids[name]?.[0] ?? randomUUID())
      : urlPartText(part);
  });
  const query = formText([], { changes: c.query });
  const headers: Record<string, string> = {};
  const tokens = tokensFor(world, operation);
  const forged = forgedAuthorizations(tokens.right ?? world.tokens.user);
  if (c.auth === 0 && tokens.right) headers.authorization = `Bearer ${tokens.right}`;
  else if (c.auth === 1) headers.authorization = `Bearer ${tokens.wrong}`;
  else if (c.auth >= 3) headers.authorization = forged[(c.auth - 3) % forged.length]!;
  const body = bodyBytes(c.body, await world.seedFor(operation, c.seed), undefined);
  if (c.contentType === '(own)') {
    if (body !== undefined) headers['content-type'] = operation.bodyType ?? 'application/vnd.api+json';
  } else if (c.contentType !== '(none)') headers['content-type'] = c.contentType;
  if (c.accept !== '(none)') headers.accept = c.accept;
  if (c.version !== null) headers['service-api-version'] = c.version;
  if (c.idempotencyKey === '(fresh)') headers['idempotency-key'] = randomUUID();
  else if (c.idempotencyKey !== '(none)') headers['idempotency-key'] = c.idempotencyKey;
  if (c.requestId !== null) headers['x-request-id'] = c.requestId;
  if (c.traceparent !== null) headers.traceparent = c.traceparent;
  for (const [name, value] of c.extra) headers[name] = value;
  return { method: c.method, url: query ? `${path}?${query}` : path, headers, body };
}
