import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { type Config, loadConfig } from '../../src/config.ts';
import { BankAccountSecrets } from '../../src/crypto/bank-account-secrets.ts';
import type { Db } from '../../src/db/database.ts';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { createMoneyCore } from '../../src/money/money-core.ts';
import { createSandboxRail } from '../../src/rails/sandbox-rail.ts';
import { cliDatabaseEnv, ewa, ewaAt, inDatabase } from '../helpers/cli.ts';

interface Worker {
  personId: string;
  jobId: string;
  balanceId: string;
  depositoryId: string | null;
}

/** A worker with an ACTIVATED job and its earnings balance; with a default bank account when `banked`. */
async function createWorker(db: Db, organizationId: string, banked: boolean): Promise<Worker> {
  const personId = randomUUID();
  const jobId = randomUUID();
  const balanceId = randomUUID();
  const depositoryId = banked ? randomUUID() : null;
  await db
    .insertInto('people')
    .values({
      id: personId,
      email: `${personId}@people.example`,
      first_name: 'Robin',
      last_name: 'Lee',
      state_of_residence: 'NY',
    })
    .execute();
  await db
    .insertInto('accounts')
    .values({
      id: balanceId,
      person_id: personId,
      account_type: 'EARNINGS_BALANCE',
      subtype: 'ODP',
      name: 'Earnings balance',
      details: '{}',
    })
    .execute();
  if (depositoryId)
    await db
      .insertInto('accounts')
      .values({
        id: depositoryId,
        person_id: personId,
        account_type: 'DEPOSITORY',
        subtype: 'CHECKING',
        name: 'Checking',
        verification_status: 'VERIFIED',
        details: JSON.stringify({ routing_number: 'XXXXX0000', account_number: 'XXXX5678' }),
      })
      .execute();
  await db
    .insertInto('jobs')
    .values({
      id: jobId,
      person_id: personId,
      organization_id: organizationId,
      external_primary_identifier: `P-${jobId.slice(0, 8)}`,
      external_employee_id: `E-${jobId.slice(0, 6)}`,
      first_name: 'Robin',
      last_name: 'Lee',
      wage_rate_minor: 2000,
      wage_frequency: 'HOURLY',
      direct_deposit_status: depositoryId ? 'SETUP_COMPLETE' : 'SETUP_REQUIRED',
      direct_deposit_default_depository_id: depositoryId,
      earnings_balance_account_id: balanceId,
    })
    .execute();
  return { personId, jobId, balanceId, depositoryId };
}

/** Ledger entries, counted and summed: what a second payroll run must leave as it was. */
/** A CLI environment on the ACH rail, its outbound and inbound folders in one removed when the test ends. */
async function achEnv(t: TestContext) {
  const folder = mkdtempSync(join(tmpdir(), 'ewa-cli-ach-'));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const env = {
    ...(await cliDatabaseEnv(t)),
    EWA_RAIL: 'ach',
    EWA_ACH_OUTBOUND_DIR: join(folder, 'outbound'),
    EWA_ACH_INBOUND_DIR: join(folder, 'inbound'),
  };
  assert.equal((await ewa(env, 'migrate')).code, 0);
  return { folder, env, outbound: env.EWA_ACH_OUTBOUND_DIR, config: loadConfig(env) };
}

/** A real routing number and a sealed account number on the worker's bank account, which a Nacha entry needs. */
async function giveBankDetails(db: Db, config: Config, depositoryId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set({
      routing_number: '021000021',
      account_number_enc: new BankAccountSecrets(config.masterKey).sealAccountNumber(
        depositoryId,
        '000123456789',
      ),
    })
    .where('id', '=', depositoryId)
    .execute();
}

async function ledgerTotals(db: Db) {
  const { rows } = await sql<{ n: number; total: string | null }>`select count(*)::integer as n,
      sum(amount_minor)::text as total from ledger_entries`.execute(db);
  return rows[0];
}

