import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { CliContext } from '../../src/cli/command.ts';
import { startProgress } from '../../src/cli/progress.ts';

function pipeContext(): { context: CliContext; lines: () => string[] } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const context: CliContext = { env: {}, stdout: new PassThrough(), stderr };
  return { context, lines: () => text.split('\n').filter((line) => line !== '') };
}

test('on a pipe, a line for each tenth crossed says the share done, not the tenth', () => {
  const { context, lines } = pipeContext();
  const progress = startProgress(context, 'Seeding', 327);
  for (const done of [0, 10, 33, 40, 319, 326, 327]) progress.update(done);
  progress.stop();
  assert.deepEqual(lines(), [
    'Seeding: 0/327 (0%)',
    'Seeding: 33/327 (10%)',
    'Seeding: 319/327 (97%)',
    'Seeding: 327/327 (100%)',
  ]);
});

test('on a pipe, 100 % is printed only when everything is done', () => {
  const { context, lines } = pipeContext();
  const progress = startProgress(context, 'Rotating', 1000);
  progress.update(999);
  assert.deepEqual(lines(), ['Rotating: 999/1000 (99%)']);
  progress.update(1000);
  assert.deepEqual(lines().at(-1), 'Rotating: 1000/1000 (100%)');
});
