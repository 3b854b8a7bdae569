import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { csvFile } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { type EwaProcess, spawnEwa } from '../helpers/ew-processes.ts';
import { createWorkerRows, type MoneyWorld, openMoneyWorld } from '../helpers/money-world.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Two earnings files for one job and day, imported at the same moment by two `ewa` processes on one PostgreSQL,
 * each within 24 hours alone and above it together. The test holds the person's row until both imports wait on it
 * (the earnings recorder takes it first), so neither has read the day's hours when the first writes: the second
 * must count the first's rows, read under that lock, and refuse its line. Had the check read before the lock, both
 * would pass and the day would have 32 hours.
 */

/** The sessions waiting for a lock on a people row: the earnings recorders' lockPeople. */
async function waitingOnPeople(world: MoneyWorld, pid: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from pg_stat_activity
    where cardinality(pg_blocking_pids(pid)) > 0 and query like 'select id from people where id = any%'
      and pid <> ${pid}::integer`.execute(world.db);
  return rows[0]!.n;
}

test('two imports of one job and day at once on two processes: the day never passes 24 hours', async (t: TestContext) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const { organizationId, personId, jobId, primaryIdentifier } = await createWorkerRows(world);
  // Two days back, backdating allowed: a day that is open whatever the period.
  const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const files = ['A', 'B'].map((name) =>
    csvFile(t, `${name}.csv`, [
      'row_id,primary_identifier,date,hours,amount',
      `${name}-1,${primaryIdentifier},${day},16,`,
    ]),
  );
  const hold = await holdRows(world, 'select id from people where id = $1 for update', [personId]);
  // Starting a process takes longer than the default lock timeout (3 s) on a busy machine: wait for the hold.
  const env = { ...world.env, EWA_DB_LOCK_TIMEOUT_MS: '60000', EWA_DB_STATEMENT_TIMEOUT_MS: '60000' };
  const runs: EwaProcess[] = files.map((file) =>
    spawnEwa(['earnings', 'import', '--org', organizationId, file, '--allow-backdated', '--json'], env),
  );
  for (const run of runs) world.onCleanup(() => run.kill());
  await eventually(async () => (await waitingOnPeople(world, hold.pid)) === runs.length, 30_000);
  assert.equal(
    await waitingOnPeople(world, hold.pid),
    runs.length,
    `both imports wait on the person: ${runs.map((run) => run.output()).join('\n')}`,
  );
  await hold.release();
  const codes = await Promise.all(runs.map((run) => run.exited));
  const outputs = runs.map((run) => run.output());
  t.diagnostic(`exit codes ${JSON.stringify(codes)}`);
  assert.deepEqual([...codes].sort(), [0, 1], outputs.join('\n'));
  assert.match(outputs[codes.indexOf(1)]!, /would have 32 hours on/);
  const rows = await world.db
    .selectFrom('earnings')
    .select(['external_id', 'hours_hundredths'])
    .where('job_id', '=', jobId)
    .execute();
  assert.deepEqual(
    rows.map((row) => [row.external_id, row.hours_hundredths]),
    [[codes[0] === 0 ? 'A-1' : 'B-1', 1600]],
  );
});