async function paycheckOf(db: Db, jobId: string) {
  return db.selectFrom('paychecks').selectAll().where('job_id', '=', jobId).executeTakeFirstOrThrow();
}

// Pay period 2026-02-02 … 2026-02-15 (New York), deposit expected Friday 2026-02-20.
const WORKED_ON = ['2026-02-03', '2026-02-04'];
const RECORDED_AT = new Date('2026-02-05T20:00:00.000Z');

test('payroll run pays a past period once, holds a worker without a bank account, and settle deposits it', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'migrate')).code, 0);
  const { paid, unbanked } = await inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    await db.insertInto('organizations').values({ id: organizationId, name: 'Payroll Employer' }).execute();
    await db.insertInto('organization_policies').values({ organization_id: organizationId }).execute();
    const paid = await createWorker(db, organizationId, true);
    const unbanked = await createWorker(db, organizationId, false);
    const core = createMoneyCore(db, loadConfig(env));
    await core.earnings.record(
      [paid, unbanked].flatMap((worker) =>
        WORKED_ON.map((day) => ({
          jobId: worker.jobId,
          externalId: `shift-${day}`,
          workedOn: day,
          hoursHundredths: 800,
          amountMinor: 16_000,
          source: 'SHIFT' as const,
        })),
      ),
      RECORDED_AT,
      { backdated: 'RECORD' },
    );
    // An advance of the banked worker, due the next business day: settled before payday looks at it.
    await core.transfers.create(
      paid.personId,
      {
        id: undefined,
        amountMinor: 5_000,
        currency: 'USD',
        schedule: 'NEXT_BUSINESS_DAY',
        preview: false,
        originId: paid.balanceId,
        destinationId: paid.depositoryId!,
        personId: undefined,
      },
      RECORDED_AT,
    );
    const balances = await accountBalancesMinor(db, [paid.balanceId, unbanked.balanceId]);
    // 2 × $160 gross, $240 net, half accessible; the advance took $50 of it.
    assert.equal(balances.get(paid.balanceId), 12_000 - 5_000);
    assert.equal(balances.get(unbanked.balanceId), 12_000);
    return { paid, unbanked };
  });

  const first = await ewa(env, 'payroll', 'run', '--date', '2026-02-20');
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /Payroll as of 2026-02-20T23:59:59\.999Z/);
  assert.match(first.stdout, /closed {5}2 /);
  assert.match(first.stdout, /paid {7}1 /);
  assert.match(first.stdout, /held {7}1 .*\(NO_DEFAULT_ACCOUNT 1\)/);
  assert.match(first.stdout, /settled {4}1 /);
  assert.match(first.stdout, /deposited {2}0 /);
  assert.match(first.stderr, /Paying paychecks: 2\/2 \(100%\)/, 'progress on standard error');

  const totals = await inDatabase(env, async (db) => {
    const check = await paycheckOf(db, paid.jobId);
    assert.equal(check.status, 'IN_TRANSIT');
    assert.equal(check.payout_account_id, paid.depositoryId);
    assert.equal(Number(check.payout_minor), 24_000 - 5_000, 'net pay less the advance');
    // Friday's run: the rail delivers on the next business day, Monday 09:00 in New York.
    assert.equal(check.payout_settle_after?.toISOString(), '2026-02-23T14:00:00.000Z');
    const held = await paycheckOf(db, unbanked.jobId);
    assert.equal(held.status, 'PROCESSING');
    assert.equal(held.payout_held_reason, 'NO_DEFAULT_ACCOUNT');
    const balances = await accountBalancesMinor(db, [paid.balanceId, unbanked.balanceId]);
    assert.equal(balances.get(paid.balanceId), 0, "the period's balance is back to zero on payday");
    assert.equal(balances.get(unbanked.balanceId), 12_000, 'a held paycheck stays available');
    return ledgerTotals(db);
  });

  const again = await ewa(env, 'payroll', 'run', '--date', '2026-02-20', '--json');
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(again.json(), {
    as_of: '2026-02-20T23:59:59.999Z',
    closed: 0,
    paid: 0,
    held: 1,
    held_reasons: { NO_DEFAULT_ACCOUNT: 1 },
    settled: 0,
    failed: 0,
    deposited: 0,
    returned: 0,
    ach_returns: 0,
  });
  assert.deepEqual(await inDatabase(env, ledgerTotals), totals, 'nothing is paid twice');

  const early = await ewa(env, 'settle', '--at', '2026-02-23T13:59:59Z', '--json');
  assert.equal(early.code, 0, early.stderr);
  assert.equal(early.json().deposited, 0, 'not before the rail delivers');
  const settled = await ewa(env, 'settle', '--at', '2026-02-23T14:00:00Z');
  assert.equal(settled.code, 0, settled.stderr);
  assert.match(settled.stdout, /Settlement as of 2026-02-23T14:00:00\.000Z/);
  assert.match(settled.stdout, /deposited {2}1 /);
  await inDatabase(env, async (db) => {
    const check = await paycheckOf(db, paid.jobId);
    assert.equal(check.status, 'DEPOSITED');
    assert.equal(check.deposited_at?.toISOString(), '2026-02-23T14:00:00.000Z');
  });

  const later = await ewa(env, 'payroll', 'run', '--date', '2026-03-31', '--json');
  assert.equal(later.code, 0, later.stderr);
  assert.equal(later.json().paid, 0);
  assert.equal(later.json().deposited, 0);
  await inDatabase(env, async (db) => {
    assert.equal((await paycheckOf(db, paid.jobId)).status, 'DEPOSITED');
    assert.equal((await paycheckOf(db, unbanked.jobId)).status, 'PROCESSING');
  });
});

