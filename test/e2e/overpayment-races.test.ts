import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { startApiProcess } from '../helpers/ew-processes.ts';
import {
  advanceRequest,
  createFundedWorker,
  type FundedWorker,
  httpJson,
  type MoneyWorld,
  openMoneyWorld,
  postAdvance,
} from '../helpers/money-world.ts';
import { insertWaitingOverpayment } from '../helpers/overpayments.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Resolving an overpayment is a check-then-write (is it still waiting for a resolution?) that two requests can race,
 * and an advance checks the person's overpayment marker that a resolution changes: both are guarded by the person's
 * lock (docs/design/concurrency.md). Two server processes on one PostgreSQL, requests sent at once to both.
 */

async function twoProcesses(t: TestContext): Promise<{ world: MoneyWorld; urls: string[] }> {
  const world = await openMoneyWorld(t);
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const server = await startApiProcess(world.env);
    world.onCleanup(() => server.kill());
    urls.push(server.apiUrl);
  }
  return { world, urls };
}

/** An overpayment waiting for a resolution, as payday leaves one (row and marker; its ledger is not the point here). */
async function overpaymentOf(world: MoneyWorld, worker: FundedWorker): Promise<string> {
  const paycheck = await world.db
    .selectFrom('paychecks')
    .select('id')
    .where('job_id', '=', worker.jobId)
    .executeTakeFirstOrThrow();
  return insertWaitingOverpayment(world.db, { ...worker, paycheckId: paycheck.id });
}

function resolve(url: string, worker: FundedWorker, installments?: number) {
  return httpJson(`${url}/rest/people/${worker.personId}/overpayment_resolutions`, worker.token, {
    method: 'POST',
    body: {
      data: {
        type: 'overpayment_resolutions',
        attributes: installments
          ? { resolution: 'INSTALLMENTS', installments }
          : { resolution: 'NEXT_PAYCHECK' },
      },
    },
  });
}

test('concurrent resolutions on two processes resolve an overpayment once; the others are told it is resolved', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const { world, urls } = await twoProcesses(t);
  const worker = await createFundedWorker(world, urls[0]!, { grossMinor: 40_000 });
  const id = await overpaymentOf(world, worker);
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => resolve(urls[i % 2]!, worker, i % 3 === 0 ? undefined : 2 + (i % 4))),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400, 400, 400], answers.map((a) => a.text).join('\n'));
  for (const answer of answers.filter((a) => a.status === 400))
    assert.equal(answer.json.errors?.[0]?.code, 'INVALID_RESOURCE_STATE');
  const winner = answers.find((answer) => answer.status === 200)!.json as unknown as {
    data: { attributes: { resolution: string; installments: number } }[];
  };
  const row = await world.db
    .selectFrom('overpayments')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  assert.equal(row.status, 'RECOVERING');
  assert.equal(row.resolution, winner.data[0]!.attributes.resolution);
  assert.equal(row.installments, winner.data[0]!.attributes.installments);
  const person = await world.db
    .selectFrom('people')
    .select('overpayment_status')
    .where('id', '=', worker.personId)
    .executeTakeFirstOrThrow();
  assert.equal(person.overpayment_status, 'RECOVERING');
});

test('an advance racing a resolution is refused by whichever state it finds under the lock, never taken', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const { world, urls } = await twoProcesses(t);
  const worker = await createFundedWorker(world, urls[0]!, { grossMinor: 40_000 });
  const seen = new Set<string>();
  for (let round = 0; round < 6; round++) {
    const id = await overpaymentOf(world, worker);
    const [advance, resolution] = await Promise.all([
      postAdvance(urls[round % 2]!, worker, advanceRequest(worker, 1000), randomUUID()),
      resolve(urls[(round + 1) % 2]!, worker),
    ]);
    assert.equal(resolution.status, 200, resolution.text);
    assert.equal(advance.status, 400, advance.text);
    const code = advance.json.errors?.[0]?.code ?? '';
    assert.ok(['OVERPAYMENT_RESOLUTION_REQUIRED', 'OVERPAYMENT_RESOLVING'].includes(code), code);
    seen.add(code);
    // Gone, for the next round's (a test shortcut: payday recovers it).
    await sql`delete from overpayments where id = ${id}::uuid`.execute(world.db);
    await sql`update people set overpayment_status = null where id = ${worker.personId}::uuid`.execute(
      world.db,
    );
  }
  t.diagnostic(`codes seen: ${[...seen].join(', ')}`);
  const transfers = await world.db
    .selectFrom('transfers')
    .select('id')
    .where('person_id', '=', worker.personId)
    .where('origin_account_id', 'is not', null)
    .execute();
  assert.equal(transfers.length, 0, 'no advance was taken while an overpayment was open');
});
