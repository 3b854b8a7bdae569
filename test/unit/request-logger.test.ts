import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { loggerOptions } from '../../src/platform/logger.ts';
import { lazyRequestLogger } from '../../src/platform/request-logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, stream };
}

test("a request's logger is made on its first line, with the request's id, and redacts as the parent does", () => {
  const { lines, stream } = capture();
  const parent = pino(loggerOptions({ logLevel: 'warn' }), stream);
  let children = 0;
  const counting = Object.assign(Object.create(parent), {
    child: (...args: Parameters<typeof parent.child>) => {
      children++;
      return parent.child(...args);
    },
  });
  const log = lazyRequestLogger(counting, { request_id: 'r-1' }, {});
  log.info({ note: 'below the level' }, 'not written');
  log.debug('not written either');
  assert.equal(children, 0, 'nothing written, nothing made');
  assert.equal(log.level, 'warn');
  log.error({ authorization: 'Bearer secret' }, 'written');
  log.warn('and again');
  assert.equal(children, 1, 'made once');
  assert.deepEqual(
    lines.map((line) => [line.request_id, line.msg, line.authorization]),
    [
      ['r-1', 'written', '[REDACTED]'],
      ['r-1', 'and again', undefined],
    ],
  );
});

test('a level of its own makes the child at once, and a level set later applies', () => {
  const { lines, stream } = capture();
  const parent = pino(loggerOptions({ logLevel: 'warn' }), stream);
  const own = lazyRequestLogger(parent, { request_id: 'r-2' }, { level: 'debug' });
  own.debug('written at its own level');
  const later = lazyRequestLogger(parent, { request_id: 'r-3' }, {});
  later.level = 'info';
  later.info('written after the change');
  assert.deepEqual(
    lines.map((line) => [line.request_id, line.msg]),
    [
      ['r-2', 'written at its own level'],
      ['r-3', 'written after the change'],
    ],
  );
});
