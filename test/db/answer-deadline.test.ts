import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.ts';
import { freezablePath } from '../helpers/freezable-path.ts';
import { onPostgres, POSTGRES_URL } from '../helpers/test-database.ts';

test('a database that stops answering fails the statement as unavailable soon after statement_timeout, not never', {
  timeout: 60_000,
}, async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL');
    return;
  }
  const url = new URL(POSTGRES_URL!);
  const path = await freezablePath(url.hostname, Number(url.port || 5432));
  t.after(() => path.close());
  url.host = `127.0.0.1:${path.port}`;
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    EWA_DB_POOL_SIZE: '2',
    EWA_DB_STATEMENT_TIMEOUT_MS: '300',
  }).database;
  const database = await openDatabase(config);
  t.after(() => database.close());
  assert.equal((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]!.one, 1);

  path.freeze();
  const started = performance.now();
  const failure = await sql`select 1`.execute(database.db).then(
    () => undefined,
    (error: unknown) => error,
  );
  const waitedMs = performance.now() - started;
  assert.ok(failure, 'the statement failed');
  assert.ok(isDatabaseUnavailable(failure), `answered as unavailable (503): ${String(failure)}`);
  assert.ok(waitedMs < 20_000, `failed after ${Math.round(waitedMs)} ms, not when the path came back`);

  // The cut connection is not handed out again: once the path carries bytes, statements run.
  path.thaw();
  assert.equal((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows[0]!.one, 1);
});
