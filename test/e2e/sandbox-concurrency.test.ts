import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { readSandboxOffsetMs } from '../../src/sandbox/sandbox-clock.ts';
import { seedDemoDataOnce } from '../../src/seed/demo.ts';
import { ewa, inDatabase } from '../helpers/cli.ts';
import { spawnEwa } from '../helpers/ew-processes.ts';
import { sandboxConfig } from '../helpers/sandbox-world.ts';
import { createTestDatabase, onPostgres } from '../helpers/test-database.ts';

const DAY_MS = 86_400_000;

test('two advances started at once by two processes never run anything twice', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two processes share one database)');
    return;
  }
  const { env } = await createTestDatabase(t);
  assert.equal((await ewa(env, 'migrate')).code, 0);
  await inDatabase(env, (db) => seedDemoDataOnce(db, new Date(), sandboxConfig));
  const paydays = () =>
    inDatabase(env, async (db) => {
      const { rows } = await sql<{ n: number }>`select count(*)::integer as n from ledger_postings
        where kind = 'PAYDAY'`.execute(db);
      return Number(rows[0]!.n);
    });
  const paidBefore = await paydays();

  const runs = [0, 1].map(() => spawnEwa(['sandbox', 'advance', '--days', '15', '--json'], env));
  t.after(() => Promise.all(runs.map((run) => run.kill())));
  const codes = await Promise.all(runs.map((run) => run.exited));
  const outputs = runs.map((run) => run.output());
  const done = codes.filter((code) => code === 0).length;
  assert.ok(done >= 1, outputs.join('\n---\n'));
  for (const [index, code] of codes.entries()) {
    if (code === 0) continue;
    // The other one found the first holding the sandbox, and did nothing.
    assert.equal(code, 1, outputs[index]);
    assert.match(
      outputs[index]!,
      /A sandbox advance is running; try again when it has finished\. Nothing was done/,
    );
  }
  t.diagnostic(`${done} of 2 advanced (the other ${done === 2 ? 'came after' : 'was refused'})`);

  await inDatabase(env, async (db) => {
    // Each advance moved the clock by its 15 days (less the real time it took, which the sandbox lived through as
    // well), the second walking on from where the first ended when both ran.
    const offsetMs = await readSandboxOffsetMs(db);
    assert.ok(
      offsetMs <= done * 15 * DAY_MS && offsetMs > done * 15 * DAY_MS - 120_000,
      `offset ${offsetMs}`,
    );
    assert.deepEqual(await checkLedgerInvariants(db), []);
    const { rows: twice } = await sql<{ what: string }>`
      select 'posting ' || kind || ' of transfer ' || transfer_id as what from ledger_postings
        where transfer_id is not null and kind <> 'EARNINGS_MADE_ACCESSIBLE'
        group by kind, transfer_id having count(*) > 1
      union all
      select 'posting ' || kind || ' of paycheck ' || paycheck_id from ledger_postings
        where paycheck_id is not null and kind in ('PAYDAY', 'PAYCHECK_DEPOSITED')
        group by kind, paycheck_id having count(*) > 1
      union all
      select 'run ' || job_name || ' ' || run_key || ' ' || state from scheduled_runs where state <> 'DONE'`.execute(
      db,
    );
    assert.deepEqual(twice, [], 'no movement made twice, every run done once');
  });
  assert.ok((await paydays()) > paidBefore, 'a pay period closed within the days advanced (biweekly)');
});
