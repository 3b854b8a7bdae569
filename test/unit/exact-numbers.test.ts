import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lossyNumber } from '../../src/platform/exact-numbers.ts';

test('a number that parsing turns into another whole number is found, with where it is', () => {
  assert.deepEqual(lossyNumber('{"data":{"attributes":{"amount":499.9999999999999999999}}}'), {
    pointer: '/data/attributes/amount',
    source: '499.9999999999999999999',
    value: 500,
  });
  assert.deepEqual(lossyNumber('{"a":[1,{"b/c":9007199254740993}]}'), {
    pointer: '/a/1/b~1c',
    source: '9007199254740993',
    value: 9007199254740992,
  });
  assert.equal(lossyNumber('{"n":1e-400}')?.value, 0, 'a fraction that underflows to zero');
  assert.equal(lossyNumber('{"n":-0.99999999999999999999}')?.pointer, '/n');
  assert.ok(lossyNumber('{"n":5e300}'), 'a whole number a double cannot hold');
});

test('numbers read as sent, and fractions that stay fractions, are left alone', () => {
  for (const text of [
    '{"n":500}',
    '{"n":-0}',
    '{"n":2000.000}',
    '{"n":12.5e1}',
    '{"n":1.5}',
    '{"n":0.1}',
    '{"n":1e16}',
    '{"n":9007199254740992}',
    '{"n":1E2,"m":-2.50e+1}',
    '{"n":100e-2}',
    '{"n":1e400}',
    '{"when":"2026-03-12T14:00:00.000Z","id":"1234567890123456789"}',
  ])
    assert.equal(lossyNumber(text), undefined, text);
});
