import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCommandSocket } from '../../src/cli/command-socket.ts';
import { forwardToServer } from '../../src/cli/forward-to-server.ts';

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

test('a forwarded command silent for longer than the wait for an answer is followed to its end, not given up', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-command-socket-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let finished = false;
  const socket = await startCommandSocket(dataDir, async (_request, stdout) => {
    // Longer than forward-to-server.ts waits for the server to take the command (2 s).
    await sleep(2_500);
    stdout.write('done\n');
    finished = true;
    return 3;
  });
  t.after(() => socket.close());
  const [stdout, stderr] = [sink(), sink()];
  const code = await forwardToServer(['orgs', 'list'], {
    env: { EWA_DATA_DIR: dataDir },
    cwd: dataDir,
    stdout: stdout.stream,
    stderr: stderr.stream,
  });
  assert.equal(stderr.text(), '');
  assert.equal(code, 3, 'the exit code of the command in the server');
  assert.equal(stdout.text(), 'done\n');
  assert.ok(finished);
});
