import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { newDatabaseNote } from '../../src/cli/open-database.ts';
import { runCli } from '../../src/cli/run.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { capture, ewa } from '../helpers/cli.ts';

test('a command that finds its database empty says which one it made, once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-new-database-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { EWA_DATA_DIR: join(dir, 'data') };
  const person = '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001';
  const argv = ['tokens', 'issue', '--person', person, '--client', 'x', '--scopes', 'user:read'];
  const first = await ewa(env, ...argv);
  assert.equal(first.code, 1);
  assert.equal(
    first.stderr,
    `ewa: the embedded database in ${env.EWA_DATA_DIR} (EWA_DATA_DIR) was empty, and now has only the tables this ` +
      "command made in it. A server's database is another one unless this command is given the same settings as " +
      `the server.\newa tokens issue: No person ${person}.\n`,
  );
  const again = await ewa(env, 'orgs', 'list');
  assert.equal(again.code, 0);
  assert.equal(again.stderr, '', 'made once: the second command finds its tables');
});

test('the note names a PostgreSQL database by its name, host and schema, never its user or password', () => {
  const limits = {
    statementTimeoutMs: 0,
    lockTimeoutMs: 0,
    idleInTransactionTimeoutMs: 0,
    connectTimeoutMs: 100,
  };
  const note = newDatabaseNote({
    kind: 'postgres',
    url: 'postgres://ewa:s3cret@db.internal:5433/ewa%20live',
    poolSize: 1,
    schema: 'tenant',
    limits,
  });
  assert.match(
    note ?? '',
    /^ewa: PostgreSQL database ewa live on db\.internal:5433, schema tenant \(DATABASE_URL, EWA_DB_SCHEMA\) was empty/,
  );
  assert.doesNotMatch(note ?? '', /s3cret/);
  assert.match(
    newDatabaseNote({ kind: 'postgres', url: 'postgres:///ewa', poolSize: 1, limits }) ?? '',
    /^ewa: PostgreSQL database ewa on the local socket \(DATABASE_URL\) was empty/,
  );
  assert.equal(
    newDatabaseNote(loadConfig({ EWA_DATA_DIR: ':memory:' }).database),
    undefined,
    'each in memory is new',
  );
});

test('tokens issue run on its own says for which URLs its token is; run inside the server, whose they are, not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-token-urls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { EWA_DATA_DIR: dir, EWA_API_PORT: '18480', EWA_AUTH_PORT: '18481' };
  assert.equal((await ewa(env, 'seed')).code, 0);
  const argv = ['tokens', 'issue', '--person', DEMO.people[0].id, '--client', DEMO.clients.public.clientId];
  const alone = await ewa(env, ...argv, '--scopes', 'user:read');
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(
    alone.stderr,
    'ewa tokens issue: issued by http://localhost:18481 (EWA_AUTH_URL) for http://localhost:18480 (EWA_BASE_URL); ' +
      'a server whose URLs are other refuses it.\n',
  );
  const claims = JSON.parse(Buffer.from(alone.stdout.split('.')[1]!, 'base64url').toString());
  assert.deepEqual([claims.iss, claims.aud], ['http://localhost:18481', 'http://localhost:18480']);

  const config = loadConfig(env);
  const database = await openDatabase(config.database);
  t.after(() => database.close());
  const inside = capture(env);
  const code = await runCli([...argv, '--scopes', 'user:read'], {
    ...inside.context,
    database: { config, database },
  });
  assert.equal(code, 0, inside.stderr());
  assert.equal(inside.stderr(), '');
});
