import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawnEwa, startApiProcess } from '../helpers/ew-processes.ts';

const REPORT = `--import=${join(import.meta.dirname, '..', 'helpers', 'report-resolutions.ts')}`;

/** The modules of src/cli/ (by file name) and oidc-provider the process resolved, from its output. */
function loaded(output: string): Set<string> {
  return new Set([...output.matchAll(/^resolved (\S+)$/gm)].map((match) => match[1]!.split('/').at(-1)!));
}

test('ewa serve loads no operator command nor oidc-provider until one is needed: a command forwarded to it loads its own module', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-serve-loads-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { EWA_DATA_DIR: dataDir, NODE_OPTIONS: REPORT };
  const server = await startApiProcess(env);
  t.after(() => server.kill());

  const atStart = loaded(server.output());
  assert.ok(atStart.has('serve.ts'), server.output());
  for (const module of [
    'tokens.ts',
    'orgs.ts',
    'people.ts',
    'seed.ts',
    'payroll.ts',
    'ach.ts',
    'oidc-provider',
  ])
    assert.ok(!atStart.has(module), `ewa serve loaded ${module} at start`);

  // The embedded database is the server's: `ewa orgs list` runs in it, which then loads that command's module alone.
  const command = spawnEwa(['orgs', 'list'], env);
  assert.equal(await command.exited, 0, command.output());
  const afterCommand = loaded(server.output());
  assert.ok(afterCommand.has('orgs.ts'), 'the forwarded command did not run in the server');
  assert.ok(!afterCommand.has('tokens.ts') && !afterCommand.has('oidc-provider'), server.output());

  // The first request that needs the provider loads it.
  const discovery = await fetch(`${server.authUrl}/.well-known/openid-configuration`);
  assert.equal(discovery.status, 200);
  assert.ok(loaded(server.output()).has('oidc-provider'), server.output());
});
