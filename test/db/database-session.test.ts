import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { onPostgres, openTestDatabase } from '../helpers/test-database.ts';

test('PostgreSQL sessions of the app run without JIT compilation', {
  skip: !onPostgres && 'JIT is a PostgreSQL server setting; PGlite has none',
}, async (t) => {
  const database = await openTestDatabase(t);
  // Several connections of the pool at once, not only the first one lent.
  const answers = await Promise.all(
    Array.from({ length: 3 }, () =>
      database.db.connection().execute(async (connection) => {
        const { rows } = await sql<{
          jit: string;
        }>`select current_setting('jit') as jit, pg_sleep(0.05)`.execute(connection);
        return rows[0]!.jit;
      }),
    ),
  );
  assert.deepEqual(answers, ['off', 'off', 'off']);
});