test('payroll run and settle refuse a malformed date or instant with exit code 2, touching nothing', async (t) => {
  const env = await cliDatabaseEnv(t);
  for (const argv of [
    ['payroll', 'run', '--date', '2026-02-30'],
    ['payroll', 'run', '--date', '20.02.2026'],
    ['settle', '--at', '2026-02-23'],
    ['settle', '--at', 'tomorrow'],
    // Date would settle as of 2 March, 1 December, 1 BC.
    ['settle', '--at', '2026-02-30T00:00:00Z'],
    ['settle', '--at', '2026-11-31T12:00:00+01:00'],
    ['settle', '--at', '0000-01-01T00:00:00Z'],
    ['settle', '--at', '2026-02-28T24:00:00Z'],
  ]) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, 2, argv.join(' '));
    assert.match(run.stderr, /--(date|at) must be/);
    assert.equal(run.stdout, '');
  }
  const help = await ewa(env, 'payroll');
  assert.equal(help.code, 2);
  assert.match(help.stderr, /ewa payroll run/);
});

// Friday 2026-03-20, 12:00 UTC: 08:00 in New York, already Saturday 02:00 on Kiritimati (UTC+14). The open pay period
// (default policy) runs 2026-03-16 to 03-29 and ends 2026-03-30 04:00 UTC.
const NOW = new Date('2026-03-20T12:00:00.000Z');

