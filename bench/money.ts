import { availableParallelism } from 'node:os';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { checkLedgerInvariants } from '../src/ledger/invariants.ts';
import { buildServer } from '../src/server.ts';
import { formatShare, startCpuShare } from './cpu-share.ts';
import {
  adminQuery,
  analyzeMoneyTables,
  type BenchWorker,
  type MoneyBenchDatabase,
  openBenchSchema,
  seedWorkersWithTokens,
  sessionNameOf,
} from './money-fixture.ts';
import { pgbenchTpcb, type TpcbResult } from './pgbench.ts';
import { writeSection } from './report.ts';
import { profileRoundTrips, type RoundTripProfile } from './round-trips.ts';
import { startServer } from './server-process.ts';
import { formatSessionStates, sampleSessionStates } from './session-states.ts';
import { advanceBody, transferLoad } from './transfer-load.ts';
import { formatWal, type WalVolume, walPerUnit, walSoFar } from './wal-volume.ts';

const CONNECTIONS = 64;
const ADVANCE_MINOR = 1000;
const WARM_UP_SECONDS = 4;
/** Database connections shared by all API processes of a run, so that N processes do not take N times more. */
const POOL_TOTAL = 24;
/** A large shift today: each worker can take thousands of advances of 10 USD, so no run comes near a limit. */
const SHIFT_MINOR = 10_000_000;
const PROFILED = 300;

interface ProcessRun {
  processes: number;
  /** Advance transactions each process ran at once (EWA_TRANSFERS_IN_FLIGHT_MAX). */
  inFlight: number;
  poolPerProcess: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** 200 answers autocannon received, warm-up included. */
  ok: number;
  non2xx: number;
  errors: number;
  cpu: string;
  /** CPU milliseconds per advance of the API processes, of PostgreSQL and of autocannon, when measured. */
  cpuMs: { api: number; postgres: number; autocannon: number } | undefined;
  sessions: string;
  /** Transactions committed on the database per advance during the measured run (all sessions): group commit. */
  commitsPerAdvance: number;
  /** Write-ahead log per advance over the measured run (the cluster's: background polls and vacuum included). */
  wal: WalVolume;
  /** From an advance's decision (in its transaction) to the rail's acceptance being recorded, for the run's advances. */
  outboxLag: OutboxLag;
  refusals: string[];
}

interface OutboxLag {
  advances: number;
  /** Advances the rail had not accepted 2 s after the load ended. */
  unsent: number;
  p50: number;
  p99: number;
  max: number;
}

/** The outbox's lag over the advances decided in [from, to): commit to rail, as each transfer records it. */
async function outboxLagOf(bench: MoneyBenchDatabase, from: Date, to: Date): Promise<OutboxLag> {
  const { rows } = await sql<{ advances: number; unsent: number; p50: number; p99: number; max: number }>`
    with lag as (select extract(epoch from rail_accepted_at - submitted_at) * 1000 as ms from transfers
      where submitted_at >= ${from.toISOString()}::timestamptz and submitted_at < ${to.toISOString()}::timestamptz
        and origin_account_id is not null)
    select count(*)::integer as advances, (count(*) - count(ms))::integer as unsent,
      coalesce(percentile_disc(0.5) within group (order by ms), 0)::float8 as p50,
      coalesce(percentile_disc(0.99) within group (order by ms), 0)::float8 as p99,
      coalesce(max(ms), 0)::float8 as max
    from lag`.execute(bench.database.db);
  return rows[0]!;
}

/** EWA_TRANSFER_BATCH_MAX and EWA_TRANSFERS_IN_FLIGHT_MAX, when the benchmark is run with them, reach its servers. */
function batchSettings(): Record<string, string> {
  return Object.fromEntries(
    ['EWA_TRANSFER_BATCH_MAX', 'EWA_TRANSFERS_IN_FLIGHT_MAX'].flatMap((name) => {
      const value = process.env[name];
      return value === undefined ? [] : [[name, value]];
    }),
  );
}

/** Transactions committed in the benchmark's database so far, as the statistics collector counts them. */
async function commitsSoFar(): Promise<number> {
  const { rows } = await adminQuery(
    'select pg_stat_clear_snapshot(), xact_commit::text as commits from pg_stat_database where datname = current_database()',
  );
  return Number(rows[0].commits);
}

