import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { type Config, loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/database.ts';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { DEMO, demoWorkerIds, seedDemoDataOnce } from '../../src/seed/demo.ts';
import { seedGeneratedPeople } from '../../src/seed/generated.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

/** Seeds at `now` (twice: the second call finds the claim) and checks what every demo worker must have. */
async function checkDemoWorkers(t: TestContext, now: Date, config: Config = loadConfig({})): Promise<Db> {
  const { db } = await openTestDatabase(t);
  assert.equal(await seedDemoDataOnce(db, now, config), 'SEEDED');
  const transfersBefore = await db.selectFrom('transfers').select('id').execute();
  assert.equal(await seedDemoDataOnce(db, now, config), 'PRESENT');
  assert.equal((await db.selectFrom('transfers').select('id').execute()).length, transfersBefore.length);
  const people = await db.selectFrom('people').select(['id', 'state_of_residence']).execute();
  assert.equal(people.length, DEMO.people.length);
  const ids = DEMO.people.map((person) => demoWorkerIds(person.id));
  const balances = await accountBalancesMinor(
    db,
    ids.map((id) => id.balanceAccountId),
  );
  for (const [index, person] of DEMO.people.entries()) {
    const { balanceAccountId, depositoryId, jobId } = ids[index]!;
    const balanceMinor = balances.get(balanceAccountId) ?? 0;
    assert.ok(balanceMinor >= 10_000, `${person.first} has $100 available (${balanceMinor})`);
    const paychecks = await db
      .selectFrom('paychecks')
      .selectAll()
      .where('person_id', '=', person.id)
      .orderBy('pay_period_starts_at')
      .execute();
    const paid = paychecks.find((paycheck) => paycheck.status === 'DEPOSITED');
    const open = paychecks.at(-1)!;
    assert.ok(paid, `${person.first} has a DEPOSITED paycheck`);
    assert.ok(paid.deposited_at! <= now && paid.pay_period_ends_at <= now);
    assert.equal(paid.payout_account_id, depositoryId);
    assert.equal(
      Number(paid.payout_minor) + Number(paid.total_debited_minor),
      Number(paid.net_earnings_minor),
    );
    assert.equal(open.status, 'ESTIMATED');
    assert.ok(open.pay_period_starts_at <= now && now < open.pay_period_ends_at);
    assert.equal(
      balanceMinor,
      Number(open.accessible_minor) - Number(open.total_debited_minor),
      'the balance is what the open paycheck made accessible, less what advances took',
    );
    const earnings = await db
      .selectFrom('earnings')
      .select((eb) => eb.fn.sum<number>('amount_minor').as('total'))
      .where('paycheck_id', '=', open.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(earnings.total), Number(open.gross_earnings_minor), 'gross is the sum of the shifts');
    const advances = await db
      .selectFrom('transfers')
      .select(['status', 'submitted_at', 'failure_reason'])
      .where('person_id', '=', person.id)
      .where('origin_account_id', '=', balanceAccountId)
      .orderBy('submitted_at')
      .execute();
    assert.deepEqual(
      advances.map((advance) => advance.status),
      ['SETTLED', 'FAILED', 'PENDING'],
    );
    assert.ok(advances.every((advance) => advance.submitted_at <= now));
    assert.ok(
      advances[1]!.submitted_at < paid.pay_period_ends_at,
      'the past advances are in the paid period',
    );
    assert.equal(advances[1]!.failure_reason, 'ACCOUNT_CLOSED');
    const accounts = await db.selectFrom('accounts').selectAll().where('person_id', '=', person.id).execute();
    assert.deepEqual(accounts.map((account) => account.account_type).sort(), [
      'DEPOSITORY',
      'EARNINGS_BALANCE',
    ]);
    const job = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
    assert.equal(job.direct_deposit_default_depository_id, depositoryId);
    assert.equal(job.direct_deposit_status, 'SETUP_COMPLETE');
    assert.equal(
      people.find((row) => row.id === person.id)!.state_of_residence,
      person.state,
      'a worker without a state keeps none',
    );
  }
  return db;
}

test('the demo data is seeded once, and every worker has $100 available, a deposited paycheck and advances in each status', async (t) => {
  await checkDemoWorkers(t, FIXED_NOW);
});

test('a sandbox paying bank accounts by ACH files gets the same demo history (the past is simulated on the sandbox)', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'ewa-seed-ach-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const config = loadConfig({
    EWA_RAIL: 'ach',
    EWA_ACH_OUTBOUND_DIR: join(folder, 'outbound'),
    EWA_ACH_INBOUND_DIR: join(folder, 'inbound'),
  });
  const db = await checkDemoWorkers(t, FIXED_NOW, config);
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from ach_entries`.execute(db);
  assert.equal(rows[0]!.n, 0, 'no past payment became an ACH entry');
});

test("seeded on a pay period's first morning, the shifts are today's and the paid period is the one before the last", async (t) => {
  // Monday 2026-03-02 is a first day; the last period's pay (Friday 2026-03-06) has not arrived yet.
  const now = new Date('2026-03-02T13:00:00.000Z');
  const db = await checkDemoWorkers(t, now);
  const { rows } = await sql<{ day: string; shifts: number }>`select worked_on::text as day,
      count(*)::integer as shifts
    from earnings where worked_on >= '2026-02-16' group by worked_on order by worked_on`.execute(db);
  assert.deepEqual(
    rows.map((row) => row.day),
    ['2026-03-02'],
    'nothing in the last period, shifts today',
  );
  const paid = await db
    .selectFrom('paychecks')
    .select('pay_period_starts_at')
    .where('status', '=', 'DEPOSITED')
    .execute();
  assert.deepEqual(
    [...new Set(paid.map((paycheck) => paycheck.pay_period_starts_at.toISOString()))],
    ['2026-02-02T05:00:00.000Z'],
  );
});

test('generated workers come whole: person, job, balance, two paychecks and shifts each', async (t) => {
  const { db } = await openTestDatabase(t);
  const seen: number[] = [];
  const result = await seedGeneratedPeople(db, {
    people: 12_000,
    now: FIXED_NOW,
    onProgress: (done) => seen.push(done),
  });
  assert.deepEqual(seen, [5000, 10000, 12000]);
  const count = async (table: 'people' | 'jobs' | 'accounts' | 'paychecks') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  assert.equal(await count('people'), 12_000);
  assert.equal(await count('jobs'), 12_000);
  assert.equal(await count('accounts'), 12_000);
  assert.equal(await count('paychecks'), 24_000);
  const orphanJobs = await db
    .selectFrom('jobs')
    .leftJoin('accounts', 'accounts.id', 'jobs.earnings_balance_account_id')
    .where('accounts.id', 'is', null)
    .select('jobs.id')
    .execute();
  assert.equal(orphanJobs.length, 0);
  const shifts = Number(
    (
      await db
        .selectFrom('earnings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  assert.equal(shifts, result.earnings);
  assert.ok(shifts > 0);
});
