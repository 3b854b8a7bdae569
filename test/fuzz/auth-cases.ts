import fc from 'fast-check';
import type { AuthOperation, AuthWorld, LiveInteraction } from './auth-world.ts';
import {
  type BodyPlan,
  bodyBytes,
  bodyPlan,
  type EntryChange,
  entryChanges,
  entryValues,
  formText,
} from './body-plans.ts';
import type { FuzzRequest } from './fuzz-request.ts';
import { ACCEPTS, CONTENT_TYPES, extraHeaders } from './header-variants.ts';
import { hostileUrlPart, type UrlPart, urlPartText } from './hostile-values.ts';

const FORM = 'application/x-www-form-urlencoded';
/** What a browser asks for when it loads a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** One request to an operation of the authorization server, as a description. */
export interface AuthCase {
  method: string;
  /** The interaction id in the path: the live one, or a hostile one. */
  uid: UrlPart | null;
  /** Which valid query and form the changes start from. */
  seed: number;
  query: EntryChange[];
  form: EntryChange[];
  /** Index into the operation's `Authorization` values (0: the valid one). */
  authorization: number;
  /**
   * 0: the live interaction's cookies; 1: none; 2: a tampered interaction cookie; 3: without the CSRF cookie.
   */
  cookies: number;
  contentType: string;
  accept: string;
  extra: [string, string][];
  body: BodyPlan;
}

/** Values OAuth parameters and sign-in forms are tried with, beside hostile text. */
const OAUTH_VALUES = [
  'client_credentials',
  'authorization_code',
  'refresh_token',
  'password',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'openid user:read',
  'user:read user:read_write',
  'admin:operator',
  'openid offline_access',
  'code',
  'token',
  'code id_token',
  'none',
  'form_post',
  'web_message',
  'query.jwt',
  'S256',
  'plain',
  'login',
  'consent',
  'select_account',
  '-1',
  '1e999',
  'https://partner.example/callback',
  'https://evil.example/callback',
  'http://127.0.0.1:1/callback',
  'javascript:alert(1)',
  'demo-partner-server',
  'e30.e30.e30',
  'eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.',
  '{"userinfo":{"sub":{"value":"x"}},"__proto__":{"x":1}}',
  '{"id_token":{"__proto__":null}}',
  'allow',
  'deny',
  'yes',
  'E-FUZZ-1',
  'NOBODY@PEOPLE.EXAMPLE',
  'a@b',
  '',
] as const;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'] as const;

function fieldNames(operation: AuthOperation): string[] {
  return [...new Set([...operation.queries.flat(), ...operation.forms.flat()].map(([name]) => name))];
}

export function authCase(operation: AuthOperation): fc.Arbitrary<AuthCase> {
  const names = [
    ...fieldNames(operation),
    'client_id',
    'client_secret',
    'scope',
    'resource',
    'request',
    'request_uri',
    'claims',
    'client_assertion',
    'client_assertion_type',
  ];
  const values = entryValues([
    fc.constantFrom(...OAUTH_VALUES).map((text) => ({ $: 'text' as const, text })),
  ]);
  const seeds = Math.max(operation.queries.length, operation.forms.length);
  return fc.record({
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(operation.method) }, fc.constantFrom(...METHODS)),
    uid: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, hostileUrlPart),
    seed: fc.nat({ max: seeds - 1 }),
    query: operation.queries.some((query) => query.length > 0)
      ? entryChanges(names, values)
      : fc.oneof({ weight: 6, arbitrary: fc.constant<EntryChange[]>([]) }, entryChanges(names, values)),
    form: entryChanges(names, values),
    authorization: fc.oneof(
      { weight: 6, arbitrary: fc.constant(0) },
      fc.nat({ max: operation.authorizations.length - 1 }),
    ),
    cookies: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, fc.nat({ max: 3 })),
    contentType: fc.oneof({ weight: 10, arbitrary: fc.constant('(own)') }, fc.constantFrom(...CONTENT_TYPES)),
    accept: fc.oneof(
      { weight: 8, arbitrary: fc.constant(operation.shape === 'html' ? BROWSER_ACCEPT : '(none)') },
      fc.constantFrom(...ACCEPTS),
      fc.constant('text/html'),
    ),
    extra: fc.oneof({ weight: 6, arbitrary: fc.constant<[string, string][]>([]) }, extraHeaders),
    body: bodyPlan({ hasBody: operation.forms.some((form) => form.length > 0) }),
  });
}

