import { sql } from 'kysely';
import { checkLedgerInvariants } from '../src/ledger/invariants.ts';
import { createMoneyCore } from '../src/money/money-core.ts';
import { BATCHES_AT_ONCE } from '../src/money/payroll.ts';
import { type CpuShare, startCpuShare } from './cpu-share.ts';
import {
  type BenchWorker,
  createBenchEmployer,
  createBenchWorkers,
  openBenchSchema,
  recordShifts,
  sessionNameOf,
} from './money-fixture.ts';
import { writeSection } from './report.ts';
import { profileRoundTrips, type StatementCost } from './round-trips.ts';

/** A fixed week of the default calendar (biweekly from 2026-01-05, New York): the period 2026-03-02 … 03-15. */
const WORKED_ON = '2026-03-10';
const DURING_PERIOD = new Date('2026-03-11T15:30:00Z');
const NEXT_DAY = new Date('2026-03-12T15:30:00Z');
const AFTER_PERIOD = new Date('2026-03-16T12:00:00Z');
const SHIFT_MINOR = 16_000; // 8 hours at 20.00 USD
const ADVANCE_MINOR = 2_000;
const ADVANCES_IN_FLIGHT = 8;

const seconds = (since: number) => (performance.now() - since) / 1000;
const format = (value: number) => value.toLocaleString('en-US');