test('payroll run and settle refuse a date or instant later than now unless --allow-future, and say what it does', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'migrate')).code, 0);
  const worker = await inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    await db.insertInto('organizations').values({ id: organizationId, name: 'New York Employer' }).execute();
    await db.insertInto('organization_policies').values({ organization_id: organizationId }).execute();
    const worker = await createWorker(db, organizationId, true);
    const core = createMoneyCore(db, loadConfig(env));
    const recordedAt = new Date('2026-03-19T20:00:00.000Z');
    await core.earnings.record(
      ['2026-03-16', '2026-03-17'].map((day) => ({
        jobId: worker.jobId,
        externalId: `shift-${day}`,
        workedOn: day,
        hoursHundredths: 800,
        amountMinor: 16_000,
        source: 'SHIFT' as const,
      })),
      recordedAt,
      { backdated: 'REFUSE' },
    );
    // Due on the next business day, Friday morning in New York: later today, after NOW.
    await core.transfers.create(
      worker.personId,
      {
        id: undefined,
        amountMinor: 5_000,
        currency: 'USD',
        schedule: 'NEXT_BUSINESS_DAY',
        preview: false,
        originId: worker.balanceId,
        destinationId: worker.depositoryId!,
        personId: undefined,
      },
      recordedAt,
    );
    return worker;
  });
  const state = () =>
    inDatabase(env, async (db) => ({
      paycheck: (await paycheckOf(db, worker.jobId)).status,
      advance: (
        await db
          .selectFrom('transfers')
          .select('status')
          .where('origin_account_id', '=', worker.balanceId)
          .executeTakeFirstOrThrow()
      ).status,
      balance: (await accountBalancesMinor(db, [worker.balanceId])).get(worker.balanceId),
      ledger: await ledgerTotals(db),
    }));
  // The instruction is in the outbox, not yet sent: when the sandbox rail will deliver it is a function of it.
  const settleAfter = await inDatabase(env, async (db) => {
    const advance = await db
      .selectFrom('transfers')
      .select(['submitted_at', 'settle_after'])
      .where('origin_account_id', '=', worker.balanceId)
      .executeTakeFirstOrThrow();
    assert.equal(advance.settle_after, null, 'the rail has not been told yet');
    return createSandboxRail()
      .settleAt({
        purpose: 'ADVANCE',
        schedule: 'NEXT_BUSINESS_DAY',
        submittedAt: new Date(advance.submitted_at),
      })
      .toISOString();
  });
  assert.equal(settleAfter, '2026-03-20T13:00:00.000Z', 'Friday 09:00 in New York');
  const untouched = await state();
  assert.deepEqual(
    [untouched.paycheck, untouched.advance, untouched.balance],
    ['ESTIMATED', 'PENDING', 7_000],
  );

  for (const [argv, message] of [
    [
      ['payroll', 'run', '--date', '2026-03-30'],
      /^ewa payroll run: --date 2026-03-30 is in the future: today is 2026-03-20 at the latest .*closes now, for good, every pay period that ends by 10:00 New York time that day.*Give --allow-future as well/,
    ],
    // Tomorrow in UTC is today nowhere yet: no organization is east of New York.
    [['payroll', 'run', '--date', '2026-03-21'], /--date 2026-03-21 is in the future: today is 2026-03-20/],
    [
      ['settle', '--at', settleAfter],
      /^ewa settle: --at 2026-03-20T13:00:00\.000Z is in the future \(it is now 2026-03-20T12:00:00\.000Z\).*before the rail has delivered them.*--allow-future/,
    ],
    [['settle', '--at', '2026-03-20T12:00:00.001Z'], /--at 2026-03-20T12:00:00\.001Z is in the future/],
    [['payroll', 'run', '--allow-future'], /--allow-future goes with --date/],
    [['settle', '--allow-future'], /--allow-future goes with --at/],
  ] as [string[], RegExp][]) {
    const refused = await ewaAt(NOW, env, ...argv);
    assert.equal(refused.code, 2, `${argv.join(' ')}: ${refused.stderr}`);
    assert.match(refused.stderr, message);
    assert.equal(refused.stdout, '');
  }
  assert.deepEqual(await state(), untouched, 'nothing closed, paid or settled');

  // Today, by the UTC calendar: the run is as of now, not the end of the day, so the advance due at 13:00 waits.
  const today = await ewaAt(NOW, env, 'payroll', 'run', '--date', '2026-03-20');
  assert.equal(today.code, 0, today.stderr);
  assert.match(
    today.stdout,
    /^Payroll as of 2026-03-20T12:00:00\.000Z \(now: the end of 2026-03-20 in UTC is still to come\)\n {2}closed {5}0 /,
  );
  assert.match(today.stdout, /settled {4}0 /);
  // An employer on Kiritimati makes 2026-03-21 today somewhere: allowed, as of now.
  await inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    await db
      .insertInto('organizations')
      .values({ id: organizationId, name: 'Kiritimati Employer' })
      .execute();
    await db
      .insertInto('organization_policies')
      .values({ organization_id: organizationId, time_zone: 'Pacific/Kiritimati' })
      .execute();
  });
  const ahead = await ewaAt(NOW, env, 'payroll', 'run', '--date', '2026-03-21', '--json');
  assert.equal(ahead.code, 0, ahead.stderr);
  assert.deepEqual(ahead.json(), {
    as_of: NOW.toISOString(),
    closed: 0,
    paid: 0,
    held: 0,
    held_reasons: {},
    settled: 0,
    failed: 0,
    deposited: 0,
    returned: 0,
    ach_returns: 0,
  });
  assert.equal((await ewaAt(NOW, env, 'payroll', 'run', '--date', '2026-03-22')).code, 2);
  assert.deepEqual(await state(), untouched, 'a run as of now finds nothing due');

  const settled = await ewaAt(NOW, env, 'settle', '--at', settleAfter, '--allow-future');
  assert.equal(settled.code, 0, settled.stderr);
  assert.match(
    settled.stderr,
    /^--allow-future: as of 2026-03-20T13:00:00\.000Z, 1 hour ahead of now: resolving now, for good, every advance and paycheck due by then/,
  );
  assert.match(
    settled.stdout,
    /^Settlement as of 2026-03-20T13:00:00\.000Z \(in the future: --allow-future\)/,
  );
  assert.match(settled.stdout, /settled {4}1 /);

  const payday = await ewaAt(NOW, env, 'payroll', 'run', '--date', '2026-03-30', '--allow-future', '--json');
  assert.equal(payday.code, 0, payday.stderr);
  assert.match(
    payday.stderr,
    /^--allow-future: as of 2026-03-30T14:00:00\.000Z, 10 days ahead of now: closing now, for good, every pay period/,
  );
  assert.equal(payday.json().as_of, '2026-03-30T14:00:00.000Z');
  assert.deepEqual([payday.json().closed, payday.json().paid], [1, 1]);
  const after = await state();
  assert.deepEqual([after.paycheck, after.advance, after.balance], ['IN_TRANSIT', 'SETTLED', 0]);
});

