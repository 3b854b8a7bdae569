import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { cliDatabaseEnv, ewa, inDatabase } from '../helpers/cli.ts';

test('ledger check: the books of a seeded database hold (exit 0); a kept balance changed behind the ledger is named (exit 1)', async (t) => {
  const env = await cliDatabaseEnv(t);
  const seeded = await ewa(env, 'seed');
  assert.equal(seeded.code, 0, seeded.stderr);

  const sound = await ewa(env, 'ledger', 'check');
  assert.equal(sound.code, 0, sound.stdout + sound.stderr);
  assert.match(sound.stdout, /^The books hold: all \d+ rules checked in [\d.]+ s\.\n$/);

  // A balance kept beside the ledger that no longer equals its entries: what a write outside the ledger leaves.
  const broken = await inDatabase(env, async (db) => {
    const { rows } = await sql<{ id: string }>`update ledger_accounts set balance_minor = balance_minor + 1
      where id = (select id from ledger_accounts where balance_minor is not null order by id limit 1)
      returning id`.execute(db);
    return rows[0]!.id;
  });
  const found = await ewa(env, 'ledger', 'check');
  assert.equal(found.code, 1, found.stderr);
  assert.match(found.stdout, /^1 of \d+ rules do not hold/);
  assert.match(found.stdout, /- a kept balance equals the sum of its entries: 1 rows, such as\n/);
  assert.ok(found.stdout.includes(broken), 'the row is shown');

  const json = await ewa(env, 'ledger', 'check', '--json');
  assert.equal(json.code, 1);
  const report = json.json() as {
    holds: boolean;
    rules: number;
    violations: { rule: string; rows: object[] }[];
  };
  assert.equal(report.holds, false);
  assert.deepEqual(
    report.violations.map((violation) => violation.rule),
    ['a kept balance equals the sum of its entries'],
  );
  assert.equal((report.violations[0]!.rows[0] as { id: string }).id, broken);
});
