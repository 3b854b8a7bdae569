import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSON_DEPTH_MAX, JSON_VALUES_MAX, jsonShapeRefused } from '../../src/platform/json-shape.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const list = (values: number) =>
  `[${Array(values - 1)
    .fill('0')
    .join(',')}]`;

test('a body nested deeper than the limit, or with more values, is refused naming which; up to them it passes', () => {
  assert.equal(jsonShapeRefused(nested(JSON_DEPTH_MAX)), undefined);
  assert.match(jsonShapeRefused(nested(JSON_DEPTH_MAX + 1))?.detail ?? '', /nests deeper than 32 levels/);
  assert.match(
    jsonShapeRefused(`${'{"a":'.repeat(500_000)}1${'}'.repeat(500_000)}`)?.detail ?? '',
    /nests deeper/,
  );
  assert.equal(jsonShapeRefused(list(JSON_VALUES_MAX)), undefined);
  assert.match(jsonShapeRefused(list(JSON_VALUES_MAX + 1))?.detail ?? '', /more than 10000 values/);
  assert.equal(jsonShapeRefused(list(JSON_VALUES_MAX + 1))?.code, 'INVALID_USER_INPUT');
});

test('brackets and commas inside strings, escaped quotes among them, are not counted', () => {
  const inside = `"${'[{,'.repeat(20_000)}\\"${'[{,'.repeat(20_000)}"`;
  assert.equal(jsonShapeRefused(`{"data":{"attributes":{"name":${inside}}}}`), undefined);
  assert.equal(
    jsonShapeRefused(`["\\\\", ${nested(JSON_DEPTH_MAX - 1)}]`),
    undefined,
    'an escaped backslash ends',
  );
  assert.ok(jsonShapeRefused(`["\\\\", ${nested(JSON_DEPTH_MAX)}]`), 'so the brackets after it count');
});

test('text that is not JSON is left to the parser', () => {
  for (const text of ['', 'not json', '{"a":', ']]]]', '"unterminated'])
    assert.equal(jsonShapeRefused(text), undefined);
});