test('with EWA_RAIL=ach, settle sends the outbox, cuts the ACH file due and settles what it paid, as the scheduler does', async (t) => {
  const { folder, env, outbound, config } = await achEnv(t);
  const advanceId = randomUUID();
  await inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    await db.insertInto('organizations').values({ id: organizationId, name: 'ACH Employer' }).execute();
    await db.insertInto('organization_policies').values({ organization_id: organizationId }).execute();
    const worker = await createWorker(db, organizationId, true);
    await giveBankDetails(db, config, worker.depositoryId!);
    const core = createMoneyCore(db, config, { now: () => RECORDED_AT });
    await core.earnings.record(
      WORKED_ON.map((day) => ({
        jobId: worker.jobId,
        externalId: `shift-${day}`,
        workedOn: day,
        hoursHundredths: 800,
        amountMinor: 16_000,
        source: 'SHIFT' as const,
      })),
      RECORDED_AT,
      { backdated: 'RECORD' },
    );
    await core.transfers.create(
      worker.personId,
      {
        id: advanceId,
        amountMinor: 5_000,
        currency: 'USD',
        schedule: 'NEXT_BUSINESS_DAY',
        preview: false,
        originId: worker.balanceId,
        destinationId: worker.depositoryId!,
        personId: undefined,
      },
      RECORDED_AT,
    );
  });
  // Made Thursday 15:00 New York and sent a minute later: the 16:45 window's entry; the next morning's settle cuts
  // that window's file (effective Friday) and, after 08:30 Friday, settles the advance.
  const sent = await ewaAt(new Date('2026-11-26T12:00:00Z'), env, 'settle', '--at', '2026-02-05T20:01:00Z');
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(
    existsSync(outbound) ? readdirSync(outbound).length : 0,
    0,
    'no file before the window closes',
  );
  const settled = await ewaAt(
    new Date('2026-11-26T12:00:00Z'),
    env,
    'settle',
    '--at',
    '2026-02-06T14:00:00Z',
    '--json',
  );
  assert.equal(settled.code, 0, settled.stderr);
  assert.equal(settled.json().settled, 1);
  const files = readdirSync(outbound).filter((name) => !name.startsWith('.'));
  assert.equal(files.length, 1, 'one file, for the window the advance went in');
  assert.match(readFileSync(join(outbound, files[0]!), 'utf8'), /000123456789/);
  await inDatabase(env, async (db) => {
    const transfer = await db
      .selectFrom('transfers')
      .selectAll()
      .where('id', '=', advanceId)
      .executeTakeFirst();
    assert.equal(transfer?.status, 'SETTLED');
  });
  // A return file the bank sent that cannot be read: said on standard error, exit 1, since a file this command read
  // is not read again and no one else would be told.
  mkdirSync(join(folder, 'inbound'), { recursive: true });
  writeFileSync(join(folder, 'inbound', 'returns-1.ach'), 'garbage line\n');
  const refused = await ewaAt(
    new Date('2026-11-26T12:00:00Z'),
    env,
    'settle',
    '--at',
    '2026-02-06T15:00:00Z',
    '--json',
  );
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(
    refused.stderr,
    'ewa settle: the ACH return files need attention: 1 return file(s) refused (see `ewa ach returns`).\n',
  );
  assert.equal(refused.json().attention, '1 return file(s) refused (see `ewa ach returns`)');
  assert.equal(refused.json().ach_returns, 0);
});

