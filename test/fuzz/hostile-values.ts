import fc from 'fast-check';

/**
 * Pieces of text that broke servers before: control characters (NUL first: PostgreSQL refuses it),
 * bidirectional and zero-width characters, lone surrogates, encodings of them, quoting and injection
 * attempts, names that live on Object.prototype, numbers and dates out of every range, and a statement that
 * would sleep if it ever reached SQL as text (the answer bound catches it).
 */
export const HOSTILE_FRAGMENTS = [
  '\u0000',
  '\u0001',
  '\u0008',
  '\t',
  '\n',
  '\r\n',
  '\u001b[31m',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u2028',
  '\u2029',
  '\u202e',
  '\u2066',
  '\u061c',
  '\u200b',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\ud800',
  '\udfff',
  '\udbff\udfff',
  '\uffff',
  '\ufffd',
  'e\u0301',
  '💸',
  '２０２６',
  'İ',
  'ß',
  '%00',
  '%',
  '%zz',
  '%ED%A0%80',
  '%C0%80',
  '%2e%2e%2f',
  '%2F',
  '+',
  '&',
  '=',
  '"',
  "'",
  '\\',
  '\\u0000',
  '`',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template injection probe, sent as text.
  '${7*7}',
  "' OR '1'='1",
  "'; select pg_sleep(5); --",
  'NULL',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  '9007199254740993',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '../',
  '*',
  '(',
  ')',
  ':',
  '~',
  ' ',
  '\u00a0',
  '300000-01-01',
  '-infinity',
  'epoch',
] as const;

/** Text made of hostile pieces and random characters (any code point, lone surrogates included). */
export const hostileText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_FRAGMENTS) },
      { weight: 2, arbitrary: fc.string({ maxLength: 10 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((pieces) => pieces.join(''));

/**
 * Byte sequences that are not UTF-8: stray continuation bytes, overlong forms, encoded surrogates, cut
 * sequences.
 */
export const invalidUtf8: fc.Arbitrary<number[]> = fc.oneof(
  fc.constantFrom<number[]>(
    [0xff],
    [0xfe, 0xff],
    [0x80],
    [0xc0, 0x80],
    [0xc3],
    [0xe2, 0x80],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
  ),
  fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 4 }),
);

/** Dates for date filters: out of PostgreSQL's range, impossible, special words, and good ones. */
export const DATE_TEXTS = [
  '300000-01-01',
  '300000-01-01T00:00:00Z',
  '+300000-01-01T00:00:00Z',
  '-001000-01-01',
  '294277-01-01T00:00:00Z',
  '10000-01-01',
  '0000-01-01',
  '0001-01-01',
  '1969-12-31T23:59:59.999Z',
  '2026-02-30',
  '2026-13-01',
  '2026-03-11T25:00:00Z',
  '2026-03-11T15:30:00+99:00',
  '2026-03-11T15:30:00.123456789Z',
  '2026-03-11',
  '2026-03-11T15:30:00Z',
  '2026-03-11T15:30:00.000Z',
  'infinity',
  '-infinity',
  'epoch',
  'now',
  'allballs',
  '1e999',
  '1741707000000',
  '２０２６-03-11',
  '2026-03-11\u0000',
] as const;

/**
 * A value to put somewhere in a body, as a description (so that a counterexample prints small): plain JSON,
 * text, a long run of one character, JSON nested very deep, raw JSON text (tokens JSON.stringify never
 * writes: `1e999`, `-0`, escapes of lone surrogates), or bytes that are not UTF-8 inside a string.
 */
export type Hostile =
  | { $: 'json'; value: unknown }
  | { $: 'long'; unit: string; times: number }
  | { $: 'deep'; shape: 'array' | 'object'; depth: number }
  | { $: 'raw'; text: string }
  | { $: 'bytes'; bytes: number[] };

const hostileNumber = fc.oneof(
  fc.constantFrom(0, -1, 1, 1.5, 2 ** 31, 2 ** 53 + 2, 1e21, 1e308, -1e308, 5e-324, 100_000_000_001),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

export const RAW_JSON_TOKENS = [
  '1e999',
  '-1e999',
  '-0',
  '0.0000000000000000000001',
  '123456789012345678901234567890',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u202e"',
  '"\\/"',
  'NaN',
  '01',
  '1.',
  '.5',
  '+1',
  'tru',
  '"\\x00"',
  '"\\u00"',
  "'single'",
  '[1,]',
  '{"a":1,}',
  '/* comment */ 1',
] as const;

export const hostileValue: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 5, arbitrary: hostileText.map((value) => ({ $: 'json' as const, value })) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.constantFrom(null, true, false, '', [], {}),
        hostileNumber,
        fc.jsonValue({ maxDepth: 2 }),
        fc.array(hostileText, { maxLength: 3 }),
      )
      .map((value) => ({ $: 'json' as const, value })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      $: fc.constant('long' as const),
      unit: fc.constantFrom('x', '9', 'é', '\u0000', '💸', '\u202e', ' '),
      times: fc.constantFrom(101, 1001, 20_000, 300_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      $: fc.constant('deep' as const),
      shape: fc.constantFrom('array' as const, 'object' as const),
      depth: fc.constantFrom(100, 10_000, 100_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...RAW_JSON_TOKENS).map((text) => ({ $: 'raw' as const, text })),
  },
  { weight: 1, arbitrary: invalidUtf8.map((bytes) => ({ $: 'bytes' as const, bytes })) },
);

/**
 * Member names a body may be given: JSON:API's own, fields the description does not define, prototype names.
 */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    'id',
    'type',
    'meta',
    'links',
    'included',
    'jsonapi',
    'status',
    'fee',
    'memo',
    'attributes',
    'relationships',
    'data',
    'errors',
    '$ref',
    '',
    'a'.repeat(300),
  ),
  hostileText,
);

