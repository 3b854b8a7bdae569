import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { checkLedgerInvariants } from '../src/ledger/invariants.ts';
import { type ProfileSummary, summarizeProfiles } from './cpu-profile.ts';
import { type CpuShare, formatShare, startCpuShare } from './cpu-share.ts';
import {
  analyzeMoneyTables,
  type BenchWorker,
  openBenchSchema,
  seedWorkersWithTokens,
  sessionNameOf,
} from './money-fixture.ts';
import { peakRssMb, processTree } from './peak-rss.ts';
import { pgbenchTpcb, type TpcbResult } from './pgbench.ts';
import { writeSection } from './report.ts';
import { benchWorkers, startServer } from './server-process.ts';
import { advanceBody } from './transfer-load.ts';

const CONNECTIONS = 50;
const WARM_UP_SECONDS = 2;
const POOL_SIZE = 20;
const SHIFT_MINOR = 100_000;
/** Advances each worker has taken before the reads: some history for the balance and the transfers list. */
const ADVANCES_EACH = 3;

/** The five reads of issue 22 with a user token; the account is the worker's earnings balance. */
const READS: readonly { label: string; path: (worker: BenchWorker) => string }[] = [
  { label: 'GET /rest/accounts/{id}', path: (worker) => `/rest/accounts/${worker.balanceAccountId}` },
  { label: 'GET /rest/accounts', path: () => '/rest/accounts' },
  { label: 'GET /rest/transfers', path: () => '/rest/transfers' },
  { label: 'GET /rest/paychecks', path: () => '/rest/paychecks' },
  { label: 'GET /rest/jobs', path: () => '/rest/jobs' },
];

interface BuiltRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}
type Result = Awaited<ReturnType<typeof autocannon>>;
const load = autocannon as unknown as (options: {
  url: string;
  connections: number;
  duration: number;
  requests: { method: string; path: string; setupRequest: (request: BuiltRequest) => BuiltRequest }[];
}) => Promise<Result>;

/** One GET path per request, each request a different worker's (their token and their account). */
function readLoad(
  baseUrl: string,
  paths: readonly string[],
  authorizations: readonly string[],
  seconds: number,
): Promise<Result> {
  let next = 0;
  return load({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        path: paths[0]!,
        setupRequest(request) {
          const index = next++ % paths.length;
          return {
            ...request,
            method: 'GET',
            path: paths[index]!,
            headers: { authorization: authorizations[index]!, accept: 'application/vnd.api+json' },
          };
        },
      },
    ],
  });
}

/**
 * Starts a reference server of bench/ (fixed-json-server.ts, one-query-server.ts) with these arguments; its URL and
 * how to stop it.
 */
