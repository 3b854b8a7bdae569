import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

/**
 * The layers of DESIGN §3, checked on the import lines of every source file: the money core knows no HTTP, the
 * layers below it know neither HTTP nor the money rules, and idempotency knows no domain.
 */
const SRC = resolve(import.meta.dirname, '..', '..', 'src');
const HTTP = [/^fastify/, /^@fastify\//, /^find-my-way/];

interface Rule {
  folder: string;
  forbidden: readonly string[];
}

const RULES: readonly Rule[] = [
  {
    folder: 'money',
    forbidden: ['resources', 'platform', 'admin', 'oauth', 'cli', 'tokenization', 'server.ts'],
  },
  { folder: 'ledger', forbidden: ['resources', 'platform', 'admin', 'money', 'cli', 'server.ts'] },
  { folder: 'outbox', forbidden: ['resources', 'platform', 'admin', 'money', 'cli', 'server.ts'] },
  { folder: 'rails', forbidden: ['resources', 'platform', 'admin', 'money', 'cli', 'server.ts'] },
  { folder: 'domain', forbidden: ['resources', 'platform', 'admin', 'money', 'operator', 'rails', 'cli'] },
  { folder: 'operator', forbidden: ['resources', 'platform', 'admin', 'cli', 'server.ts'] },
  { folder: 'idempotency', forbidden: ['resources', 'money', 'admin', 'operator', 'ledger'] },
];

function sourceFiles(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) found.push(path);
  }
  return found;
}

/** Every module a file imports (static and dynamic), as written. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    ),
  ].map((match) => match[1] ?? match[2] ?? '');
}

/** The top-level folder (or file) of src/ that a relative import lands in. */
function layerOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(SRC, resolve(dirname(file), specifier));
  return target.split('/')[0];
}

test('each layer imports only what lies below it', () => {
  const broken: string[] = [];
  for (const rule of RULES) {
    for (const file of sourceFiles(join(SRC, rule.folder))) {
      for (const specifier of importsOf(file)) {
        const layer = layerOf(file, specifier);
        const http = HTTP.some((pattern) => pattern.test(specifier));
        if (http || (layer !== undefined && rule.forbidden.includes(layer)))
          broken.push(`${relative(SRC, file)} imports ${specifier}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('the rule sees a forbidden import (the check itself can fail)', () => {
  const file = join(SRC, 'money', 'example.ts');
  assert.equal(layerOf(file, '../resources/transfers/store.ts'), 'resources');
  assert.equal(layerOf(file, './settlement.ts'), 'money');
  assert.ok(HTTP.some((pattern) => pattern.test('fastify')));
  assert.ok(importsOf(join(SRC, 'server.ts')).some((specifier) => specifier === 'fastify'));
});

test('no import cycle among the files of src/', () => {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC))
    graph.set(
      file,
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => resolve(dirname(file), specifier)),
    );
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  assert.deepEqual(cycles, []);
});
