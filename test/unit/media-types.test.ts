import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { accepts, isContentType, JSON_API_MEDIA, JSON_MEDIA } from '../../src/platform/media-types.ts';
import { requestIdOf, traceIdOf } from '../../src/platform/request-id.ts';

test('accepts follows JSON:API negotiation', () => {
  assert.equal(accepts(undefined, JSON_API_MEDIA), true);
  assert.equal(accepts('', JSON_API_MEDIA), true);
  assert.equal(accepts(JSON_API_MEDIA, JSON_API_MEDIA), true);
  assert.equal(accepts('APPLICATION/VND.API+JSON', JSON_API_MEDIA), true);
  assert.equal(accepts(`${JSON_API_MEDIA}; ext="https://jsonapi.org/ext/atomic"`, JSON_API_MEDIA), false);
  assert.equal(accepts(`${JSON_API_MEDIA}; ext=x, ${JSON_API_MEDIA}`, JSON_API_MEDIA), true);
  assert.equal(accepts(`${JSON_API_MEDIA}; profile="https://example.com/p"`, JSON_API_MEDIA), true);
  assert.equal(accepts(`${JSON_API_MEDIA}; profile=x`, JSON_MEDIA), true);
  assert.equal(accepts(`${JSON_API_MEDIA}; profile=x; ext=y`, JSON_API_MEDIA), false);
  assert.equal(accepts(`${JSON_API_MEDIA}; version=2`, JSON_API_MEDIA), false);
  assert.equal(accepts('text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', JSON_API_MEDIA), true);
  assert.equal(accepts('application/json', JSON_API_MEDIA), false);
  assert.equal(accepts('application/json', JSON_MEDIA), true);
  assert.equal(accepts('*/*;q=0', JSON_MEDIA), false);
});

test('isContentType allows a UTF-8 charset parameter, and on JSON:API a profile', () => {
  assert.equal(isContentType(JSON_API_MEDIA, JSON_API_MEDIA), true);
  assert.equal(isContentType(`${JSON_API_MEDIA};charset=UTF-8`, JSON_API_MEDIA), true);
  assert.equal(isContentType(`${JSON_API_MEDIA}; charset=latin1`, JSON_API_MEDIA), false);
  assert.equal(isContentType(`${JSON_API_MEDIA}; profile=x`, JSON_API_MEDIA), true);
  assert.equal(isContentType(`${JSON_API_MEDIA}; profile="x y"; charset=utf-8`, JSON_API_MEDIA), true);
  assert.equal(isContentType(`${JSON_API_MEDIA}; ext="x"`, JSON_API_MEDIA), false);
  assert.equal(isContentType(`${JSON_API_MEDIA}; profile=x; ext=x`, JSON_API_MEDIA), false);
  assert.equal(isContentType(`${JSON_MEDIA}; profile=x`, JSON_MEDIA), false);
  assert.equal(isContentType(undefined, JSON_API_MEDIA), false);
  assert.equal(isContentType('application/json', JSON_API_MEDIA), false);
});

test('negotiation never throws on any header text', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (header) => {
      assert.equal(typeof accepts(header, JSON_API_MEDIA), 'boolean');
      assert.equal(typeof isContentType(header, JSON_API_MEDIA), 'boolean');
    }),
    { seed: 20261122, numRuns: 500 },
  );
});

test('request and trace ids', () => {
  const make = (headers: Record<string, string>) => requestIdOf({ headers } as never, () => 'fresh');
  assert.equal(make({ 'x-request-id': 'abc-123_XYZ.9' }), 'abc-123_XYZ.9');
  assert.equal(make({ 'x-request-id': 'short' }), 'fresh');
  assert.equal(make({ 'x-request-id': 'x'.repeat(129) }), 'fresh');
  assert.equal(make({}), 'fresh');
  assert.equal(
    traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
    '4bf92f3577b34da6a3ce929d0e0e4736',
  );
  assert.equal(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01'), undefined);
  assert.equal(traceIdOf('garbage'), undefined);
});
