import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { withTransaction } from '../../src/db/transaction.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

const org = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

test('withTransaction commits on return and leaves nothing on failure', async (t) => {
  const { db } = await openTestDatabase(t);
  await withTransaction(db, (tx) =>
    tx
      .insertInto('organizations')
      .values({ id: org(1), name: 'Kept' })
      .execute(),
  );
  await assert.rejects(
    withTransaction(db, async (tx) => {
      await tx
        .insertInto('organizations')
        .values({ id: org(2), name: 'Rolled back' })
        .execute();
      throw new Error('rule broken half-way');
    }),
    /half-way/,
  );
  const names = await db.selectFrom('organizations').select('name').orderBy('name').execute();
  assert.deepEqual(
    names.map((row) => row.name),
    ['Kept'],
  );
});

test('concurrent transactions do not see or interleave with each other', async (t) => {
  const { db } = await openTestDatabase(t);
  await db
    .insertInto('organizations')
    .values({ id: org(10), name: 'counter-0' })
    .execute();
  // Read-modify-write under a row lock, many at once: the final count must be exact.
  const increments = 25;
  await Promise.all(
    Array.from({ length: increments }, () =>
      withTransaction(db, async (tx) => {
        const row = await tx
          .selectFrom('organizations')
          .select('name')
          .where('id', '=', org(10))
          .forUpdate()
          .executeTakeFirstOrThrow();
        const next = Number(row.name.split('-')[1]) + 1;
        await sql`select pg_sleep(0.001)`.execute(tx);
        await tx
          .updateTable('organizations')
          .set({ name: `counter-${next}` })
          .where('id', '=', org(10))
          .execute();
      }),
    ),
  );
  const row = await db
    .selectFrom('organizations')
    .select('name')
    .where('id', '=', org(10))
    .executeTakeFirstOrThrow();
  assert.equal(row.name, `counter-${increments}`);
});

test('serializable transactions retry on serialization failure', async (t) => {
  const { db } = await openTestDatabase(t);
  let attempts = 0;
  const result = await withTransaction(
    db,
    async () => {
      attempts++;
      if (attempts < 3) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return 'done';
    },
    { serializable: true },
  );
  assert.equal(result, 'done');
  assert.equal(attempts, 3);
});

test('bigint money columns come back as exact JavaScript numbers', async (t) => {
  const { db } = await openTestDatabase(t);
  const result = await sql<{ value: number }>`select 9007199254740991::bigint as value`.execute(db);
  assert.equal(result.rows[0]!.value, Number.MAX_SAFE_INTEGER);
  await assert.rejects(sql`select 9007199254740993::bigint as value`.execute(db), /safe integer/);
});
