import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { findTextProblem, textProblem } from '../../src/domain/input-text.ts';

test('names with accents, apostrophes and other scripts are accepted', () => {
  for (const name of ["O'Brien", 'José Núñez', '李小龍', 'Anne-Marie', 'Zoë  Smith', '']) {
    assert.equal(textProblem(name), undefined, name);
  }
});

test('control, bidirectional and zero-width characters and lone surrogates are refused', () => {
  const refused = [
    'a\u0000b',
    'tab\there',
    'line\nbreak',
    '\u007f',
    '\u0085',
    'a\u2028b',
    '\u202egnp.exe',
    'x\u2066y',
    'zero\u200bwidth',
    '\ufeffbom',
    'lone\ud800',
  ];
  for (const text of refused) assert.ok(textProblem(text), JSON.stringify(text));
});

test('the walker names the first offending value or key by JSON pointer', () => {
  assert.equal(findTextProblem({ data: { attributes: { name: 'ok', tags: ['fine'] } } }), undefined);
  assert.deepEqual(findTextProblem({ data: { attributes: { name: 'ok', list: ['a', 'b\u0000'] } } }), {
    pointer: '/data/attributes/list/1',
    key: false,
    problem: 'contains a control character or line break.',
  });
  assert.equal(findTextProblem({ 'a/b\u0000': 1 })?.pointer, '/a~1b\u0000');
  assert.equal(findTextProblem({ 'a\u0000': 1 })?.key, true);
  assert.equal(findTextProblem('\u202e')?.pointer, '');
});

test('any string holding a refused character is found wherever it is nested', () => {
  const bad = fc.constantFrom('\u0000', '\u001b', '\u202e', '\u200b', '\ud800');
  fc.assert(
    fc.property(fc.string(), bad, fc.string(), fc.array(fc.string()), (before, char, after, others) => {
      const value = { data: { attributes: { others, nested: [{ deep: `${before}${char}${after}` }] } } };
      assert.ok(findTextProblem(value));
    }),
  );
});
