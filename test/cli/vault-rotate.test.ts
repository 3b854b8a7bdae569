import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { loadConfig } from '../../src/config.ts';
import { open } from '../../src/crypto/secret-box.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { CardVault } from '../../src/tokenization/vault.ts';
import { capture, cliDatabaseEnv } from '../helpers/cli.ts';

const OLD = Buffer.alloc(32, 1);
const NEW = Buffer.alloc(32, 2);
const keyList = (...entries: [string, Buffer][]) =>
  entries.map(([kid, key]) => `${kid}:${key.toString('base64')}`).join(',');

async function ewa(env: Record<string, string>, ...argv: string[]) {
  const run = capture(env);
  const code = await runCli(argv, run.context);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

test('keys rotate --vault re-seals every card under the new key, resumes after a stop, and needs the old key', async (t) => {
  const env = await cliDatabaseEnv(t);
  const numbers = Array.from({ length: 7 }, (_, i) => `400000000000${String(1000 + i)}`);
  const config = loadConfig({ ...env, EWA_VAULT_KEYS: keyList(['old', OLD]) });
  const database = await openDatabase(config.database);
  try {
    await migrate(database.db);
    const vault = new CardVault(config.cards.vaultKeys);
    await withTransaction(database.db, async (tx) => {
      for (const number of numbers) {
        await vault.store(
          tx,
          { number, fingerprint: randomUUID(), expirationMonth: 2, expirationYear: 2030 },
          new Date(),
        );
      }
    });
    // A first rotation that stops after one small batch, as a crash would leave it.
    const rotating = new CardVault(
      loadConfig({ ...env, EWA_VAULT_KEYS: keyList(['new', NEW], ['old', OLD]) }).cards.vaultKeys,
    );
    assert.equal(await rotating.rotateBatch(database.db, 3), 3);
    assert.equal(await rotating.countNotUnderCurrentKey(database.db), 4);
  } finally {
    await database.close();
  }

  const withoutOld = await ewa(
    { ...env, EWA_VAULT_KEYS: keyList(['new', NEW]) },
    'keys',
    'rotate',
    '--vault',
  );
  assert.equal(withoutOld.code, 1);
  assert.match(withoutOld.stderr, /sealed under key "old", which EWA_VAULT_KEYS no longer lists/);

  const resumed = await ewa(
    { ...env, EWA_VAULT_KEYS: keyList(['new', NEW], ['old', OLD]) },
    'keys',
    'rotate',
    '--vault',
    '--json',
  );
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(JSON.parse(resumed.stdout), { key_id: 'new', resealed: 4, left: 0 });
  assert.match(resumed.stderr, /Re-sealing cards under key new: 4\/4/);

  const again = await ewa(
    { ...env, EWA_VAULT_KEYS: keyList(['new', NEW]) },
    'keys',
    'rotate',
    '--vault',
    '--json',
  );
  assert.deepEqual(JSON.parse(again.stdout), { key_id: 'new', resealed: 0, left: 0 });

  const check = await openDatabase(config.database);
  try {
    const rows = await check.db.selectFrom('card_vault').select(['id', 'key_id', 'pan_enc']).execute();
    assert.equal(rows.length, numbers.length);
    const opened = rows.map((row) => {
      assert.equal(row.key_id, 'new');
      return open(NEW, row.pan_enc, `card-vault:${row.id}`).toString();
    });
    assert.deepEqual(opened.sort(), [...numbers].sort());
  } finally {
    await check.close();
  }
});
