import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { openComplaint } from '../../src/complaints/complaint-store.ts';
import { eventually } from '../helpers/eventually.ts';
import { type EwaProcess, spawnEwa } from '../helpers/ew-processes.ts';
import { type MoneyWorld, openMoneyWorld } from '../helpers/money-world.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Two operators change one complaint at the same moment, from two `ewa` processes on one PostgreSQL. The test
 * holds the complaint's row until both processes wait on it, so both have checked nothing yet when the first
 * writes: the second must meet the first's status (the update is conditional on the status it starts from), never
 * write over it. Without the condition both would write, and the second answer would replace the first.
 */

/**
 * The sessions whose update of the complaint waits for a lock: the first waits on the hold, the next on the first
 * (PostgreSQL queues later waiters of a row behind the first one's tuple lock).
 */
async function waitingOn(world: MoneyWorld, pid: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from pg_stat_activity
    where cardinality(pg_blocking_pids(pid)) > 0 and query like 'update "complaints"%'
      and pid <> ${pid}::integer`.execute(world.db);
  return rows[0]!.n;
}

async function newComplaint(world: MoneyWorld): Promise<string> {
  const organization = randomUUID();
  await world.db.insertInto('organizations').values({ id: organization, name: 'Race Co' }).execute();
  const complaint = await openComplaint(
    world.db,
    { organizationId: organization, personId: undefined, state: 'SC', channel: 'EMAIL', summary: 'Race.' },
    new Date(Date.now() - 60_000),
  );
  return complaint.id;
}

/** Both commands started while the row is held, both waiting on it, then released: their exit codes. */
async function race(t: TestContext, world: MoneyWorld, id: string, commands: string[][]) {
  const hold = await holdRows(world, 'select id from complaints where id = $1 for update', [id]);
  // Starting a process takes longer than the default lock timeout (3 s) on a busy machine: wait for the hold.
  const env = { ...world.env, EWA_DB_LOCK_TIMEOUT_MS: '60000', EWA_DB_STATEMENT_TIMEOUT_MS: '60000' };
  const runs: EwaProcess[] = commands.map((argv) => spawnEwa(argv, env));
  for (const run of runs) world.onCleanup(() => run.kill());
  await eventually(async () => (await waitingOn(world, hold.pid)) === runs.length, 30_000);
  assert.equal(
    await waitingOn(world, hold.pid),
    runs.length,
    `both commands wait on the complaint: ${runs.map((run) => run.output()).join('\n')}`,
  );
  await hold.release();
  const codes = await Promise.all(runs.map((run) => run.exited));
  t.diagnostic(`exit codes ${JSON.stringify(codes)}`);
  return { codes, outputs: runs.map((run) => run.output()) };
}

test('two answers of one complaint at once: one is recorded, the other refused with exit 1', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const id = await newComplaint(world);
  const { codes, outputs } = await race(t, world, id, [
    ['complaints', 'answer', id, '--answer', 'First answer.', '--json'],
    ['complaints', 'answer', id, '--answer', 'Second answer.', '--json'],
  ]);
  assert.deepEqual([...codes].sort(), [0, 1], outputs.join('\n'));
  const winner = codes.indexOf(0);
  const loser = codes.indexOf(1);
  assert.match(outputs[loser]!, /is ANSWERED: only OPEN complaints can be answered/);
  const row = await world.db
    .selectFrom('complaints')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  assert.equal(row.status, 'ANSWERED');
  assert.equal(row.answer, winner === 0 ? 'First answer.' : 'Second answer.');
});

test('an answer and a close of one complaint at once: the close is never lost or overwritten', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const id = await newComplaint(world);
  const { codes, outputs } = await race(t, world, id, [
    ['complaints', 'answer', id, '--answer', 'Answered.'],
    ['complaints', 'close', id, '--resolution', 'Closed.'],
  ]);
  const row = await world.db
    .selectFrom('complaints')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  // Whichever went first, the complaint ends CLOSED with its resolution; the answer is recorded only when it came
  // before the close (then both succeed), and refused after it.
  assert.equal(row.status, 'CLOSED', outputs.join('\n'));
  assert.equal(row.resolution, 'Closed.');
  assert.equal(codes[1], 0, outputs[1]);
  if (codes[0] === 0) assert.equal(row.answer, 'Answered.');
  else {
    assert.equal(codes[0], 1, outputs[0]);
    assert.match(outputs[0]!, /is CLOSED/);
    assert.equal(row.answer, null);
  }
});
