import fc from 'fast-check';
import { asHeaderValue, hostileText } from './hostile-values.ts';

/** `(own)`: the operation's own body type when a body is sent; `(none)`: no Content-Type at all. */
export const CONTENT_TYPES = [
  '(own)',
  '(none)',
  'application/vnd.api+json',
  'application/vnd.api+json; charset=utf-8',
  'application/vnd.api+json; charset=UTF-8',
  'application/vnd.api+json; charset=latin1',
  'application/vnd.api+json; charset=iso-8859-1',
  'application/vnd.api+json; charset=utf-16',
  'application/vnd.api+json;charset="utf-8"',
  'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
  'application/vnd.api+json; profile="https://example.com/p"',
  'application/vnd.api+json; foo=bar',
  'APPLICATION/VND.API+JSON',
  'application/vnd.api+json, application/json',
  'application/json',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=latin1',
  'multipart/form-data; boundary=x',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/csv',
  'text/csv; charset=latin1',
  'text/csv; charset=utf-16',
  'text/html',
  'application/octet-stream',
  'application/xml',
  '*/*',
  'application/*',
  '',
  ';',
  'application/',
  'a'.repeat(3000),
] as const;

export const ACCEPTS = [
  '(none)',
  '*/*',
  'application/vnd.api+json',
  'application/json',
  'application/vnd.api+json, application/json;q=0.5',
  'text/html',
  'application/vnd.api+json; q=0',
  'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
  'application/vnd.api+json; profile="x", application/vnd.api+json; ext="y"',
  'application/*',
  'text/*;q=0.5, */*;q=0.1',
  '',
  ',,,',
  'application/vnd.api+json;q=abc',
  '*/*;q=0',
  'a'.repeat(3000),
] as const;

export const VERSIONS = ['3', '2', '03', '3.0', ' 3', '', 'x'.repeat(300), '3, 3'] as const;

export const REQUEST_IDS = [
  'fuzz-request-0001',
  '',
  'short',
  'x'.repeat(129),
  'has space in it',
  '../../etc/passwd',
  '<script>x</script>',
] as const;

export const TRACEPARENTS = [
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
  'ff-zz',
  'x'.repeat(1000),
] as const;

/** Headers that proxies and browsers add, with hostile values. */
export const EXTRA_HEADER_NAMES = [
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'origin',
  'referer',
  'cookie',
  'x-http-method-override',
  'content-encoding',
  'expect',
  'range',
  'if-none-match',
  'access-control-request-method',
  'prefer',
] as const;

export const extraHeaders: fc.Arbitrary<[string, string][]> = fc.array(
  fc.tuple(fc.constantFrom(...EXTRA_HEADER_NAMES), hostileText.map(asHeaderValue)),
  { maxLength: 2 },
);
