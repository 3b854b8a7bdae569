import assert from 'node:assert/strict';
import { ERROR_CATALOG } from '../../src/errors/catalog.ts';
import { ANSWER_MS } from './fuzz-settings.ts';

/** What came back for one request, however it was sent (inject or a socket). */
export interface Answer {
  method: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  /** How long the answer took, in milliseconds. */
  ms: number;
}

/**
 * The documented shape of a failure, by where the request went:
 * - `json-api`: /rest, /admin and every other path of the API listener (docs/integrators/rest-api.md);
 * - `card-error`: card tokenization, the same error document served as application/json (docs/integrators/card-tokenization.md);
 * - `oauth-json`: the authorization server's protocol endpoints, `error`, `error_description` and
 *   `error_code` (docs/integrators/authorization.md: every error body carries error_code);
 * - `html`: the authorization server's pages (authorization, sign-in, sign-up, consent, logout);
 * - `oauth-json-or-html`: where the authorization server negotiates (oidc-provider renders its errors as a
 *   page for a client that asks for HTML, and as the OAuth error JSON otherwise): either, complete.
 */
export type Shape = 'json-api' | 'card-error' | 'oauth-json' | 'html' | 'oauth-json-or-html';

const JSON_API_MEDIA = 'application/vnd.api+json';

/**
 * Text that only an internal failure puts in an answer: a database or parser message, a stack frame, a
 * framework's own error code. A refusal says what was wrong in our words.
 */
const INTERNAL_TEXT = new RegExp(
  [
    // PostgreSQL
    'invalid byte sequence',
    'unsupported Unicode escape',
    'null character not allowed',
    'violates (?:not-null|unique|check|foreign key)',
    'syntax error at or near',
    'out of range for type',
    'field value out of range',
    'invalid input syntax',
    'relation "',
    // Node.js and Fastify
    'node_modules',
    '\\bat (?:async )?[\\w.<>$]+ \\(',
    'FST_ERR_',
    'ERR_[A-Z_]{4,}',
    'ECONNREFUSED',
    'TypeError',
    'RangeError',
    'SyntaxError: ',
  ].join('|'),
);

function header(answer: Answer, name: string): string | undefined {
  const value = answer.headers[name];
  return value === undefined ? undefined : String(value);
}

function parseJson(answer: Answer): unknown {
  try {
    return JSON.parse(answer.body);
  } catch {
    assert.fail(`the body is not JSON: ${answer.body.slice(0, 300)}`);
  }
}

function checkErrorDocument(answer: Answer, mediaType: string): void {
  const type = header(answer, 'content-type') ?? '';
  assert.ok(
    type === mediaType || (mediaType === 'application/json' && type === 'application/json; charset=utf-8'),
    `Content-Type is ${JSON.stringify(type)}, not ${mediaType}`,
  );
  const requestId = header(answer, 'x-request-id');
  assert.ok(requestId, 'no X-Request-Id header');
  assert.equal(header(answer, 'cache-control'), 'no-store', 'no Cache-Control: no-store');
  if (answer.method === 'HEAD') return;
  const document = parseJson(answer) as { errors?: unknown };
  assert.ok(
    Array.isArray(document.errors) && document.errors.length > 0,
    'no errors[] in the error document',
  );
  const error = document.errors[0] as Record<string, unknown>;
  assert.equal(error.status, String(answer.status), 'errors[0].status is not the HTTP status, as a string');
  assert.equal(typeof error.code, 'string', 'errors[0].code is not a string');
  const entry = ERROR_CATALOG[error.code as keyof typeof ERROR_CATALOG];
  assert.ok(
    Object.hasOwn(ERROR_CATALOG, error.code as string),
    `errors[0].code ${error.code} is not in the catalog`,
  );
  assert.equal(entry.status, answer.status, `the catalog gives ${error.code} another status`);
  assert.ok(typeof error.detail === 'string' && error.detail.length > 0, 'errors[0].detail is not a text');
  const links = error.links as Record<string, unknown> | undefined;
  assert.ok(links && typeof links === 'object' && typeof links.about === 'string', 'errors[0].links.about');
  const meta = error.meta as Record<string, unknown> | undefined;
  assert.equal(meta?.request_id, requestId, 'errors[0].meta.request_id is not the X-Request-Id');
  if (answer.status === 401 && mediaType === JSON_API_MEDIA)
    assert.match(
      header(answer, 'www-authenticate') ?? '',
      /^Bearer\b/,
      '401 without WWW-Authenticate: Bearer',
    );
  if (answer.status === 405) assert.ok(header(answer, 'allow'), '405 without Allow');
}

function checkOauthError(answer: Answer): void {
  assert.match(header(answer, 'content-type') ?? '', /^application\/json\b/, 'not application/json');
  assert.ok(header(answer, 'x-request-id'), 'no X-Request-Id header');
  if (answer.method === 'HEAD') return;
  const body = parseJson(answer) as Record<string, unknown>;
  assert.ok(typeof body.error === 'string' && /^[\x20-\x7e]+$/.test(body.error), 'no error code in `error`');
  assert.equal(typeof body.error_description, 'string', 'no error_description');
  assert.equal(body.error_code, body.error, 'error_code is not beside error');
}

function checkHtmlPage(answer: Answer): void {
  assert.match(header(answer, 'content-type') ?? '', /^text\/html\b/, 'not an HTML page');
  assert.ok(header(answer, 'x-request-id'), 'no X-Request-Id header');
  if (answer.method === 'HEAD') return;
  assert.match(answer.body, /<html[\s>]/i, 'not an HTML page');
}

/**
 * The properties every answer has, whatever was sent: never a 5xx, never slower than the bound, and a failure
 * is the documented shape of where the request went and tells nothing internal.
 */
export function checkAnswer(answer: Answer, shape: Shape): void {
  assert.ok(answer.status < 500, `answered ${answer.status}`);
  assert.ok(answer.ms <= ANSWER_MS, `answered after ${Math.round(answer.ms)} ms (bound ${ANSWER_MS} ms)`);
  if (answer.status < 400) return;
  if (shape === 'json-api') checkErrorDocument(answer, JSON_API_MEDIA);
  else if (shape === 'card-error') checkErrorDocument(answer, 'application/json');
  else if (shape === 'oauth-json') checkOauthError(answer);
  else if (shape === 'html') checkHtmlPage(answer);
  else if (/^text\/html\b/.test(header(answer, 'content-type') ?? '')) checkHtmlPage(answer);
  else checkOauthError(answer);
  const internal = INTERNAL_TEXT.exec(answer.body);
  assert.equal(internal, null, `the answer shows internal text: ${internal?.[0]}`);
}

/** The answer in a few lines, for a failure message. */
export function describeAnswer(answer: Answer): string {
  const headers = ['content-type', 'cache-control', 'x-request-id', 'allow', 'www-authenticate']
    .filter((name) => answer.headers[name] !== undefined)
    .map((name) => `${name}: ${answer.headers[name]}`)
    .join('; ');
  const body =
    answer.body.length > 600 ? `${answer.body.slice(0, 600)}… (${answer.body.length} chars)` : answer.body;
  return `${answer.status} after ${Math.round(answer.ms)} ms [${headers}] ${body}`;
}
