import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvFile, ewa } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { type EwaProcess, spawnEwa } from '../helpers/ew-processes.ts';
import { openMoneyWorld } from '../helpers/money-world.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Two `ewa people import` processes of one organization at once on one PostgreSQL. The test holds the
 * organization's row, so the import that got the organization's turn waits at its first batch while the other
 * starts: without the turn both would wait there and then write their files batch by batch into one roster.
 */

const HEADER = 'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency';

test('two `ewa people import` of one organization at once: one imports, the other exits 1 naming it, and the roster is the one file', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const created = await ewa(world.env, 'orgs', 'create', '--name', 'Two Files Co', '--json');
  assert.equal(created.code, 0, created.stderr);
  const organizationId: string = created.json().id;
  const tag = organizationId.slice(0, 8);
  // The same jobs with other names and emails in each file: a mix of the two would show.
  const files = ['A', 'B'].map((name) =>
    csvFile(t, `${name}.csv`, [
      HEADER,
      ...Array.from(
        { length: 30 },
        (_, i) => `J-${i},${name}${i},Worker,${name.toLowerCase()}${i}.${tag}@example.com,20,HOURLY`,
      ),
    ]),
  );
  const hold = await holdRows(world, 'select id from organizations where id = $1 for update', [
    organizationId,
  ]);
  const env = { ...world.env, EWA_DB_LOCK_TIMEOUT_MS: '60000', EWA_DB_STATEMENT_TIMEOUT_MS: '60000' };
  const runs: EwaProcess[] = files.map((file) =>
    spawnEwa(['people', 'import', file, '--org', organizationId, '--json'], env),
  );
  for (const run of runs) world.onCleanup(() => run.kill());
  let oneEnded = false;
  for (const run of runs)
    void run.exited.then(() => {
      oneEnded = true;
    });
  // The refused one ends while the other waits for the organization's row.
  await eventually(async () => oneEnded, 30_000);
  await hold.release();
  const codes = await Promise.all(runs.map((run) => run.exited));
  const outputs = runs.map((run) => run.output());
  assert.deepEqual([...codes].sort(), [0, 1], outputs.join('\n'));
  const winner = codes.indexOf(0);
  const loser = codes.indexOf(1);
  assert.match(
    outputs[loser]!,
    new RegExp(
      `ewa people import: A roster import of organization Two Files Co \\(${organizationId}\\) is already running`,
    ),
  );
  assert.equal(JSON.parse(outputs[winner]!.split('\n').find((line) => line.startsWith('{'))!).created, 30);
  const name = winner === 0 ? 'A' : 'B';
  const jobs = await world.db
    .selectFrom('jobs')
    .innerJoin('people', 'people.id', 'jobs.person_id')
    .select(['jobs.external_primary_identifier as pid', 'jobs.first_name', 'people.email'])
    .where('jobs.organization_id', '=', organizationId)
    .execute();
  assert.equal(jobs.length, 30);
  for (const job of jobs) {
    const i = job.pid.slice(2);
    assert.deepEqual(
      [job.first_name, job.email],
      [`${name}${i}`, `${name.toLowerCase()}${i}.${tag}@example.com`],
      job.pid,
    );
  }
});
