import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');

test('docs/operators/configuration.md has a row for every variable src/config.ts reads, and no other', () => {
  const source = readFileSync(join(ROOT, 'src', 'config.ts'), 'utf8');
  const read = new Set([...source.matchAll(/read\.\w+\(\s*'([A-Z][A-Z0-9_]+)'/g)].map((match) => match[1]!));
  const page = readFileSync(join(ROOT, 'docs', 'operators', 'configuration.md'), 'utf8');
  const documented = new Set([...page.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]!));
  assert.ok(read.has('EWA_WORKERS') && read.has('REDIS_URL'), 'the pattern finds the variables');
  assert.deepEqual([...read].filter((name) => !documented.has(name)).sort(), [], 'read but not documented');
  assert.deepEqual([...documented].filter((name) => !read.has(name)).sort(), [], 'documented but not read');
});