/** Advances of some workers through the transfer service (the API's own code, without HTTP), a few at a time. */
export async function takeAdvances(
  money: ReturnType<typeof createMoneyCore>,
  workers: readonly BenchWorker[],
  concurrency: number,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < workers.length; index = next++) {
      const worker = workers[index]!;
      await money.transfers.create(
        worker.personId,
        {
          id: undefined,
          amountMinor: ADVANCE_MINOR,
          currency: 'USD',
          schedule: 'NEXT_BUSINESS_DAY',
          preview: false,
          originId: worker.balanceAccountId,
          destinationId: worker.depositoryId,
          personId: undefined,
        },
        DURING_PERIOD,
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

interface Profiled<T> {
  result: T;
  seconds: number;
  statements: StatementCost[];
  cpu: CpuShare | undefined;
}

/** Runs `work` with each of its statements timed and the machine's CPU counted, to say where its time went. */
async function profiled<T>(session: string, work: () => Promise<T>): Promise<Profiled<T>> {
  let result: T | undefined;
  const meter = startCpuShare([], session);
  const profile = await profileRoundTrips(1, async () => {
    result = await work();
  });
  return {
    result: result as T,
    seconds: profile.requestMs / 1000,
    statements: profile.statements,
    cpu: await meter.stop(),
  };
}

function describeCpu(cpu: CpuShare | undefined): string {
  return cpu
    ? `CPU meanwhile (share of the whole machine): this process ${cpu.loadGenerator} %, PostgreSQL ${cpu.postgres} %, other programs ${cpu.other} %, steal ${cpu.steal} %, idle ${cpu.idle} %.`
    : '';
}

export async function payrollScenario(options: { workers: number; advances: number }): Promise<void> {
  const bench = await openBenchSchema(16);
  const rows: string[] = [];
  const notes: string[] = [];
  const profiles: { title: string; run: Profiled<unknown>; inFlight: number }[] = [];
  try {
    const money = createMoneyCore(bench.database.db, bench.config);
    let started = performance.now();
    const organizationId = await createBenchEmployer(bench.database.db);
    const workers = await createBenchWorkers(bench.database.db, organizationId, options.workers);
    rows.push(
      `| seed: people, jobs, accounts (set-based SQL) | ${format(options.workers)} workers | ${seconds(started).toFixed(1)} s | |`,
    );
    const shiftSeconds = await recordShifts(money.earnings, workers, {
      amountMinor: SHIFT_MINOR,
      workedOn: WORKED_ON,
      now: DURING_PERIOD,
      label: 'payroll',
      batchSize: 1000,
    });
    rows.push(
      `| seed: one shift each, \`EarningsRecorder.record\` in batches of 1,000 | ${format(options.workers)} shifts | ${shiftSeconds.toFixed(1)} s | ${format(Math.round(options.workers / shiftSeconds))} shifts/s |`,
    );
    const advanced = workers
      .filter((_, index) => index % Math.max(1, Math.round(workers.length / options.advances)) === 0)
      .slice(0, options.advances);
    const advances = await profiled(sessionNameOf(bench.schema), () =>
      takeAdvances(money, advanced, ADVANCES_IN_FLIGHT),
    );
    profiles.push({ title: 'the seeded advances', run: advances, inFlight: ADVANCES_IN_FLIGHT });
    const advanceSeconds = advances.seconds;
    rows.push(
      `| seed: advances of ${ADVANCE_MINOR / 100} USD, \`TransferService.create\`, ${ADVANCES_IN_FLIGHT} at a time | ${format(advanced.length)} advances | ${advanceSeconds.toFixed(1)} s | ${format(Math.round(advanced.length / advanceSeconds))} advances/s |`,
    );
    started = performance.now();
    const settledAdvances = await money.settle(NEXT_DAY);
    rows.push(
      `| seed: \`settle\` of those advances (their instructions sent from the outbox, then settled the next business day) | ${format(settledAdvances.sent.sent)} sent, ${format(settledAdvances.settled)} settled | ${seconds(started).toFixed(1)} s | |`,
    );
    const session = sessionNameOf(bench.schema);
    const payroll = await profiled(session, () => money.payroll(AFTER_PERIOD, { batchSize: 1000 }));
    const first = payroll.result;
    const payrollSeconds = payroll.seconds;
    profiles.push({ title: '`runPayroll`', run: payroll, inFlight: BATCHES_AT_ONCE });
    rows.push(
      `| **\`runPayroll\`** (closes the period and pays; batches of 1,000) | ${format(first.closed)} closed, ${format(first.paid)} paid, ${format(first.held)} held | **${payrollSeconds.toFixed(1)} s** | ${format(Math.round(first.paid / payrollSeconds))} paychecks/s |`,
    );
    started = performance.now();
    const second = await money.payroll(AFTER_PERIOD, {
      batchSize: 1000,
    });
    rows.push(
      `| \`runPayroll\` again | ${format(second.closed)} closed, ${format(second.paid)} paid, ${format(second.held)} held | ${seconds(started).toFixed(1)} s | |`,
    );
    const dispatch = await profiled(session, () => money.outbox.dispatchDue(AFTER_PERIOD));
    const dispatchSeconds = dispatch.seconds;
    profiles.push({ title: 'the outbox dispatch of the payouts', run: dispatch, inFlight: 1 });
    rows.push(
      `| **outbox dispatch**: the payouts' instructions sent to the (sandbox) rail, acceptances recorded | ${format(dispatch.result.sent)} sent, ${format(dispatch.result.retried)} retried | **${dispatchSeconds.toFixed(1)} s** | ${format(Math.round(dispatch.result.sent / dispatchSeconds))} instructions/s |`,
    );
    const { rows: due } = await sql<{ at: Date | null; n: number }>`select max(payout_settle_after) as at,
        count(*)::integer as n from paychecks where status = 'IN_TRANSIT'`.execute(bench.database.db);
    const settleAt = due[0]?.at ?? AFTER_PERIOD;
    const settlement = await profiled(session, () => money.settle(settleAt));
    const deposited = settlement.result;
    const settleSeconds = settlement.seconds;
    profiles.push({ title: '`settle`', run: settlement, inFlight: 1 });
    rows.push(
      `| **\`settle\`** of the IN_TRANSIT paychecks (nothing left to send; the rail asked, the deposits booked) | ${format(deposited.deposited)} of ${format(Number(due[0]?.n ?? 0))} deposited | **${settleSeconds.toFixed(1)} s** | ${format(Math.round(deposited.deposited / settleSeconds))} paychecks/s |`,
    );
    started = performance.now();
    const violations = await checkLedgerInvariants(bench.database.db);
    rows.push(
      `| \`checkLedgerInvariants\` over the whole database | ${violations.length === 0 ? 'no violation' : `${violations.length} broken: ${violations.map((v) => v.rule).join('; ')}`} | ${seconds(started).toFixed(1)} s | |`,
    );
    const payrollMet = payrollSeconds + dispatchSeconds < 60 && first.paid === options.workers;
    const secondMet = second.paid === 0 && second.closed === 0;
    notes.push(
      `Goal \`runPayroll\` over ${format(options.workers)} workers, with the outbox dispatch of its payouts, < 60 s: ${payrollMet ? 'met' : 'not met'} (${payrollSeconds.toFixed(1)} s + ${dispatchSeconds.toFixed(1)} s). ` +
        `Second run pays nothing: ${secondMet ? 'met' : 'not met'}. Books balance: ${violations.length === 0 ? 'yes' : 'no'}.`,
    );
  } finally {
    await bench.drop();
  }
  const body = [
    `## Payroll of ${format(options.workers)} workers on PostgreSQL`,
    '',
    `Every worker has one shift of ${SHIFT_MINOR / 100} USD in the pay period 2026-03-02 … 03-15 (net ${(SHIFT_MINOR * 0.75) / 100} USD, half of it`,
    `accessible); one in ${Math.round(options.workers / options.advances)} took an advance of ${ADVANCE_MINOR / 100} USD, settled before payday. The clock is set to the`,
    'period, then to the day after it ends, so the run does not depend on the date. One process, pool of 16.',
    '',
    '| step | what | time | rate |',
    '|---|---|---|---|',
    ...rows,
    '',
    ...notes,
    ...profiles.flatMap((profile) => [
      '',
      `Where the ${profile.run.seconds.toFixed(1)} s of ${profile.title} went (each statement's time until PostgreSQL answered, summed${profile.inFlight > 1 ? ` over the ${profile.inFlight} in flight at once, so the sums exceed the time` : ''}).`,
      describeCpu(profile.run.cpu),
      '',
      '| statement | calls | seconds |',
      '|---|---|---|',
      ...profile.run.statements
        .slice(0, 6)
        .map(
          (s) =>
            `| \`${s.label.replace(/\|/g, '\\|')}…\` | ${s.callsPerRequest} | ${(s.msPerRequest / 1000).toFixed(1)} |`,
        ),
    ]),
  ].join('\n');
  writeSection('payroll', body);
  console.log(body);
}
