import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO, seedDemoDataOnce } from '../../src/seed/demo.ts';
import { seedGeneratedPeople } from '../../src/seed/generated.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

test('the demo data is seeded once, with an open and a deposited paycheck for every worker', async (t) => {
  const { db } = await openTestDatabase(t);
  assert.equal(await seedDemoDataOnce(db, FIXED_NOW), true);
  assert.equal(await seedDemoDataOnce(db, FIXED_NOW), false);
  const people = await db.selectFrom('people').select('id').execute();
  assert.equal(people.length, DEMO.people.length);
  for (const person of DEMO.people) {
    const paychecks = await db
      .selectFrom('paychecks')
      .selectAll()
      .where('person_id', '=', person.id)
      .orderBy('pay_period_starts_at')
      .execute();
    assert.deepEqual(
      paychecks.map((paycheck) => paycheck.status),
      ['DEPOSITED', 'ESTIMATED'],
    );
    const [, open] = paychecks;
    assert.ok(open!.pay_period_starts_at <= FIXED_NOW && FIXED_NOW < open!.pay_period_ends_at);
    assert.ok(open!.gross_earnings_minor > 0);
    assert.equal(open!.net_earnings_minor, open!.gross_earnings_minor - open!.employer_withholdings_minor);
    const earnings = await db
      .selectFrom('earnings')
      .select((eb) => eb.fn.sum<number>('amount_minor').as('total'))
      .where('paycheck_id', '=', open!.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(earnings.total), open!.gross_earnings_minor, 'gross is the sum of the shifts');
    const balance = await db.selectFrom('accounts').selectAll().where('person_id', '=', person.id).execute();
    assert.deepEqual(
      balance.map((account) => account.account_type),
      ['EARNINGS_BALANCE'],
    );
  }
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
