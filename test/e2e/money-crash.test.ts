import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { type ApiProcess, startApiProcess } from '../helpers/ew-processes.ts';
import {
  advanceRequest,
  availableMinor,
  createFundedWorker,
  type HttpAnswer,
  openMoneyWorld,
  postAdvance,
} from '../helpers/money-world.ts';
import { createPayrollRoster, payrollReportOf, startPayrollRun } from '../helpers/payroll-roster.ts';
import { onPostgres } from '../helpers/test-database.ts';

const NEEDS_POSTGRES =
  'needs PostgreSQL: set DATABASE_URL (processes are killed and restarted on one database)';
const codeOf = (answer: HttpAnswer) => answer.json.errors?.[0]?.code;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('advances in flight when an API process is killed -9: every retry ends with one outcome', async (t) => {
  if (!onPostgres) {
    t.skip(NEEDS_POSTGRES);
    return;
  }
  const world = await openMoneyWorld(t);
  const env = { ...world.env, EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0' };
  const first = await startApiProcess(env);
  world.onCleanup(() => first.kill());
  const worker = await createFundedWorker(world, first.apiUrl, {
    policy: { daily_transfer_count_max: 1000, daily_transfer_amount_max_minor: 100_000_000 },
    grossMinor: 80_000,
  });
  const before = await availableMinor(first.apiUrl, worker);
  assert.equal(before, 30_000);

  // 50 advances of 550 … 1040 (39,750 in all): each with its own key and its own transfer id, so that a key's
  // transfer can be found whether or not its answer arrived.
  const requests = Array.from({ length: 50 }, (_, i) => {
    const id = randomUUID();
    return { key: randomUUID(), id, amount: 550 + 10 * i, body: advanceRequest(worker, 550 + 10 * i, id) };
  });
  const early = new Map<string, HttpAnswer>();
  const giveUp = new AbortController();
  let crash: Promise<void> | undefined;
  const transfersInDb = async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::integer as n from transfers
      where person_id = ${worker.personId} and origin_account_id is not null`.execute(world.db);
    return rows[0]!.n;
  };
  // The crash: once the first few have their answers, the client stops waiting for the others (a timeout), the
  // process goes on committing some of them, and is killed -9 as soon as one committed without its answer
  // reaching anyone. Then there are requests of all three kinds: answered, committed but unanswered, cut off.
  const crashWhenAnswerLost = async () => {
    giveUp.abort();
    const deadline = Date.now() + 10_000;
    while ((await transfersInDb()) <= [...early.values()].filter((a) => a.status === 200).length) {
      if (Date.now() > deadline) break;
      await sleep(5);
    }
    await first.kill();
  };
  await Promise.all(
    requests.map(async (request) => {
      const answer = await postAdvance(first.apiUrl, worker, request.body, request.key, giveUp.signal);
      if (answer.status !== 0) early.set(request.key, answer);
      if (early.size >= 3) crash ??= crashWhenAnswerLost();
    }),
  );
  await crash;
  for (const answer of early.values())
    assert.ok(answer.status === 200 || codeOf(answer) === 'EARNINGS_BALANCE_EXCEEDED', answer.text);
  const answeredOk = [...early.values()].filter((answer) => answer.status === 200).length;
  const committed = await transfersInDb();
  const lostAnswers = committed - answeredOk;
  const { rows: stored } = await sql<{ ok: number; all: number }>`select
      (count(*) filter (where response_status = 200))::integer as ok, count(*)::integer as all
    from idempotency_keys where scope = ${`person:${worker.personId}`}`.execute(world.db);
  const cutOff = requests.length - stored[0]!.all;
  t.diagnostic(
    `${early.size} answered before the kill; ${lostAnswers} transfers committed whose answer was lost; ` +
      `${cutOff} requests cut off by the kill left nothing behind`,
  );
  assert.ok(lostAnswers > 0, 'some advance committed without its answer reaching the client');
  assert.equal(
    stored[0]!.ok,
    committed,
    'each committed advance has its answer stored with it, and only those',
  );
  assert.ok(cutOff > 0, 'some requests were cut off mid-way by the kill');

  // The dead process's transactions were rolled back by PostgreSQL with their keys: retries may run at once.
  const second = await startApiProcess(env);
  world.onCleanup(() => second.kill());
  const final = await Promise.all(requests.map((request) => retryUntilAnswered(second, worker, request)));

  const outcomes = new Map<string, number>();
  for (const [i, answer] of final.entries()) {
    const request = requests[i]!;
    const label = `${answer.status} ${codeOf(answer) ?? ''}`.trim();
    outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
    const earlier = early.get(request.key);
    if (earlier)
      assert.equal(answer.text, earlier.text, 'an answer given before the crash is the one replayed');
    if (answer.status === 200) assert.equal(answer.json.data!.id, request.id);
  }
  assert.deepEqual(
    [...outcomes.keys()].filter((label) => label !== '200' && label !== '400 EARNINGS_BALANCE_EXCEEDED'),
    [],
    `every key ends accepted or refused for the balance: ${JSON.stringify(Object.fromEntries(outcomes))}`,
  );
  const { rows: transfers } = await sql<{ id: string; amount_minor: number }>`select id, amount_minor
    from transfers where person_id = ${worker.personId} and origin_account_id is not null`.execute(world.db);
  const acceptedIds = requests.filter((_, i) => final[i]!.status === 200).map((request) => request.id);
  assert.deepEqual(
    transfers.map((row) => row.id).sort(),
    acceptedIds.sort(),
    'a transfer exists exactly for each key answered 200: none doubled, none without its answer',
  );
  const { rows: keys } = await sql<{ n: number }>`select count(*)::integer as n from idempotency_keys
    where scope = ${`person:${worker.personId}`}`.execute(world.db);
  assert.equal(keys[0]!.n, requests.length, 'every key has its one answer stored');
  const taken = transfers.reduce((sum, row) => sum + row.amount_minor, 0);
  const after = await availableMinor(second.apiUrl, worker);
  assert.equal(after, before - taken);
  const refusedAmounts = requests.filter((_, i) => final[i]!.status !== 200).map((request) => request.amount);
  assert.ok(after < Math.min(...refusedAmounts), `a refusal with ${after} still available`);
  assert.deepEqual(await checkLedgerInvariants(world.db), []);
  assert.equal(await second.stop(), 0, second.output());
});

/** The client's retry loop: the same key and body until an answer that is not "still being processed". */
async function retryUntilAnswered(
  server: ApiProcess,
  worker: Parameters<typeof postAdvance>[1],
  request: { key: string; body: unknown },
): Promise<HttpAnswer> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await postAdvance(server.apiUrl, worker, request.body, request.key);
    if (answer.status !== 409 || Date.now() > deadline) return answer;
    await sleep(250);
  }
}

test('payday killed -9 half-way and run again pays every paycheck exactly once', async (t) => {
  if (!onPostgres) {
    t.skip(NEEDS_POSTGRES);
    return;
  }
  const world = await openMoneyWorld(t);
  // The pay period of 2 to 15 March 2026 (biweekly from 5 January); its payday is 20 March.
  const roster = await createPayrollRoster(world, {
    size: 3000,
    held: 20,
    workedOn: '2026-03-03',
    recordedAt: new Date('2026-03-04T17:00:00Z'),
  });
  const payday = '2026-03-20';
  const payable = roster.payableJobIds.length;
  const paidCount = async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::integer as n from paychecks
      where status in ('IN_TRANSIT', 'DEPOSITED')`.execute(world.db);
    return rows[0]!.n;
  };

  const run = startPayrollRun(world.env, payday);
  world.onCleanup(() => run.kill());
  const deadline = Date.now() + 60_000;
  // Killed as soon as some paychecks are IN_TRANSIT: a batch is committed behind it, the next one most likely open.
  while ((await paidCount()) === 0) {
    if (run.child.exitCode !== null) assert.fail(`the run ended before it was killed:\n${run.output()}`);
    assert.ok(Date.now() < deadline, `nothing paid within a minute:\n${run.output()}`);
    await sleep(10);
  }
  await run.kill();
  const paidAtKill = await paidCount();
  t.diagnostic(`ewa payroll run killed -9 with ${paidAtKill} of ${payable} paychecks paid`);
  assert.ok(paidAtKill < payable, `the run was killed half-way, not after it finished (${paidAtKill} paid)`);
  assert.deepEqual(
    await checkLedgerInvariants(world.db),
    [],
    'the books are sound at the moment of the kill',
  );

  const again = startPayrollRun(world.env, payday);
  world.onCleanup(() => again.kill());
  assert.equal(await again.exited, 0, again.output());
  assert.deepEqual(payrollReportOf(again), {
    ...payrollReportOf(again),
    closed: 0,
    paid: payable - paidAtKill,
    held: roster.heldJobIds.length,
  });
  const third = startPayrollRun(world.env, payday);
  world.onCleanup(() => third.kill());
  assert.equal(await third.exited, 0, third.output());
  assert.deepEqual(payrollReportOf(third), { ...payrollReportOf(third), closed: 0, paid: 0 });

  const { rows: postings } = await sql<{ outcome: string; paydays: number; n: number }>`select
      case when p.status in ('IN_TRANSIT', 'DEPOSITED') then 'PAID' else p.status || ' ' || p.payout_held_reason end
        as outcome,
      coalesce(x.paydays, 0)::integer as paydays, count(*)::integer as n
    from paychecks p left join (select paycheck_id, count(*) as paydays from ledger_postings
      where kind = 'PAYDAY' group by paycheck_id) x on x.paycheck_id = p.id
    group by 1, 2 order by 1`.execute(world.db);
  assert.deepEqual(postings, [
    { outcome: 'PAID', paydays: 1, n: payable },
    { outcome: 'PROCESSING NO_DEFAULT_ACCOUNT', paydays: 0, n: roster.heldJobIds.length },
  ]);
  // What left for the banks is net pay less the settled advances, paycheck by paycheck, and once.
  const { rows: sums } = await sql<{ payouts: number; expected: number; advanced: number }>`select
      sum(payout_minor)::bigint as payouts, sum(net_earnings_minor - total_debited_minor)::bigint as expected,
      count(*) filter (where total_debited_minor > 0)::integer as advanced
    from paychecks where status in ('IN_TRANSIT', 'DEPOSITED')`.execute(world.db);
  assert.equal(sums[0]!.payouts, sums[0]!.expected);
  assert.equal(sums[0]!.advanced, roster.advancedJobIds.length);
  assert.deepEqual(await checkLedgerInvariants(world.db), []);
});