/** N `ewa serve` processes on the bench schema: a warm-up, then the measured load spread over all of them. */
async function measureProcesses(
  bench: MoneyBenchDatabase,
  workers: readonly BenchWorker[],
  tokens: readonly string[],
  processes: number,
  seconds: number,
  /** EWA_TRANSFERS_IN_FLIGHT_MAX; undefined: the server's default. */
  inFlight?: number,
): Promise<ProcessRun> {
  const poolPerProcess = Math.max(4, Math.ceil(POOL_TOTAL / processes));
  const session = sessionNameOf(bench.schema);
  // The API's sessions are named apart from this process's own pool, so that their states are counted alone.
  const apiSession = `${session}-api`;
  const databaseUrl = new URL(bench.env.DATABASE_URL!);
  databaseUrl.searchParams.set('application_name', apiSession);
  const serverEnv = {
    ...bench.env,
    DATABASE_URL: databaseUrl.toString(),
    EWA_DB_POOL_SIZE: String(poolPerProcess),
    EWA_SCHEDULER: 'false',
    EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0',
    ...batchSettings(),
    ...(inFlight === undefined ? {} : { EWA_TRANSFERS_IN_FLIGHT_MAX: String(inFlight) }),
  };
  const servers = await Promise.all(Array.from({ length: processes }, () => startServer(serverEnv)));
  try {
    const urls = servers.map((server) => server.baseUrl);
    const load = { connections: CONNECTIONS, amountMinor: ADVANCE_MINOR };
    // Warm-up: JIT, pools, and each process verifies each token once before it serves it from memory.
    const warm = await transferLoad(urls, workers, tokens, { ...load, seconds: WARM_UP_SECONDS });
    const meter = startCpuShare(
      servers.map((server) => server.child.pid ?? -1),
      session,
    );
    const states = sampleSessionStates(apiSession);
    // Backends report their counts within a second of idling: the warm-up's are in once this second has passed.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const commitsBefore = await commitsSoFar();
    const walBefore = await walSoFar();
    const measuredFrom = new Date();
    const measured = await transferLoad(urls, workers, tokens, { ...load, seconds });
    const measuredTo = new Date();
    const share = await meter.stop();
    const sessions = await states.stop();
    // Requests still running when autocannon hung up finish before the servers stop, so that each leaves its answer.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const commits = (await commitsSoFar()) - commitsBefore;
    const wal = walPerUnit(walBefore, await walSoFar(), measured.result.requests.total);
    const outboxLag = await outboxLagOf(bench, measuredFrom, measuredTo);
    const { result } = measured;
    const perAdvance = (cpuSeconds: number) => (cpuSeconds * 1000) / result.requests.total;
    return {
      processes,
      // What the servers ran with, as they read it from the same environment.
      inFlight: loadConfig(serverEnv).money.transfersInFlightMax,
      poolPerProcess,
      perSecond: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      ok: result['2xx'] + warm.result['2xx'],
      non2xx: result.non2xx + warm.result.non2xx,
      errors: result.errors + warm.result.errors,
      cpu: formatShare(share),
      cpuMs: share
        ? {
            api: perAdvance(share.serverSeconds),
            postgres: perAdvance(share.postgresSeconds),
            autocannon: perAdvance(share.loadGeneratorSeconds),
          }
        : undefined,
      sessions: formatSessionStates(sessions),
      commitsPerAdvance: commits / result.requests.total,
      wal,
      outboxLag,
      refusals: [...warm.refusals, ...measured.refusals],
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** One advance at a time through the whole HTTP stack in this process, every statement timed. */
async function profileOneAtATime(
  bench: MoneyBenchDatabase,
  workers: readonly BenchWorker[],
  tokens: readonly string[],
): Promise<RoundTripProfile> {
  const servers = await buildServer(bench.config, { database: bench.database });
  try {
    const post = async (index: number) => {
      const response = await servers.api.inject({
        method: 'POST',
        url: '/rest/transfers',
        headers: {
          authorization: `Bearer ${tokens[index % workers.length]}`,
          'content-type': 'application/vnd.api+json',
          'idempotency-key': crypto.randomUUID(),
        },
        payload: advanceBody(workers[index % workers.length]!, ADVANCE_MINOR),
      });
      if (response.statusCode !== 200) throw new Error(`advance refused: ${response.body}`);
    };
    for (let i = 0; i < 50; i++) await post(i); // warm-up
    return await profileRoundTrips(PROFILED, (i) => post(i + 50));
  } finally {
    await Promise.all([servers.api.close(), servers.auth.close(), servers.payments.close()]);
  }
}

/** The books after the load: the ledger invariants, and one advance for each 200 answer stored under its key. */
async function checkBooks(bench: MoneyBenchDatabase, seenByAutocannon: number): Promise<string> {
  // The runs added tens of thousands of rows since the last statistics; autovacuum would have analyzed them by now.
  await analyzeMoneyTables(bench.database.db);
  const started = performance.now();
  const violations = await checkLedgerInvariants(bench.database.db);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const { rows } = await sql<{ advances: number; answered: number }>`select
      (select count(*) from transfers where origin_account_id is not null)::integer as advances,
      (select count(*) from idempotency_keys where response_status = 200)::integer as answered`.execute(
    bench.database.db,
  );
  const { advances, answered } = rows[0]!;
  const count = (n: number) => n.toLocaleString('en-US');
  if (violations.length === 0 && advances === answered)
    return (
      `Books after the runs: \`checkLedgerInvariants\` finds no violation (${seconds} s), and the ${count(advances)} ` +
      'advances in the database are exactly the 200 answers stored under their Idempotency-Keys ' +
      `(autocannon received ${count(seenByAutocannon)} of them and the profile below ${PROFILED + 50}; the rest were ` +
      'answered after autocannon had stopped listening).'
    );
  return (
    `Books after the runs: ${violations.length} invariant(s) broken (${violations.map((v) => v.rule).join('; ')}); ` +
    `${count(advances)} advances, ${count(answered)} stored 200 answers.`
  );
}

const ms = (value: number | undefined, digits = 1) =>
  value === undefined ? '–' : `${value.toFixed(digits)} ms`;

function tpcbRow(label: string, run: TpcbResult): string {
  return `| ${label} | ${Math.round(run.tps)} | ${run.latencyMs} ms | ${run.failed} | ${ms(run.postgresCpuMs, 2)} | ${ms(run.clientCpuMs, 2)} | ${formatWal(run.wal)} | ${formatShare(run.cpu)} |`;
}

/** How much more CPU an advance takes than a TPC-B transaction, on each side of the database connection. */
function workPerUnit(runs: readonly ProcessRun[], tpcb: readonly TpcbResult[], tpcbTps: number): string {
  const measured = runs.flatMap((run) => (run.cpuMs ? [run.cpuMs] : []));
  const tpcbPostgres = tpcb.flatMap((run) => (run.postgresCpuMs === undefined ? [] : [run.postgresCpuMs]));
  if (measured.length === 0 || tpcbPostgres.length === 0) return '';
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const postgres = mean(measured.map((cpu) => cpu.postgres));
  const api = mean(measured.map((cpu) => cpu.api));
  const loadGenerator = mean(measured.map((cpu) => cpu.autocannon));
  const reference = mean(tpcbPostgres);
  // A run that keeps every core busy does cores × 1000 / (CPU ms per advance) advances a second: the goal's budget.
  const cores = availableParallelism();
  const budget = (cores * 1000) / (tpcbTps / 2);
  return (
    `Work per unit (CPU time, which other load on the host inflates less than it does throughput): an advance costs ` +
    `PostgreSQL ${postgres.toFixed(1)} ms and the API process ${api.toFixed(1)} ms; a TPC-B transaction costs PostgreSQL ` +
    `${reference.toFixed(2)} ms. PostgreSQL alone does ${(postgres / reference).toFixed(1)}× the work per advance. ` +
    `Half of TPC-B's rate on ${cores} cores leaves an advance ${budget.toFixed(2)} ms of CPU in all (API, PostgreSQL ` +
    `and load generator); it takes ${(api + postgres + loadGenerator).toFixed(1)} ms. ` +
    `The write-ahead log of an advance: ${formatWal(meanWal(runs.map((run) => run.wal)))}; of a TPC-B transaction: ` +
    `${formatWal(meanWal(tpcb.map((run) => run.wal)))} (means of the runs).`
  );
}

function meanWal(volumes: readonly WalVolume[]): WalVolume {
  const mean = (pick: (wal: WalVolume) => number) =>
    volumes.reduce((sum, wal) => sum + pick(wal), 0) / Math.max(1, volumes.length);
  return { records: mean((wal) => wal.records), bytes: mean((wal) => wal.bytes) };
}

/** EWA_TRANSFERS_IN_FLIGHT_MAX values measured beside the server's default, with one process. */
const IN_FLIGHT_SWEEP = [1, 4, 12];

export async function transfersScenario(options: {
  workers: number;
  seconds: number;
  processes: number[];
}): Promise<void> {
  const tpcb = { scale: 10, clients: CONNECTIONS, threads: 8, seconds: 15 };
  const before = await pgbenchTpcb(tpcb);
  const bench = await openBenchSchema(5, { EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0' });
  const runs: ProcessRun[] = [];
  const sweep: ProcessRun[] = [];
  let seedSeconds = 0;
  let profile: RoundTripProfile;
  let books: string;
  try {
    const seedStarted = performance.now();
    const { workers, tokens } = await seedWorkersWithTokens(bench, options.workers, {
      amountMinor: SHIFT_MINOR,
      label: 'bench',
    });
    // Statistics, as autovacuum would have them on a running system: the planner's estimates of fresh tables are guesses.
    await analyzeMoneyTables(bench.database.db);
    seedSeconds = (performance.now() - seedStarted) / 1000;
    for (const processes of options.processes) {
      runs.push(await measureProcesses(bench, workers, tokens, processes, options.seconds));
      console.log(runs.at(-1));
    }
    for (const inFlight of IN_FLIGHT_SWEEP) {
      sweep.push(await measureProcesses(bench, workers, tokens, 1, options.seconds, inFlight));
      console.log(sweep.at(-1));
    }
    profile = await profileOneAtATime(bench, workers, tokens);
    books = await checkBooks(
      bench,
      [...runs, ...sweep].reduce((sum, run) => sum + run.ok, 0),
    );
  } finally {
    await bench.drop();
  }
  const after = await pgbenchTpcb(tpcb);
  const tpcbMean = (before.tps + after.tps) / 2;
  const best = runs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  const ratio = (best.perSecond / tpcbMean) * 100;
  const count = (n: number) => n.toLocaleString('en-US');
  const body = [
    `## POST /rest/transfers on PostgreSQL (${CONNECTIONS} connections, ${options.seconds} s after a ${WARM_UP_SECONDS} s warm-up, autocannon)`,
    '',
    `Real advances (not previews) of ${ADVANCE_MINOR / 100} USD to the worker's bank account, next business day, each`,
    `with a new Idempotency-Key; request i is worker i mod ${count(options.workers)}'s. The policy allows 1,000`,
    'advances a day and EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS=0, so none is refused. N `ewa serve` processes',
    `(scheduler off) share ${POOL_TOTAL} database connections; autocannon, in the benchmark process, spreads its`,
    'connections over their ports. CPU shares are of the whole machine (all cores) during the measured run: API',
    'processes / PostgreSQL for our sessions (their backends and the WAL writer, checkpointer …) / autocannon /',
    'everything else (other programs and other sessions on this shared host) / taken by the host (steal) / idle.',
    'Each process runs at most "in flight" advance transactions at once (EWA_TRANSFERS_IN_FLIGHT_MAX) and',
    'batches the advances that arrive meanwhile, up to 32 a transaction (EWA_TRANSFER_BATCH_MAX): commits per',
    "advance is the database's count of committed transactions (all sessions, background polls included) over the",
    'advances of the measured run.',
    '',
    `Seed: ${count(options.workers)} workers (set-based SQL), one shift each through \`EarningsRecorder\` leaving`,
    `${count((SHIFT_MINOR * 0.375) / 100)} USD available to each, and a user token each: ${seedSeconds.toFixed(1)} s.`,
    '',
    '| API processes | pool each | in flight | advances/s | latency p50 | latency p99 | non-2xx | errors | commits per advance | write-ahead log per advance | CPU per advance: API / PostgreSQL / autocannon | CPU: API / PostgreSQL / autocannon / other / steal / idle |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (run) =>
        `| ${run.processes} | ${run.poolPerProcess} | ${run.inFlight} | ${run.perSecond} | ${run.p50} ms | ${run.p99} ms | ${run.non2xx} | ${run.errors} | ${run.commitsPerAdvance.toFixed(2)} | ${formatWal(run.wal)} | ${run.cpuMs ? `${ms(run.cpuMs.api)} / ${ms(run.cpuMs.postgres)} / ${ms(run.cpuMs.autocannon)}` : 'not measured'} | ${run.cpu} |`,
    ),
    '',
    "The outbox's lag under that load: from an advance's decision in its transaction (a round trip before its commit)",
    "to the rail's acceptance recorded on the transfer (`rail_accepted_at`), over the measured run's advances. The",
    'dispatcher of each process is nudged by its commits and gathers 20 ms of them into one round.',
    '',
    '| API processes | advances | lag p50 | lag p99 | lag max | not yet sent 2 s after the load |',
    '|---|---|---|---|---|---|',
    ...runs.map(
      (run) =>
        `| ${run.processes} | ${count(run.outboxLag.advances)} | ${ms(run.outboxLag.p50, 0)} | ${ms(run.outboxLag.p99, 0)} | ${ms(run.outboxLag.max, 0)} | ${run.outboxLag.unsent} |`,
    ),
    '',
    `What the API processes' ${POOL_TOTAL} PostgreSQL sessions were doing meanwhile (mean number in each state, sampled`,
    'every 100 ms; "idle in transaction" is a session waiting for the API process to send its next statement):',
    '',
    '| API processes | sessions |',
    '|---|---|',
    ...runs.map((run) => `| ${run.processes} | ${run.sessions} |`),
    '',
    `pgbench on the same PostgreSQL, built-in TPC-B-like script, scale ${tpcb.scale}, \`-c ${tpcb.clients} -j ${tpcb.threads} -T ${tpcb.seconds} -M prepared\`,`,
    'in a scratch database, before and after ours (CPU counted over its middle seconds):',
    '',
    '| run | tps | latency average | failed | CPU per transaction: PostgreSQL | pgbench | write-ahead log per transaction | CPU: – / PostgreSQL / pgbench / other / steal / idle |',
    '|---|---|---|---|---|---|---|---|',
    tpcbRow('before', before),
    tpcbRow('after', after),
    '',
    `Best of ours: ${best.perSecond} advances/s with ${best.processes} API process${best.processes === 1 ? '' : 'es'}, ` +
      `${ratio.toFixed(1)} % of TPC-B's ${Math.round(tpcbMean)} tps (mean of the two runs). ` +
      `Goal ≥ 50 %: ${ratio >= 50 ? 'met' : 'not met'}.`,
    '',
    workPerUnit(runs, [before, after], tpcbMean),
    '',
    'How many advance transactions one process runs at once (EWA_TRANSFERS_IN_FLIGHT_MAX), one API process with',
    `its pool of ${POOL_TOTAL}, the same load, in the same run: fewer at once make larger batches, which share their`,
    'statements and their commit.',
    '',
    '| in flight | advances/s | latency p50 | latency p99 | non-2xx | commits per advance | CPU per advance: API / PostgreSQL |',
    '|---|---|---|---|---|---|---|',
    ...[...sweep, ...runs.filter((run) => run.processes === 1)]
      .sort((a, b) => a.inFlight - b.inFlight)
      .map(
        (run) =>
          `| ${run.inFlight}${sweep.includes(run) || batchSettings().EWA_TRANSFERS_IN_FLIGHT_MAX ? '' : ' (default)'} | ${run.perSecond} | ${run.p50} ms | ${run.p99} ms | ${run.non2xx} | ${run.commitsPerAdvance.toFixed(2)} | ${run.cpuMs ? `${ms(run.cpuMs.api, 2)} / ${ms(run.cpuMs.postgres, 2)}` : 'not measured'} |`,
      ),
    '',
    books,
    '',
    `Where one advance's time goes, one request at a time through the HTTP stack in one process (${PROFILED} advances,`,
    `${profile.requestMs.toFixed(2)} ms each): ${profile.statementsPerRequest.toFixed(1)} statements sent to PostgreSQL in ${profile.roundTripsPerRequest.toFixed(1)} round trips`,
    `(TPC-B sends 7 statements, BEGIN and END included, in 7), waited on for ${profile.databaseMsPerRequest.toFixed(2)} ms; the other`,
    `${(profile.requestMs - profile.databaseMsPerRequest).toFixed(2)} ms is the process's own work. A statement's time runs until its answer, which in a batch includes the statements before it.`,
    '',
    '| statement | per advance | ms until answered, per advance |',
    '|---|---|---|',
    ...profile.statements
      .filter((s) => s.callsPerRequest >= 0.5) // not the background polls of the process
      .map(
        (s) =>
          `| \`${s.label.replace(/\|/g, '\\|')}…\` | ${s.callsPerRequest.toFixed(1)} | ${s.msPerRequest.toFixed(2)} |`,
      ),
  ].join('\n');
  writeSection('transfers', body);
  console.log(body);
  for (const run of runs)
    if (run.refusals.length > 0) console.log(`refusals with ${run.processes} processes:`, run.refusals);
}
