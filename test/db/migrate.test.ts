import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from '../../src/db/migrate.ts';
import { ewa } from '../helpers/cli.ts';
import { createTestDatabase, onPostgres } from '../helpers/test-database.ts';

async function tables(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select table_name as name from information_schema.tables where table_schema = current_schema() order by 1`.execute(
    db,
  );
  return result.rows.map((row) => row.name);
}

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-migrations-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

test('migrations create every table of the domain model and are recorded once', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  const applied = await migrate(database.db);
  assert.deepEqual(
    applied,
    readMigrations().map((migration) => migration.name),
  );
  const names = await tables(database.db);
  for (const table of [
    'organizations',
    'organization_policies',
    'people',
    'jobs',
    'paychecks',
    'earnings',
    'accounts',
    'transfers',
    'ledger_accounts',
    'ledger_postings',
    'ledger_entries',
    'funding_sources',
    'idempotency_keys',
    'oauth_clients',
    'oauth_client_organizations',
    'oauth_payloads',
    'signing_keys',
    'card_vault',
    'card_token_uses',
    'schema_migrations',
  ]) {
    assert.ok(names.includes(table), `missing table ${table}`);
  }
  assert.deepEqual(await migrate(database.db), [], 'a second run has nothing to do');
  const recorded = await database.db.selectFrom('schema_migrations').select('name').execute();
  assert.equal(recorded.length, readdirSync(MIGRATIONS_DIR).length);
});

test('two processes migrating one database at the same moment apply each migration once', async (t) => {
  const target = await createTestDatabase(t);
  const first = await openDatabase(target.config);
  t.after(() => first.close());
  // PGlite is one process's database; a second handle on it is the same handle.
  const second = target.config.kind === 'postgres' ? await openDatabase(target.config) : first;
  if (second !== first) t.after(() => second.close());
  const results = await Promise.all([migrate(first.db), migrate(second.db)]);
  assert.deepEqual(
    results.flat().sort(),
    readMigrations()
      .map((migration) => migration.name)
      .sort(),
  );
  const recorded = await first.db.selectFrom('schema_migrations').select('name').execute();
  assert.equal(recorded.length, readMigrations().length);
});

test('a failing migration leaves nothing of itself behind and keeps the ones before it', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  const dir = migrationsDir({
    '0001_first.sql': 'create table first_table (id int primary key);',
    '0002_broken.sql':
      'create table second_table (id int primary key);\ninsert into second_table values (1);\nselect * from no_such_table;',
  });
  await assert.rejects(migrate(database.db, { dir }), (error: unknown) => {
    assert.ok(error instanceof MigrationError);
    assert.match(error.message, /Migration 0002_broken failed: .*no_such_table/);
    return true;
  });
  const names = await tables(database.db);
  assert.ok(names.includes('first_table'));
  assert.ok(!names.includes('second_table'), 'the broken migration left a table');
  const recorded = await database.db.selectFrom('schema_migrations').select('name').execute();
  assert.deepEqual(
    recorded.map((row) => row.name),
    ['0001_first'],
  );
});

test('a migration edited after it was applied, or unknown to this version, stops migrate', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  await migrate(database.db, { dir: migrationsDir({ '0001_first.sql': 'create table a (id int);' }) });
  await assert.rejects(
    migrate(database.db, { dir: migrationsDir({ '0001_first.sql': 'create table a (id bigint);' }) }),
    /0001_first was changed after it was applied/,
  );
  await assert.rejects(
    migrate(database.db, { dir: migrationsDir({ '0000_other.sql': 'select 1;' }) }),
    /has migration 0001_first, which this version does not know/,
  );
  assert.throws(
    () => readMigrations(migrationsDir({ 'Bad Name.sql': 'select 1;' })),
    /must be named NNNN_lower_snake_case.sql/,
  );
});

test('a schema that does not exist stops migrate in one line naming it, before anything is made', {
  skip: onPostgres
    ? false
    : 'EWA_DB_SCHEMA is a PostgreSQL setting; the embedded database has no schema to miss',
}, async (t) => {
  const target = await createTestDatabase(t);
  await target.drop();
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  // Other tests make their tables meanwhile, each in a test_ schema of its own: the others are counted.
  const tablesEverywhere = async () =>
    (
      await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
          where table_schema not like 'test\\_%'`.execute(database.db)
    ).rows[0]!.n;
  const before = await tablesEverywhere();
  await assert.rejects(migrate(database.db), (error: unknown) => {
    assert.ok(error instanceof MigrationError);
    assert.match(error.message, new RegExp(`No schema on the search path \\(${target.env.EWA_DB_SCHEMA}\\)`));
    return true;
  });
  assert.equal(await tablesEverywhere(), before, 'migrate made a table somewhere');
  const run = await ewa(target.env, 'migrate');
  assert.equal(run.code, 1);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /^ewa migrate: No schema on the search path .*create schema name/);
});

test('ledger entries are append-only', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  await migrate(database.db);
  const ledgerAccount = '11111111-1111-4111-8111-111111111111';
  const posting = '22222222-2222-4222-8222-222222222222';
  const organization = '33333333-3333-4333-8333-333333333333';
  await database.db.insertInto('organizations').values({ id: organization, name: 'Ledger test' }).execute();
  await database.db
    .insertInto('ledger_accounts')
    .values({ id: ledgerAccount, kind: 'FEE_REVENUE', currency: 'USD', organization_id: organization })
    .execute();
  await database.db
    .insertInto('ledger_postings')
    .values({ id: posting, kind: 'TEST', posted_at: new Date() })
    .execute();
  await database.db
    .insertInto('ledger_entries')
    .values({
      posting_id: posting,
      ledger_account_id: ledgerAccount,
      direction: 'CREDIT',
      amount_minor: 100,
      currency: 'USD',
    })
    .execute();
  await assert.rejects(
    database.db.updateTable('ledger_entries').set({ amount_minor: 1 }).execute(),
    /append-only/,
  );
  await assert.rejects(database.db.deleteFrom('ledger_entries').execute(), /append-only/);
});
