import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { runCompiledOnce } from '../../src/db/compiled-once.ts';
import { isPlainList } from '../../src/platform/list-page.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

test('a statement compiled once answers each call with its own values, as one built each time does', async (t) => {
  const { db } = await openTestDatabase(t);
  let builds = 0;
  const run = (word: string, limit: number) =>
    runCompiledOnce(db, 'test: words', [word, limit], (w: string, n: number) => {
      builds++;
      return db
        .selectNoFrom([
          sql<string>`${w}::text || ${'!'}::text`.as('said'),
          sql<number>`${n}::int + 1`.as('next'),
        ])
        .limit(n);
    });
  assert.deepEqual(await run('hello', 3), [{ said: 'hello!', next: 4 }]);
  assert.deepEqual(await run('again', 7), [{ said: 'again!', next: 8 }]);
  assert.equal(builds, 1, 'built and compiled on the first call only');
});

test('a builder that writes a value into the text, or leaves one out, is refused at once', async (t) => {
  const { db } = await openTestDatabase(t);
  await assert.rejects(
    runCompiledOnce(db, 'test: inlined', ['x'], (w: string) => db.selectNoFrom(sql.lit(w).as('w'))),
    /written into the statement's text/,
  );
  await assert.rejects(
    runCompiledOnce(db, 'test: dropped', ['x', 'y'], (w: string) =>
      db.selectNoFrom(sql<string>`${w}::text`.as('w')),
    ),
    /value 1 is not a parameter/,
  );
});

test('only a list without filters and cursor is plain', () => {
  assert.equal(isPlainList({ filters: [] }, { size: 10 }), true);
  const filter = { field: 'account_type', operator: 'eq' as const, value: 'CARD' };
  assert.equal(isPlainList({ filters: [filter] }, { size: 10 }), false);
  const expression = { kind: 'match' as const, field: 'name', operator: 'equals' as const, value: 'x' };
  assert.equal(isPlainList({ filters: [], filter: expression }, { size: 10 }), false);
  assert.equal(isPlainList({ filters: [] }, { size: 10, after: { key: 'k', id: 'i' } }), false);
});