async function startReference(
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk) => {
      text += chunk;
      const ready = /ready (\d+)/.exec(text);
      if (ready) resolve(Number(ready[1]));
    });
    child.once('exit', () => reject(new Error(`${script} exited before it was ready`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Warms a reference server up, measures it, and stops it. */
async function measureReference(
  starting: ReturnType<typeof startReference>,
  paths: readonly string[],
  authorizations: readonly string[],
  seconds: number,
): Promise<Result> {
  const reference = await starting;
  try {
    await readLoad(reference.url, paths, authorizations, WARM_UP_SECONDS);
    return await readLoad(reference.url, paths, authorizations, seconds);
  } finally {
    await reference.stop();
  }
}

/** A few advances per worker through the API, some lanes at once, so that the reads have history to show. */
async function takeAdvances(baseUrl: string, workers: readonly BenchWorker[], tokens: readonly string[]) {
  let next = 0;
  let refused = 0;
  const total = workers.length * ADVANCES_EACH;
  const lane = async () => {
    for (let i = next++; i < total; i = next++) {
      const index = i % workers.length;
      const response = await fetch(`${baseUrl}/rest/transfers`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens[index]}`,
          'content-type': 'application/vnd.api+json',
          'idempotency-key': randomUUID(),
        },
        body: advanceBody(workers[index]!, 1000),
      });
      await response.arrayBuffer();
      if (response.status !== 200) refused++;
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  if (refused > 0) throw new Error(`${refused} of ${total} advances were refused`);
}

interface ReadRun {
  label: string;
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  ceilingPerSecond: number;
  ceilingP99: number;
  /** bench/one-query-server.ts: node:http, one prepared select by primary key, the same body; both cores. */
  oneQueryPerSecond: number;
  oneQueryP99: number;
  oneQueryNon2xx: number;
  share: CpuShare | undefined;
  bytes: number;
}

export interface ReadsOptions {
  workers: number;
  seconds: number;
  /**
   * EWA_BENCH_CPU_PROF=<dir>: after the measured runs, serve the five reads together for `seconds` from a server
   * started with `node --cpu-prof` (its profile kept in that directory), and summarize where its time went.
   */
  profileDir?: string | undefined;
}

/**
 * The five reads with a user token on PostgreSQL, 50 connections each, each beside the ceiling measured right
 * after it in the same run: a plain node:http server answering the same bytes as a fixed body.
 */
export async function readsScenario(options: ReadsOptions): Promise<void> {
  const workersPerServer = benchWorkers();
  const bench = await openBenchSchema(5);
  const scratch = mkdtempSync(join(tmpdir(), 'ewa-bench-reads-'));
  const runs: ReadRun[] = [];
  let peaks: number[] = [];
  let profile: ProfileSummary | undefined;
  let books = '';
  let selectOnly: TpcbResult | undefined;
  try {
    const { workers, tokens } = await seedWorkersWithTokens(bench, options.workers, {
      amountMinor: SHIFT_MINOR,
      label: 'reads',
    });
    const authorizations = tokens.map((token) => `Bearer ${token}`);
    const peopleFile = join(scratch, 'people.json');
    writeFileSync(
      peopleFile,
      JSON.stringify(
        Object.fromEntries(authorizations.map((header, index) => [header, workers[index]!.personId])),
      ),
    );
    const session = `${sessionNameOf(bench.schema)}-api`;
    const databaseUrl = new URL(bench.env.DATABASE_URL!);
    databaseUrl.searchParams.set('application_name', session);
    const serverEnv = {
      ...bench.env,
      DATABASE_URL: databaseUrl.toString(),
      EWA_DB_POOL_SIZE: String(POOL_SIZE),
      EWA_SCHEDULER: 'false',
      EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0',
    };
    const server = await startServer(serverEnv, { workers: workersPerServer });
    try {
      await takeAdvances(server.baseUrl, workers, tokens);
      // A process verifies a token's signature on its first use only: a user's reads come with a token in use.
      await touchEachProcess(server.baseUrl, authorizations, workersPerServer);
      await analyzeMoneyTables(bench.database.db);
      for (const read of READS) {
        const paths = workers.map(read.path);
        const sample = await fetch(`${server.baseUrl}${paths[0]}`, {
          headers: { authorization: authorizations[0]!, accept: 'application/vnd.api+json' },
        });
        const body = Buffer.from(await sample.arrayBuffer());
        if (sample.status !== 200) throw new Error(`${read.label}: ${sample.status} ${body}`);
        const bodyFile = join(scratch, 'body.json');
        writeFileSync(bodyFile, body);
        await readLoad(server.baseUrl, paths, authorizations, WARM_UP_SECONDS);
        const meter = startCpuShare(processTree(server.child.pid ?? -1), session);
        const result = await readLoad(server.baseUrl, paths, authorizations, options.seconds);
        const share = await meter.stop();
        const ceilingResult = await measureReference(
          startReference('fixed-json-server.ts', [bodyFile]),
          paths,
          authorizations,
          options.seconds,
        );
        const oneQueryResult = await measureReference(
          startReference(
            'one-query-server.ts',
            [bodyFile, peopleFile, String(workersPerServer), String(POOL_SIZE)],
            { DATABASE_URL: serverEnv.DATABASE_URL, EWA_DB_SCHEMA: bench.schema },
          ),
          paths,
          authorizations,
          options.seconds,
        );
        runs.push({
          label: read.label,
          perSecond: Math.round(result.requests.average),
          p50: result.latency.p50,
          p99: result.latency.p99,
          non2xx: result.non2xx,
          errors: result.errors,
          ceilingPerSecond: Math.round(ceilingResult.requests.average),
          ceilingP99: ceilingResult.latency.p99,
          oneQueryPerSecond: Math.round(oneQueryResult.requests.average),
          oneQueryP99: oneQueryResult.latency.p99,
          oneQueryNon2xx: oneQueryResult.non2xx + oneQueryResult.errors,
          share,
          bytes: body.length,
        });
        console.log(runs.at(-1));
      }
      peaks = peakRssMb(server.child.pid ?? -1);
    } finally {
      await server.stop();
    }
    if (options.profileDir) {
      profile = await profileReads(serverEnv, options.profileDir, workers, authorizations, options.seconds);
    }
    // The database's own read ceiling on the same PostgreSQL: one select by primary key a transaction.
    selectOnly = await pgbenchTpcb({
      scale: 10,
      clients: CONNECTIONS,
      threads: 2,
      seconds: 10,
      selectOnly: true,
    });
    const violations = await checkLedgerInvariants(bench.database.db);
    books =
      violations.length === 0
        ? 'The books were checked afterwards: every invariant holds (the kept balances equal their entries).'
        : `THE BOOKS DO NOT HOLD afterwards: ${violations.map((v) => v.rule).join('; ')}.`;
  } finally {
    await bench.drop();
    rmSync(scratch, { recursive: true, force: true });
  }
  const percent = (part: number, whole: number) => `${Math.round((part / whole) * 100)} %`;
  const body = [
    `## Reads with a user token (PostgreSQL, ${CONNECTIONS} connections, ${options.seconds} s after a ${WARM_UP_SECONDS} s warm-up, autocannon)`,
    '',
    `Each read is measured against \`ewa serve\` (${workersPerServer === 1 ? 'one API process' : `--workers ${workersPerServer}`},`,
    `EWA_BENCH_WORKERS), then its ceiling right after it in the same run: a plain \`node:http\` server answering`,
    "the same document as a fixed body. Each request is another worker's (their token; for the account, their",
    `earnings balance). ${options.workers.toLocaleString('en-US')} workers, one shift and ${ADVANCES_EACH} advances each.`,
    'Goal (issue 22): ≥ 30 % of the ceiling with p99 < 25 ms, using both cores.',
    '',
    'A second reference follows the ceiling: a read that asks the database once and does nothing else. bench/one-query-server.ts',
    `is \`node:http\` and node-postgres alone, ${workersPerServer === 1 ? 'one process' : `${workersPerServer} processes (node:cluster)`} with ${POOL_SIZE} connections each as the server has;`,
    'each request finds its worker by the Authorization header in a table made before the run, makes one prepared',
    'select by primary key, and answers the same fixed body. No token check, no framework, no JSON built.',
    '',
    '| read | requests/s | p50 | p99 | non-2xx / errors | ceiling requests/s (p99) | share of the ceiling | one query requests/s (p99) | share of one query | bytes | CPU: server / PostgreSQL / autocannon / other / steal / idle |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...runs.map(
      (run) =>
        `| ${run.label} | ${run.perSecond} | ${run.p50} ms | ${run.p99} ms | ${run.non2xx} / ${run.errors} | ${run.ceilingPerSecond} (${run.ceilingP99} ms) | ${percent(run.perSecond, run.ceilingPerSecond)} | ${run.oneQueryPerSecond} (${run.oneQueryP99} ms)${run.oneQueryNon2xx > 0 ? ` ${run.oneQueryNon2xx} failed` : ''} | ${percent(run.perSecond, run.oneQueryPerSecond)} | ${run.bytes} | ${formatShare(run.share)} |`,
    ),
    '',
    `The one-query reference answered ${runs.map((run) => percent(run.oneQueryPerSecond, run.ceilingPerSecond)).join(', ')} of the ceiling (the reads in the order above): what a Node server that makes one round trip a read, and does nothing else, reached here, with it, PostgreSQL and autocannon sharing the machine's two cores.`,
    '',
    'The CPU column is shares of the whole machine while each read was measured; "other" is what other programs took',
    'meanwhile: figures from different runs do not compare, ratios within a run do.',
    '',
    `pgbench's select-only script on the same PostgreSQL (${CONNECTIONS} clients, prepared, 10 s): ${Math.round(selectOnly?.tps ?? 0)} tps, one select by primary key a transaction; each read above makes one round trip, so that is the ceiling the database sets: ${runs.map((run) => `${run.label.replace('GET ', '')} ${percent(run.perSecond, selectOnly?.tps ?? Number.NaN)}`).join(', ')}.`,
    '',
    `Peak resident set of the server's process${peaks.length > 1 ? 'es' : ''} over the whole run (VmHWM): ${peaks.map((mb) => `${mb} MB`).join(', ')} (goal ≤ 200 MB each).`,
    '',
    books,
    '',
    ...WHAT_THE_PROFILE_CHANGED,
    ...(profile ? ['', ...profileLines(profile)] : []),
  ].join('\n');
  writeSection('reads', body);
  console.log(body);
}

/** The five reads together, one after the other per connection, from a server under `node --cpu-prof`. */
async function profileReads(
  env: Record<string, string>,
  dir: string,
  workers: readonly BenchWorker[],
  authorizations: readonly string[],
  seconds: number,
): Promise<ProfileSummary> {
  const before = new Set(existsSync(dir) ? readdirSync(dir) : []);
  const server = await startServer(env, { workers: benchWorkers(), cpuProfileDir: dir });
  try {
    await touchEachProcess(server.baseUrl, authorizations, benchWorkers());
    const paths = workers.flatMap((worker) => READS.map((read) => read.path(worker)));
    const mixed = paths.map((_, index) => authorizations[Math.floor(index / READS.length)]!);
    await readLoad(server.baseUrl, paths, mixed, WARM_UP_SECONDS);
    await readLoad(server.baseUrl, paths, mixed, seconds);
  } finally {
    await server.stop();
  }
  return summarizeProfiles(dir, { pick: (name) => !before.has(name), seconds });
}

/**
 * Sends each authorization once to each of the server's `processes`: one request at a time, each on a connection of
 * its own, which node:cluster hands to the workers in turn, so `processes` requests in a row reach them all.
 */
async function touchEachProcess(
  baseUrl: string,
  authorizations: readonly string[],
  processes: number,
): Promise<void> {
  for (const authorization of authorizations) {
    for (let turn = 0; turn < processes; turn++) {
      const status = await new Promise<number>((resolve, reject) => {
        const request = get(
          `${baseUrl}/rest/jobs`,
          { agent: false, headers: { authorization } },
          (response) => {
            response.resume();
            response.once('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.once('error', reject);
      });
      if (status !== 200) throw new Error(`GET /rest/jobs answered ${status} while warming the tokens`);
    }
  }
}

/** What the first profile of these reads showed, and what was changed because of it (issue 22). */
const WHAT_THE_PROFILE_CHANGED = [
  "What the profile changed. The same harness on the code before (commit 7ac699e, profiled over the server's whole",
  'run, on a busier host: the ceiling at 7,700–19,100/s) put the reads at 4–10 % of their ceilings, with 8.5 % of the',
  "server's CPU in Kysely building and compiling queries, pino's redaction running over each request's child",
  'logger, and three round trips in turn for an account (the account; its balance, summed over every ledger entry',
  'it ever had; the fee schedule), two for transfers (the transfers, then their funding sources). Since: the',
  'balance is kept on its ledger account (migration 0020) and an account is read in one statement with it and',
  "the fee schedule; transfers come with their funding sources; the statements of a user's common reads are",
  'built and compiled once (src/db/compiled-once.ts) and prepared once per connection; the request logger is made',
  'on its first line. A later profile (2026-11-28) put 0.8 % in making that logger (now one object, not ten',
  "closures) and a seventh of PostgreSQL's CPU for an account in building its fee schedule as JSON (now joined as",
  'columns). What is left is mostly the socket writes (writev: the statements; writeUtf8String: the answers; one',
  "of each a request), which the ceiling pays too, node-postgres' parsing, Fastify, helmet's headers, and the",
  'garbage collector; using the second core is `--workers` (EWA_BENCH_WORKERS=2). That profile also put 4.9 % in',
  "verifying tokens' ECDSA signatures (node:crypto): its warm-up had sent each token to one of the two workers, so",
  'the other verified it in the profiled seconds, once a token; a user reads with a token in use. Since 2026-11-29',
  'each token goes to every process (one connection each, which node:cluster hands round) before the reads and',
  'before the profile.',
];

function profileLines(profile: ProfileSummary): string[] {
  return [
    "Where the server's CPU went while it served the five reads together (a server of its own under",
    '`node --cpu-prof`, after the measured runs; self time over the measured seconds, after its warm-up; idle left',
    'out):',
    '',
    '| area | share |',
    '|---|---|',
    ...profile.areas.map((row) => `| ${row.area} | ${row.percent} % |`),
    '',
    '| function | share |',
    '|---|---|',
    ...profile.functions.map((row) => `| \`${row.name}\` | ${row.percent} % |`),
  ];
}