test('payroll run --date D --allow-future pays on the morning of D, in its first ACH window, as the scheduler would', async (t) => {
  const { env, config } = await achEnv(t);
  const worker = await inDatabase(env, async (db) => {
    const organizationId = randomUUID();
    await db
      .insertInto('organizations')
      .values({ id: organizationId, name: 'Monday Payday Employer' })
      .execute();
    // Pay period 2026-03-16 … 2026-03-29 (New York), paid the next day, Monday 2026-03-30.
    await db
      .insertInto('organization_policies')
      .values({ organization_id: organizationId, payday_offset_days: 1 })
      .execute();
    const worker = await createWorker(db, organizationId, true);
    await giveBankDetails(db, config, worker.depositoryId!);
    await createMoneyCore(db, config, { now: () => NOW }).earnings.record(
      ['2026-03-16', '2026-03-17'].map((day) => ({
        jobId: worker.jobId,
        externalId: `shift-${day}`,
        workedOn: day,
        hoursHundredths: 800,
        amountMinor: 16_000,
        source: 'SHIFT' as const,
      })),
      NOW,
      { backdated: 'REFUSE' },
    );
    return worker;
  });

  const payday = await ewaAt(NOW, env, 'payroll', 'run', '--date', '2026-03-30', '--allow-future', '--json');
  assert.equal(payday.code, 0, payday.stderr);
  assert.match(payday.stderr, /^--allow-future: as of 2026-03-30T14:00:00\.000Z, 10 days ahead of now/);
  assert.equal(payday.json().as_of, '2026-03-30T14:00:00.000Z', '10:00 in New York (EDT)');
  assert.deepEqual([payday.json().closed, payday.json().paid], [1, 1]);
  await inDatabase(env, async (db) => {
    const paycheck = await paycheckOf(db, worker.jobId);
    assert.equal(paycheck.status, 'IN_TRANSIT');
    const { rows } = await sql<{ window_id: string; effective_date: string }>`select window_id,
        to_char(effective_date, 'YYYY-MM-DD') as effective_date
      from ach_entries where purpose = 'PAYCHECK'`.execute(db);
    // The end of the day would have put it in Tuesday's first window, effective Wednesday.
    assert.deepEqual(rows, [{ window_id: '2026-03-30/1030', effective_date: '2026-03-31' }]);
  });
});
