import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { cliDatabaseEnv, ewa, ewaAt } from '../helpers/cli.ts';

function bodyFile(t: TestContext, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-disclosure-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'body.txt');
  writeFileSync(path, text);
  return path;
}

test('disclosures publish and list: the next version of a state, as text and JSON', async (t) => {
  const env = await cliDatabaseEnv(t);
  const listed = await ewa(env, 'disclosures', 'list', '--json');
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    (listed.json() as { state: string | null; version: number }[]).map((d) => [d.state, d.version]),
    [
      [null, 1],
      ['UT', 1],
    ],
  );
  const file = bodyFile(t, 'Fees, the free option, no recourse, cancel at any time.\n');
  const published = await ewaAt(
    new Date('2026-03-11T15:30:00Z'),
    env,
    'disclosures',
    'publish',
    '--state',
    'UT',
    '--title',
    'Utah terms, 2026',
    '--file',
    file,
    '--json',
  );
  assert.equal(published.code, 0, published.stderr);
  const document = published.json();
  assert.equal(document.version, 2);
  assert.equal(document.state, 'UT');
  assert.equal(document.effective_from, '2026-03-11T15:30:00.000Z');
  assert.equal(document.body, 'Fees, the free option, no recourse, cancel at any time.\n');
  const utah = await ewa(env, 'disclosures', 'list', '--state', 'UT');
  assert.equal(utah.code, 0);
  assert.match(utah.stdout, /UT +v2 +from 2026-03-11T15:30:00.000Z +Utah terms, 2026/);
  const defaultVersion = await ewa(
    env,
    'disclosures',
    'publish',
    '--title',
    'Terms',
    '--file',
    file,
    '--json',
  );
  assert.equal(defaultVersion.json().state, null);
  assert.equal(defaultVersion.json().version, 2);
});

test('exit codes: 2 for a value refused on its face (nothing written), 1 for a transfer without a record', async (t) => {
  const env = await cliDatabaseEnv(t);
  const file = bodyFile(t, 'Terms.');
  for (const argv of [
    ['disclosures', 'publish', '--state', 'XX', '--title', 'T', '--file', file],
    ['disclosures', 'publish', '--title', 'T'],
    ['disclosures', 'publish', '--title', 'T', '--file', join(tmpdir(), 'no-such-file-ewa.txt')],
    ['disclosures', 'publish', '--file', file],
    ['disclosures', 'publish', '--title', 'T', '--file', file, '--from', 'tomorrow'],
    // Date would make these 2 March and 1 BC.
    ['disclosures', 'publish', '--title', 'T', '--file', file, '--from', '2026-02-30'],
    ['disclosures', 'publish', '--title', 'T', '--file', file, '--from', '2026-02-30T00:00:00Z'],
    ['disclosures', 'publish', '--title', 'T', '--file', file, '--from', '0000-01-01T00:00:00Z'],
    ['disclosures', 'publish', '--title', 'T', '--file', bodyFile(t, '   ')],
    ['disclosures', 'list', '--state', 'utah'],
    ['transfers', 'disclosure', 'not-a-uuid'],
    ['transfers', 'disclosure'],
  ]) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, 2, `${argv.join(' ')}: ${run.stdout}${run.stderr}`);
    if (argv.includes('--from')) assert.match(run.stderr, /: --from must be an instant/, argv.join(' '));
  }
  const after = await ewa(env, 'disclosures', 'list', '--json');
  assert.equal((after.json() as unknown[]).length, 2, 'nothing was written');
  const missing = await ewa(env, 'transfers', 'disclosure', '182d55a6-49a9-4e7d-abf9-85f35847c580');
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(missing.stderr, /No disclosure is recorded/);
});
