import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PLANNED_EACH_CALL, preparingPool } from '../../src/db/prepared-pool.ts';
import { POSTGRES_URL } from '../helpers/test-database.ts';

/** One connection, so that every statement below runs in the session whose prepared statements are counted. */
function openOneConnection() {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const db = new Kysely<Record<string, never>>({
    dialect: new PostgresDialect({ pool: preparingPool(pool) }),
  });
  const prepared = async () => {
    const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
      db,
    );
    return rows.map((row) => row.statement);
  };
  return { db, prepared };
}

test('statements with parameters are prepared once per connection and reused; bulk ones and failed ones are not kept', {
  skip: !POSTGRES_URL && 'prepared statements are a PostgreSQL session feature; PGlite is in process',
}, async (t) => {
  const { db, prepared } = openOneConnection();
  t.after(() => db.destroy());
  const square = (n: number) => sql<{ v: number }>`select ${n}::integer * ${n}::integer as v`.execute(db);
  assert.equal((await square(3)).rows[0]!.v, 9);
  assert.equal((await square(4)).rows[0]!.v, 16);
  const afterTwo = await prepared();
  assert.equal(
    afterTwo.filter((text) => text.includes('$1::integer * $2::integer')).length,
    1,
    afterTwo.join('\n'),
  );

  // A statement whose text grows with its input (65 parameters) runs unprepared.
  const many = Array.from({ length: 65 }, (_, i) => i);
  const { rows } = await sql<{
    n: number;
  }>`select cardinality(array[${sql.join(many)}]::integer[]) as n`.execute(db);
  assert.equal(rows[0]!.n, 65);
  assert.deepEqual(await prepared(), afterTwo, 'nothing was prepared for it');

  // A statement marked to be planned on every call is sent unprepared.
  const each = await sql<{ v: number }>`${sql.raw(PLANNED_EACH_CALL)} select ${7}::integer as v`.execute(db);
  assert.equal(each.rows[0]!.v, 7);
  assert.deepEqual(await prepared(), afterTwo, 'nothing was prepared for it');

  // A statement the server refuses is not remembered as prepared: it fails the same way each time.
  for (let attempt = 0; attempt < 2; attempt++)
    await assert.rejects(
      sql`select * from no_such_table where id = ${attempt}`.execute(db),
      /relation "no_such_table" does not exist/,
    );
  assert.equal((await square(5)).rows[0]!.v, 25);
});
