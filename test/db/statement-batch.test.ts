import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { DB } from '../../src/db/schema.ts';
import { type BatchOutcome, firstFailure, rowsOf, runBatch } from '../../src/db/statement-batch.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { onPostgres, openTestDatabase } from '../helpers/test-database.ts';

const org = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const insertOrg = (db: Kysely<DB>, n: number) =>
  sql`insert into organizations (id, name) values (${org(n)}::uuid, ${`Org ${n}`})`.compile(db);
const names = async (db: Kysely<DB>) =>
  (await db.selectFrom('organizations').select('name').orderBy('name').execute()).map((row) => row.name);

test('a batch answers one outcome per statement, in order, with their rows', async (t) => {
  const { db } = await openTestDatabase(t);
  const outcomes = await runBatch(db, [
    sql`select ${2}::integer * 3 as v`.compile(db),
    sql`select 'a' as v union all select 'b'`.compile(db),
    CompiledQuery.raw('select 1 as v where false'),
  ]);
  assert.deepEqual(rowsOf(outcomes[0]), [{ v: 6 }]);
  assert.deepEqual(rowsOf(outcomes[1]), [{ v: 'a' }, { v: 'b' }]);
  assert.deepEqual(rowsOf(outcomes[2]), []);
  assert.equal(firstFailure(outcomes), undefined);
  assert.deepEqual(await runBatch(db, []), []);
});

test('in a transaction a failing statement aborts it: the later ones fail and COMMIT writes nothing', async (t) => {
  const { db } = await openTestDatabase(t);
  const outcomes = await runBatch(db, [
    CompiledQuery.raw('begin'),
    insertOrg(db, 1),
    sql`select * from no_such_table where id = ${1}`.compile(db),
    insertOrg(db, 2),
    CompiledQuery.raw('commit'),
  ]);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.ok),
    [true, true, false, false, true],
  );
  assert.match(String(firstFailure(outcomes)), /no_such_table/);
  assert.equal((outcomes[3] as Extract<BatchOutcome, { ok: false }>).error instanceof Error, true);
  assert.deepEqual(await names(db), [], 'the commit rolled the transaction back');
  assert.throws(() => rowsOf(outcomes[2]), /no_such_table/);
});

test('outside a transaction each statement stands alone; inside withTransaction a batch is part of it', async (t) => {
  const { db } = await openTestDatabase(t);
  const alone = await runBatch(db, [insertOrg(db, 1), insertOrg(db, 1), insertOrg(db, 2)]);
  assert.deepEqual(
    alone.map((outcome) => outcome.ok),
    [true, false, true],
    'the duplicate fails alone',
  );
  await assert.rejects(
    withTransaction(db, async (tx) => {
      assert.equal(firstFailure(await runBatch(tx, [insertOrg(tx, 3), insertOrg(tx, 4)])), undefined);
      throw new Error('rule broken after the batch');
    }),
    /after the batch/,
  );
  assert.deepEqual(await names(db), ['Org 1', 'Org 2']);
});

test('on PostgreSQL a batch is one round trip: every statement is sent before the first answer is read', {
  skip: !onPostgres && 'round trips are a PostgreSQL matter; PGlite runs in process',
}, async (t) => {
  const { db } = await openTestDatabase(t);
  const sent: number[] = [];
  const answered: number[] = [];
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let clock = 0;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    sent.push(clock++);
    const result = original.apply(this, args) as Promise<unknown>;
    return result.finally(() => answered.push(clock++));
  };
  try {
    const outcomes = await runBatch(db, [
      sql`select pg_sleep(${0.05})`.compile(db),
      sql`select ${1}::integer as v`.compile(db),
      sql`select ${2}::integer as v`.compile(db),
    ]);
    assert.equal(firstFailure(outcomes), undefined);
  } finally {
    prototype.query = original;
  }
  assert.equal(sent.length, 3);
  assert.ok(
    Math.max(...sent) < Math.min(...answered),
    `sent at ${sent.join(', ')}, answered at ${answered.join(', ')}`,
  );
});
