import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { createWorker } from '../helpers/factories.ts';
import {
  advanceBody,
  createPaidWorker,
  firstError,
  paychecksOfJob,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';

/**
 * An employer that runs payroll itself (`payday_payout` EMPLOYER): on payday its paychecks are settled by its
 * remittance of the deductions, with no payout, no rail instruction and no default account needed; an employer paid
 * by this server (PROVIDER) in the same run is paid as before. FIXED_NOW's period is 2–15 March (New York), paid on
 * 20 March; payroll runs on 16 March.
 */

const PERIOD_ENDED = new Date('2026-03-16T12:00:00Z');

/** The rail instructions waiting in the outbox for this paycheck (payroll writes them; nothing has sent them). */
async function outboxRowsOf(app: TestApp, paycheckId: string) {
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from outbox
    where subject_id = ${paycheckId}::uuid`.execute(app.database.db);
  return Number(rows[0]?.n ?? 0);
}

/** Each posting kind of the paycheck, with the entries of the organization's system accounts it wrote. */
async function paycheckPostings(app: TestApp, paycheckId: string) {
  const { rows } = await sql<{ kind: string; account: string; direction: string; amount: string }>`select
      p.kind, a.kind as account, e.direction, e.amount_minor as amount
    from ledger_postings p join ledger_entries e on e.posting_id = p.id
      join ledger_accounts a on a.id = e.ledger_account_id
    where p.paycheck_id = ${paycheckId}::uuid
    order by p.kind, a.kind, e.direction, e.amount_minor`.execute(app.database.db);
  return rows.map((row) => `${row.kind} ${row.account} ${row.direction} ${Number(row.amount)}`);
}

test('payday of an employer that runs payroll itself: settled by its remittance, no payout, no rail; a provider-paid employer unchanged', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const { db } = app.database;
  // 40 000 earned: 30 000 net, 15 000 accessible.
  const robin = await createPaidWorker(app, {
    earnedMinor: 40_000,
    now: FIXED_NOW,
    policy: { payday_payout: 'EMPLOYER' },
  });
  // A worker of the same employer with no default account: the employer pays them, so nothing waits for one.
  const noAccount = await createWorker(app, robin.organizationId);
  await recordShift(app, noAccount.jobId, 20_000, FIXED_NOW, '2026-03-10');
  const provided = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  for (const worker of [robin, provided])
    assert.equal(
      (await postTransfer(app, worker.token, advanceBody(worker, { amount: 6000 }))).statusCode,
      200,
    );
  clock.now = new Date('2026-03-12T14:00:00Z');
  await app.money.settle(clock.now);

  clock.now = PERIOD_ENDED;
  const report = await app.money.payroll(PERIOD_ENDED);
  assert.deepEqual(report, { closed: 3, paid: 3, held: 0 });
  assert.deepEqual(await checkLedgerInvariants(db), []);

  const [own] = await paychecksOfJob(app, robin.jobId);
  assert.equal(own!.status, 'DEPOSITED', 'nothing of it is left for this server to do');
  assert.equal(own!.payout_minor, 30_000 - 6000, 'what the employer pays the worker itself');
  assert.equal(own!.payout_account_id, null, 'no account of the worker was paid');
  assert.equal(own!.payout_held_reason, null);
  assert.equal(await outboxRowsOf(app, own!.id), 0, 'no rail instruction');
  assert.deepEqual(
    (await paycheckPostings(app, own!.id)).filter((line) => line.startsWith('EMPLOYER_PAYDAY')),
    [
      // The 9 000 still accessible leaves the balance; the employer's 24 000 to the worker and 6 000 remitted
      // settle the 30 000 of net pay it owed.
      'EMPLOYER_PAYDAY EARNINGS_BALANCE DEBIT 9000',
      'EMPLOYER_PAYDAY EMPLOYER_PAYROLL_CLEARING CREDIT 6000',
      'EMPLOYER_PAYDAY EMPLOYER_PAYROLL_CLEARING CREDIT 24000',
      'EMPLOYER_PAYDAY PAYCHECK_CLEARING CREDIT 9000',
      'EMPLOYER_PAYDAY PAYCHECK_CLEARING DEBIT 24000',
      'EMPLOYER_PAYDAY PROVIDER_FUNDING DEBIT 6000',
    ],
  );
  assert.ok(!(await paycheckPostings(app, own!.id)).some((line) => /EXTERNAL|^PAYDAY /.test(line)));
  const [unbanked] = await paychecksOfJob(app, noAccount.jobId);
  assert.equal(unbanked!.status, 'DEPOSITED');
  assert.equal(unbanked!.payout_minor, unbanked!.net_earnings_minor);

  // The provider-paid employer: as before, the remainder leaves through the rail.
  const [routed] = await paychecksOfJob(app, provided.jobId);
  assert.equal(routed!.status, 'IN_TRANSIT');
  assert.equal(routed!.payout_minor, 24_000);
  assert.equal(routed!.payout_account_id, provided.depositoryId);
  assert.equal(await outboxRowsOf(app, routed!.id), 1);
  assert.ok((await paycheckPostings(app, routed!.id)).includes('PAYDAY EXTERNAL_BANK CREDIT 24000'));

  // The remittance report lists exactly what the ledger says was remitted, paycheck by paycheck.
  const answer = await call(
    'GET',
    `/admin/reports/remittance?filter[organization]=${robin.organizationId}&filter[pay_date]=2026-03-20`,
  );
  assert.equal(answer.statusCode, 200, answer.body);
  const lines = answer.json().data.attributes.lines as { paycheck_id: string; deduction_minor: number }[];
  const { rows: remitted } = await sql<{ paycheck_id: string; amount: string }>`select p.paycheck_id,
      sum(e.amount_minor) as amount
    from ledger_postings p join ledger_entries e on e.posting_id = p.id
      join ledger_accounts a on a.id = e.ledger_account_id
    where p.kind = 'EMPLOYER_PAYDAY' and a.kind = 'PROVIDER_FUNDING' and a.organization_id = ${robin.organizationId}::uuid
    group by p.paycheck_id`.execute(db);
  assert.deepEqual(
    lines.map((line) => [line.paycheck_id, line.deduction_minor]),
    remitted.map((row) => [row.paycheck_id, Number(row.amount)]),
  );
  assert.deepEqual(answer.json().data.attributes.totals, [
    { currency: 'USD', deduction_minor: 6000, paychecks: 1 },
  ]);

  // The provider-paid employer's remittance is refused, naming the policy field.
  const refused = await call(
    'GET',
    `/admin/reports/remittance.csv?filter[organization]=${provided.organizationId}&filter[pay_date]=2026-03-20`,
    undefined,
    'text/csv',
  );
  assert.equal(refused.statusCode, 400, refused.body);
  const error = firstError(refused);
  assert.equal(error.code, 'INVALID_PARAMETERS');
  assert.deepEqual(error.source, { parameter: 'filter[organization]' });
  assert.match(error.detail, /payday_payout PROVIDER/);

  // A second run pays nothing twice and writes nothing.
  const postings = await db
    .selectFrom('ledger_postings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.deepEqual(await app.money.payroll(PERIOD_ENDED), { closed: 0, paid: 0, held: 0 });
  const again = await db
    .selectFrom('ledger_postings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(again.n), Number(postings.n));
});

test('an advance still PENDING holds an employer-run paycheck: its deductions are not final yet', async (t) => {
  const { app, clock } = await operatorApp(t);
  const robin = await createPaidWorker(app, {
    earnedMinor: 40_000,
    now: FIXED_NOW,
    policy: { payday_payout: 'EMPLOYER' },
  });
  // Posted on Friday 13 March: the sandbox rail settles it on the next business day, after payroll's Monday run.
  clock.now = new Date('2026-03-16T03:00:00Z');
  assert.equal((await postTransfer(app, robin.token, advanceBody(robin, { amount: 5000 }))).statusCode, 200);
  clock.now = PERIOD_ENDED;
  const report = await app.money.payroll(PERIOD_ENDED);
  assert.equal(report.held, 1, JSON.stringify(report));
  const [paycheck] = await paychecksOfJob(app, robin.jobId);
  assert.equal(paycheck!.status, 'PROCESSING');
  assert.equal(paycheck!.payout_held_reason, 'PENDING_ADVANCES');
  assert.deepEqual(await checkLedgerInvariants(app.database.db), []);
});

test('payday_payout is validated, by name, on create and on change', async (t) => {
  const { call } = await operatorApp(t);
  const created = await call('POST', '/admin/organizations', {
    data: { type: 'organizations', attributes: { name: 'Self-run', policy: { payday_payout: 'EMPLOYER' } } },
  });
  assert.equal(created.statusCode, 200, created.body);
  const organization = created.json().data;
  assert.equal(organization.attributes.policy.payday_payout, 'EMPLOYER');
  const defaulted = await call('POST', '/admin/organizations', {
    data: { type: 'organizations', attributes: { name: 'Routed' } },
  });
  assert.equal(defaulted.json().data.attributes.policy.payday_payout, 'PROVIDER');

  for (const [value, at] of [
    ['SOMETIMES', 'POST'],
    [true, 'POST'],
    ['employer', 'PATCH'],
    [null, 'PATCH'],
  ] as const) {
    const answer =
      at === 'POST'
        ? await call('POST', '/admin/organizations', {
            data: { type: 'organizations', attributes: { name: 'Bad', policy: { payday_payout: value } } },
          })
        : await call('PATCH', `/admin/organizations/${organization.id}/policy`, {
            data: {
              type: 'organization_policies',
              id: organization.id,
              attributes: { payday_payout: value },
            },
          });
    assert.equal(answer.statusCode, 400, `${at} ${String(value)}: ${answer.body}`);
    const error = firstError(answer);
    assert.equal(error.code, 'INVALID_PARAMETERS');
    assert.match(JSON.stringify(error.source), /payday_payout/, `${at} ${String(value)}`);
  }
  const changed = await call('PATCH', `/admin/organizations/${organization.id}/policy`, {
    data: { type: 'organization_policies', id: organization.id, attributes: { payday_payout: 'PROVIDER' } },
  });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(changed.json().data.attributes.payday_payout, 'PROVIDER');
});
