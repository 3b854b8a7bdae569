import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { cliDatabaseEnv, ewa, inDatabase } from '../helpers/cli.ts';
import { insertWaitingOverpayment } from '../helpers/overpayments.ts';

/** An overpayment row as payday leaves one, with what it needs around it (its ledger is payday's, not tested here). */
async function seedOverpayment(env: Record<string, string>): Promise<{ id: string; personId: string }> {
  return inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    const personId = randomUUID();
    const jobId = randomUUID();
    const paycheckId = randomUUID();
    await db.insertInto('organizations').values({ id: organizationId, name: 'Overpaid Co' }).execute();
    await db
      .insertInto('organization_policies')
      .values({ organization_id: organizationId, overpayment_write_off_delinquent: true })
      .execute();
    await db
      .insertInto('people')
      .values({ id: personId, email: `${personId}@people.example`, first_name: 'Robin', last_name: 'Lee' })
      .execute();
    await db
      .insertInto('jobs')
      .values({
        id: jobId,
        person_id: personId,
        organization_id: organizationId,
        external_primary_identifier: 'P-1',
        external_employee_id: 'E-1',
        first_name: 'Robin',
        last_name: 'Lee',
        activation_status: 'ACTIVATED',
        wage_rate_minor: 2000,
        wage_frequency: 'HOURLY',
      })
      .execute();
    await db
      .insertInto('paychecks')
      .values({
        id: paycheckId,
        job_id: jobId,
        person_id: personId,
        status: 'DEPOSITED',
        pay_period_starts_at: new Date('2026-03-02T05:00:00Z'),
        pay_period_ends_at: new Date('2026-03-15T04:00:00Z'),
        deposit_expected_at: new Date('2026-03-20T04:00:00Z'),
      })
      .execute();
    const id = await insertWaitingOverpayment(
      db,
      { personId, jobId, organizationId, paycheckId },
      new Date('2026-03-16T12:00:00Z'),
    );
    return { id, personId };
  });
}

test('ewa overpayments: list, show, resolve, write off; bad input exits 2 naming the flag, unknown or closed exits 1', async (t) => {
  const env = await cliDatabaseEnv(t);
  const empty = await ewa(env, 'overpayments', 'list');
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /No overpayments/);
  const { id, personId } = await seedOverpayment(env);
  const listed = await ewa(env, 'overpayments', 'list', '--status', 'RESOLUTION_REQUIRED', '--json');
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    listed.json().data.map((o: { id: string }) => o.id),
    [id],
  );
  const shown = await ewa(env, 'overpayments', 'show', id, '--json');
  assert.equal(shown.json().remaining_minor, 2500);

  for (const [argv, message] of [
    [['list', '--status', 'OPEN'], /--status must be one of RESOLUTION_REQUIRED/],
    [['list', '--limit', '0'], /--limit must be a whole number from 1 to 1000/],
    [['list', '--after', 'nope!'], /--after: page\[after\] is not a cursor/],
    [['show', 'nope'], /the overpayment id must be a UUID/],
    [['resolve', id], /give --next-paycheck or --installments N/],
    [
      ['resolve', id, '--installments', '13'],
      /--installments must be a whole number from 2 to 12 \(got "13"\)/,
    ],
    [['resolve', id, '--installments', '1'], /from 2 to 12 \(got "1"\); one paycheck is --next-paycheck/],
    [['resolve', id, '--installments', '2.5'], /from 2 to 12 \(got "2\.5"\)/],
  ] as const) {
    const run = await ewa(env, 'overpayments', ...argv);
    assert.equal(run.code, 2, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  const unknown = await ewa(env, 'overpayments', 'show', randomUUID());
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No overpayment/);

  const resolved = await ewa(env, 'overpayments', 'resolve', id, '--installments', '3', '--json');
  assert.equal(resolved.code, 0, resolved.stderr);
  assert.deepEqual(
    [resolved.json().status, resolved.json().installments, resolved.json().resolved_by],
    ['RECOVERING', 3, 'OPERATOR'],
  );
  const written = await ewa(env, 'overpayments', 'write-off', id, '--json');
  assert.equal(written.code, 0, written.stderr);
  assert.deepEqual([written.json().status, written.json().written_off_minor], ['WRITTEN_OFF', 2500]);
  const again = await ewa(env, 'overpayments', 'write-off', id);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /is WRITTEN_OFF; only an open overpayment can be written off/);
  const person = await inDatabase(env, (db) =>
    db
      .selectFrom('people')
      .select(['disallow_reason', 'overpayment_status'])
      .where('id', '=', personId)
      .executeTakeFirstOrThrow(),
  );
  assert.deepEqual(person, { disallow_reason: 'DELINQUENT', overpayment_status: null });
});
