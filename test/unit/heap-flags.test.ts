import assert from 'node:assert/strict';
import { test } from 'node:test';
import { missingHeapFlags } from '../../src/cli/heap-flags.ts';
import { ConfigError, heapConfigOf, loadConfig } from '../../src/config.ts';

test('ewa serve sizes the heap by default: semi-spaces of 4 MB, the old generation 20 % over its live data', () => {
  const heap = loadConfig({ DATABASE_URL: 'postgres://db.example/ewa' }).heap;
  assert.deepEqual(heap, { semiSpaceMb: 4, growingPercent: 20, wasmLiftoffOnly: false });
  assert.deepEqual(missingHeapFlags(heap, [], ''), ['--max-semi-space-size=4', '--heap-growing-percent=20']);
});

test('on the embedded database, WebAssembly is compiled by the baseline compiler only, unless told otherwise', () => {
  const embedded = loadConfig({}).heap;
  assert.equal(embedded.wasmLiftoffOnly, true);
  assert.deepEqual(missingHeapFlags(embedded, [], ''), [
    '--max-semi-space-size=4',
    '--heap-growing-percent=20',
    '--liftoff-only',
  ]);
  assert.equal(heapConfigOf({ EWA_V8_WASM_LIFTOFF_ONLY: 'false' }).wasmLiftoffOnly, false);
  assert.equal(
    heapConfigOf({ DATABASE_URL: 'postgres://db.example/ewa', EWA_V8_WASM_LIFTOFF_ONLY: 'true' })
      .wasmLiftoffOnly,
    true,
  );
  // A process started with the flag, or with its negation, keeps what it was given.
  assert.deepEqual(missingHeapFlags(embedded, ['--no-liftoff-only'], '--max-semi-space-size=2'), [
    '--heap-growing-percent=20',
  ]);
  assert.deepEqual(missingHeapFlags(embedded, ['--liftoff_only'], ''), [
    '--max-semi-space-size=4',
    '--heap-growing-percent=20',
  ]);
  assert.throws(() => heapConfigOf({ EWA_V8_WASM_LIFTOFF_ONLY: 'yes' }), /EWA_V8_WASM_LIFTOFF_ONLY/);
});

test('0 leaves V8 its own sizing, and a flag the process already has (command line or NODE_OPTIONS) wins', () => {
  const heap = heapConfigOf({
    DATABASE_URL: 'postgres://db.example/ewa',
    EWA_V8_SEMI_SPACE_MB: '0',
    EWA_V8_HEAP_GROWING_PERCENT: '50',
  });
  assert.deepEqual(missingHeapFlags(heap, [], ''), ['--heap-growing-percent=50']);
  const defaults = heapConfigOf({ DATABASE_URL: 'postgres://db.example/ewa' });
  assert.deepEqual(missingHeapFlags(defaults, ['--max-semi-space-size=32'], ''), [
    '--heap-growing-percent=20',
  ]);
  assert.deepEqual(missingHeapFlags(defaults, ['--heap_growing_percent=5'], '--max_semi_space_size=16'), []);
  assert.deepEqual(
    missingHeapFlags(defaults, ['--max-semi-space-size=4', '--heap-growing-percent=20'], ''),
    [],
  );
});

test('a value out of range names its variable', () => {
  assert.throws(
    () => heapConfigOf({ EWA_V8_SEMI_SPACE_MB: '8MB' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /EWA_V8_SEMI_SPACE_MB must be a whole number from 0 to 1024/);
      return true;
    },
  );
  assert.throws(() => loadConfig({ EWA_V8_HEAP_GROWING_PERCENT: '-1' }), /EWA_V8_HEAP_GROWING_PERCENT/);
});
