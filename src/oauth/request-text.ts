import type { FastifyRequest } from 'fastify';
import { findTextProblem, type TextFinding } from '../domain/input-text.ts';

/**
 * What the authorization server reads from a request, checked once where it arrives, before oidc-provider or our
 * pages see it: a form body and a query string must be strictly encoded (every `%` followed by two hex digits,
 * well-formed UTF-8, nothing silently replaced), and every name and value, path parameter and Basic credential
 * must pass the one rule for text from outside (src/domain/input-text.ts). PostgreSQL refuses a NUL, and no
 * parameter of ours is meant to hold a control character.
 */

/** A request the authorization server refuses before reading it: `status` 400 or 415, and why, for people. */
export class RefusedInput extends Error {
  override name = 'RefusedInput';
  readonly statusCode: number;
  constructor(message: string, statusCode = 400) {
    super(message);
    this.statusCode = statusCode;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;

/** Bytes that must be UTF-8, decoded; a sequence that is not is refused rather than replaced. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new RefusedInput(`The ${what} is not valid UTF-8.`);
  }
}

/**
 * `application/x-www-form-urlencoded` text as name–value pairs in order, strictly: an escape that is not `%` and
 * two hex digits, or escapes that do not make UTF-8, are refused (URLSearchParams would keep or replace them).
 */
export function parseUrlEncoded(text: string, what: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const [name, value] = equals === -1 ? [part, ''] : [part.slice(0, equals), part.slice(equals + 1)];
    pairs.push([decodeComponent(name, what), decodeComponent(value, what)]);
  }
  return pairs;
}

function decodeComponent(raw: string, what: string): string {
  if (BAD_ESCAPE.test(raw))
    throw new RefusedInput(`The ${what} has a % that is not followed by two hex digits.`);
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new RefusedInput(`The ${what} has percent-escapes that are not valid UTF-8.`);
  }
}

/**
 * Refuses a form that sends a field twice: which of two values counts is a guess, and a proxy or a log may read the
 * other (as JSON bodies' repeated members are refused).
 */
export function refuseRepeatedNames(pairs: [string, string][], what: string): void {
  const seen = new Set<string>();
  for (const [name] of pairs) {
    if (seen.has(name)) throw new RefusedInput(`The ${what} sends ${name.slice(0, 40)} more than once.`);
    seen.add(name);
  }
}

/** The form as one object (the last of repeated names wins, as URLSearchParams does). */
export function formObject(pairs: [string, string][]): Record<string, string> {
  const form: Record<string, string> = Object.create(null);
  for (const [name, value] of pairs) form[name] = value;
  return form;
}

/** Refuses a body whose media type names a charset other than UTF-8: 415. */
export function checkCharset(contentType: string | undefined): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new RefusedInput(`Only UTF-8 is accepted (the body says charset=${charset}).`, 415);
  }
}

/** The client id and secret of an `Authorization: Basic` header, decoded as RFC 6749 §2.3.1 says. */
function basicCredentials(header: string | undefined): [string, string][] {
  const match = /^basic\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return [];
  const decoded = decodeUtf8(Buffer.from(match[1]!, 'base64'), 'Authorization header');
  const colon = decoded.indexOf(':');
  if (colon === -1) return [];
  return [
    ['client_id', decodeComponent(decoded.slice(0, colon), 'Authorization header')],
    ['client_secret', decodeComponent(decoded.slice(colon + 1), 'Authorization header')],
  ];
}

/** The checked body a parser of this listener left on the request (see auth-app.ts and interactions.ts). */
export const checkedBody = Symbol('checked body');
type WithCheckedBody = FastifyRequest & { [checkedBody]?: [string, string][] | unknown };

/**
 * Checks everything of a request a handler of the authorization server reads: path parameters, the query string
 * (strictly decoded again, since Fastify's parser is lenient), the parsed body and Basic credentials. Throws
 * RefusedInput naming the first parameter that breaks the rule.
 */
export function checkRequestText(request: FastifyRequest): void {
  const rawUrl = request.raw.url ?? '';
  const query = rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '';
  const parts: [string, unknown][] = [
    ['path', request.params],
    ['query string', parseUrlEncoded(query, 'query string')],
    ['body', (request as WithCheckedBody)[checkedBody] ?? request.body],
    ['Authorization header', basicCredentials(request.headers.authorization)],
  ];
  for (const [where, value] of parts) {
    const finding = findTextProblem(value);
    if (finding) throw new RefusedInput(`${whatFailed(value, finding)} in the ${where} ${finding.problem}`);
  }
}

/** The parameter a finding is in, by name when the name itself is acceptable. */
function whatFailed(value: unknown, finding: TextFinding): string {
  const pair = /^\/(\d+)\/([01])$/.exec(finding.pointer);
  const name = Array.isArray(value) && pair ? (value[Number(pair[1])] as [string, string])[0] : undefined;
  if (pair?.[2] === '0' || finding.key) return 'A parameter name';
  if (name !== undefined) return `The parameter "${name.slice(0, 60)}"`;
  return finding.pointer ? `The value at ${finding.pointer.slice(0, 80)}` : 'A value';
}
