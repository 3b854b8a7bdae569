import assert from 'node:assert/strict';
import test, { type TestContext } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/database.ts';
import { claimRun } from '../../src/jobs/scheduled-run.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import {
  claimDemoData,
  DEMO_HISTORY_STALE_MS,
  demoHistorySteps,
  seedDemoDataOnce,
  withHistoryStates,
} from '../../src/seed/demo.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

const config = loadConfig({});
/** Later than the claim of a process that died, by more than the time a living one may take. */
const AFTER_STALE = new Date(FIXED_NOW.getTime() + DEMO_HISTORY_STALE_MS + 1000);

/**
 * What the money history left in the database, without the ids it draws at random (paychecks, ledger accounts,
 * paycheck-origin transfers), the rail's references and the database's own clock (created_at, updated_at): each row
 * as text, sorted, per table.
 */
async function historyOf(db: Db): Promise<Record<string, string[]>> {
  const tables = [
    'transfers',
    'paychecks',
    'earnings',
    'funding_sources',
    'ledger_entries',
    'ledger_postings',
  ];
  const fixed = new Set(['person_id']);
  const snapshot: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await db
      .selectFrom(table as 'transfers')
      .selectAll()
      .execute();
    snapshot[table] = rows
      .map((row) =>
        JSON.stringify(
          Object.entries(row).filter(
            ([column]) =>
              fixed.has(column) ||
              !(
                column === 'id' ||
                column.endsWith('_id') ||
                column.endsWith('_reference') ||
                column === 'created_at' ||
                column === 'updated_at'
              ),
          ),
        ),
      )
      .sort();
  }
  const people = await db.selectFrom('people').select(['id', 'state_of_residence']).orderBy('id').execute();
  snapshot.people = people.map((person) => `${person.id} ${person.state_of_residence}`);
  return snapshot;
}

/** Claims the demo data and runs the first `steps` steps of its history as a process that then died would have. */
async function cutOffAfter(t: TestContext, steps: number): Promise<Db> {
  const { db } = await openTestDatabase(t);
  assert.equal(await claimDemoData(db, FIXED_NOW, config), true);
  assert.equal(await claimRun(db, 'demo-history', 'once', FIXED_NOW, DEMO_HISTORY_STALE_MS), true);
  const all = demoHistorySteps(FIXED_NOW, config, db);
  await assert.rejects(
    withHistoryStates(db, async () => {
      for (const step of all.slice(0, steps)) await step.run();
      throw new Error('killed');
    }),
    /killed/,
  );
  return db;
}

test('a demo history cut off after any of its steps is finished by the next start, as if it had never stopped', async (t) => {
  const { db: whole } = await openTestDatabase(t);
  assert.equal(await seedDemoDataOnce(whole, FIXED_NOW, config), 'SEEDED');
  const expected = await historyOf(whole);
  const count = demoHistorySteps(FIXED_NOW, config, whole).length;
  assert.ok(expected.transfers!.length > 0 && expected.paychecks!.some((row) => row.includes('DEPOSITED')));
  for (let steps = 0; steps < count; steps++) {
    await t.test(`cut off after ${steps} of ${count} steps`, async (t) => {
      const db = await cutOffAfter(t, steps);
      if (steps > 0) assert.notDeepEqual(await historyOf(db), expected, 'the cut-off history is partial');
      // Restarted after the dead process's claim went stale, at another instant: the history is still of the claim's.
      assert.equal(await seedDemoDataOnce(db, AFTER_STALE, config), 'FINISHED');
      assert.deepEqual(await historyOf(db), expected);
      assert.deepEqual(await checkLedgerInvariants(db), []);
      assert.equal(await seedDemoDataOnce(db, AFTER_STALE, config), 'PRESENT', 'made once');
    });
  }
});

test('a history another process is making is left to it on PostgreSQL, and taken over at once on the embedded database', async (t) => {
  const db = await cutOffAfter(t, 2);
  const partial = await historyOf(db);
  const soon = new Date(FIXED_NOW.getTime() + 1000);
  assert.equal(
    await seedDemoDataOnce(db, soon, config),
    'BEING_MADE',
    'the claim is fresh: its process may be alive',
  );
  assert.deepEqual(await historyOf(db), partial);
  // The embedded database is one process's (its data directory is locked): a RUNNING claim there was cut off.
  assert.equal(await seedDemoDataOnce(db, soon, config, { soleProcess: true }), 'FINISHED');
  const { db: whole } = await openTestDatabase(t);
  await seedDemoDataOnce(whole, FIXED_NOW, config);
  assert.deepEqual(await historyOf(db), await historyOf(whole));
});