/** The text of a JSON value nested `depth` levels deep. */
export function deepJson(shape: 'array' | 'object', depth: number): string {
  return shape === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
}

/** A hostile value as bytes of JSON text. */
export function hostileJsonBytes(value: Hostile): Buffer {
  switch (value.$) {
    case 'json':
      return Buffer.from(JSON.stringify(value.value) ?? 'null');
    case 'long':
      return Buffer.from(JSON.stringify(value.unit.repeat(value.times)));
    case 'deep':
      return Buffer.from(deepJson(value.shape, value.depth));
    case 'raw':
      return Buffer.from(value.text);
    case 'bytes':
      return Buffer.concat([Buffer.from('"ab'), Buffer.from(value.bytes), Buffer.from('cd"')]);
  }
}

/** A hostile value as bytes of plain text (a CSV cell, a form field). */
export function hostileTextBytes(value: Hostile): Buffer {
  switch (value.$) {
    case 'json':
      return Buffer.from(typeof value.value === 'string' ? value.value : (JSON.stringify(value.value) ?? ''));
    case 'long':
      return Buffer.from(value.unit.repeat(value.times));
    case 'deep':
      return Buffer.from(deepJson(value.shape, value.depth));
    case 'raw':
      return Buffer.from(value.text);
    case 'bytes':
      return Buffer.from(value.bytes);
  }
}

/**
 * Header values as HTTP can carry them: tab, visible ASCII and obs-text bytes (read as latin1); no CR, LF,
 * NUL.
 */
export function asHeaderValue(text: string): string {
  const bytes = Buffer.from(text).toString('latin1');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters HTTP forbids in a header value.
  return bytes.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');
}

/**
 * Percent-encodes bytes for a URL: unreserved ASCII as is, every other byte as %XX (so any byte can be sent).
 */
export function percentEncode(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * One part of a URL or a form (a path id, a query name or value, a form field): text we encode, text put in
 * as is (bad percent-encodings, stray `&` and `=`), a long run, or bytes that are not UTF-8
 * (percent-encoded).
 */
export type UrlPart =
  | { $: 'text'; text: string }
  | { $: 'verbatim'; text: string }
  | { $: 'long'; unit: string; times: number }
  | { $: 'bytes'; bytes: number[] };

const VERBATIM_PARTS = [
  '%',
  '%zz',
  '%u0000',
  '%%',
  '%0',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%00',
  '%2500',
  '%2F',
  '%5C',
  '%2e%2e',
  '..',
  '.',
  'a&b=c',
  '=',
  '&&',
  '[]',
  '[',
  ']',
  '][',
  '%5B__proto__%5D',
  ';',
  '+',
  '@',
  "'",
  '"',
  '<',
  '{',
  '|',
  '^',
  '`',
] as const;

export const hostileUrlPart: fc.Arbitrary<UrlPart> = fc.oneof(
  { weight: 5, arbitrary: hostileText.map((text) => ({ $: 'text' as const, text })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(...VERBATIM_PARTS).map((text) => ({ $: 'verbatim' as const, text })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      $: fc.constant('long' as const),
      unit: fc.constantFrom('a', '9', 'é', '%00'),
      times: fc.constantFrom(37, 101, 2000, 9000),
    }),
  },
  { weight: 1, arbitrary: invalidUtf8.map((bytes) => ({ $: 'bytes' as const, bytes })) },
);

/** A URL part as it goes into the URL. */
export function urlPartText(part: UrlPart): string {
  switch (part.$) {
    case 'text':
      return percentEncode(Buffer.from(part.text));
    case 'verbatim':
      return part.text;
    case 'long':
      return part.unit === '%00'
        ? part.unit.repeat(part.times)
        : percentEncode(Buffer.from(part.unit.repeat(part.times)));
    case 'bytes':
      return percentEncode(Buffer.from(part.bytes));
  }
}