function validCase(operation: AuthOperation): AuthCase {
  return {
    method: operation.method,
    uid: null,
    seed: 0,
    query: [],
    form: [],
    authorization: 0,
    cookies: 0,
    contentType: '(own)',
    accept: operation.shape === 'html' ? BROWSER_ACCEPT : '(none)',
    extra: [],
    body:
      operation.forms[0]!.length > 0
        ? { kind: 'seed', json: [], text: [], encoding: 'utf8' }
        : { kind: 'none' },
  };
}

const set = (at: number, text: string): EntryChange => ({ op: 'set', at, value: { $: 'text', text } });

/**
 * The listed classes on every operation: NUL, a lone surrogate and bytes that are not UTF-8 in each parameter
 * (client_id, token, the sign-in and sign-up fields…), a bad percent-encoding, a charset other than UTF-8, a
 * form over the limit, hostile interaction ids.
 */
export function listedAuthClasses(operation: AuthOperation): AuthCase[] {
  const valid = validCase(operation);
  const cases: AuthCase[] = [valid];
  operation.forms.forEach((form, seed) => {
    form.forEach((_field, at) => {
      // A lone surrogate travels in a form only as its bytes, which are not UTF-8.
      const surrogate: EntryChange = { op: 'set', at, value: { $: 'bytes', bytes: [0xed, 0xa0, 0x80] } };
      for (const change of [set(at, 'a\u0000b'), surrogate]) cases.push({ ...valid, seed, form: [change] });
    });
  });
  operation.queries.forEach((query, seed) => {
    query.forEach((_field, at) => {
      cases.push({ ...valid, seed, query: [set(at, 'a\u0000b')] });
    });
  });
  if (operation.forms[0]!.length > 0) {
    cases.push(
      { ...valid, form: [{ op: 'set', at: 0, value: { $: 'verbatim', text: '%zz' } }] },
      { ...valid, contentType: `${FORM}; charset=latin1` },
      { ...valid, form: [{ op: 'set', at: 1, value: { $: 'long', unit: 'a', times: 20_000 } }] },
    );
  }
  if (operation.path.includes('{uid}'))
    for (const uid of [
      { $: 'text', text: 'a\u0000b' },
      { $: 'verbatim', text: '%zz' },
      { $: 'long', unit: 'a', times: 101 },
    ] as const)
      cases.push({ ...valid, uid });
  for (let authorization = 1; authorization < operation.authorizations.length; authorization++)
    cases.push({ ...valid, authorization });
  return cases;
}

/** The request a case describes; operations on an interaction get a new live one. */
export async function authRequestOf(
  world: AuthWorld,
  operation: AuthOperation,
  c: AuthCase,
): Promise<{ request: FuzzRequest; interaction?: LiveInteraction }> {
  const interaction = operation.interaction ? await world.interaction(operation.interaction) : undefined;
  const uid = c.uid ? urlPartText(c.uid) : (interaction?.uid ?? 'none');
  const path = operation.path.replace('{uid}', uid);
  const query = formText(operation.queries[c.seed % operation.queries.length]!, { changes: c.query });
  const fields = (operation.forms[c.seed % operation.forms.length] ?? []).map(
    ([name, value]): [string, string] => [name, value === '(live)' ? (interaction?.csrf ?? '') : value],
  );
  const body = bodyBytes(c.body, { type: 'form', fields }, { changes: c.form });
  const headers: Record<string, string> = {};
  const authorization = operation.authorizations[c.authorization % operation.authorizations.length]!;
  if (authorization) headers.authorization = authorization;
  if (c.contentType === '(own)') {
    if (body !== undefined) headers['content-type'] = FORM;
  } else if (c.contentType !== '(none)') headers['content-type'] = c.contentType;
  if (c.accept !== '(none)') headers.accept = c.accept;
  if (interaction && c.cookies !== 1) {
    const cookies = new Map(interaction.jar.cookies);
    if (c.cookies === 2)
      for (const name of cookies.keys()) if (name.startsWith('_interaction')) cookies.set(name, 'tampered');
    if (c.cookies === 3) cookies.delete('ewa_csrf');
    headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  for (const [name, value] of c.extra) headers[name] = value;
  return {
    request: { method: c.method, url: query ? `${path}?${query}` : path, headers, body },
    ...(interaction ? { interaction } : {}),
  };
}
