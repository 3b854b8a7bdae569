import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { DEMO } from '../src/seed/demo.ts';
import { bearerCostInProcess } from './bearer-inprocess.ts';
import { transfersScenario } from './money.ts';
import { payrollScenario } from './money-payroll.ts';
import { processPeakRssMb, processTree, watchPeakRss } from './peak-rss.ts';
import { readsScenario } from './reads.ts';
import { appendNote, withSteal, writeSection } from './report.ts';
import { cardTokens, roster } from './resources.ts';
import { startServer, takeServerPeaks } from './server-process.ts';
import { webhooksScenario } from './webhooks.ts';

/**
 * Benchmarks of the foundation. `npm run bench` runs them all; `npm run bench -- startup health` runs some;
 * `--people N` sizes the seed and payroll scenarios and `--lines N` the roster import (default 100,000 each);
 * `--workers N` (default 2,000), `--processes 1,2,4` and `--seconds 15` shape the transfers scenario (and `--workers`
 * the reads; EWA_BENCH_WORKERS=N runs the reads' server with `--workers N`, EWA_BENCH_CPU_PROF=<dir> profiles it).
 * Results go to BENCHMARKS.md.
 */
const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: {
    people: { type: 'string', default: '100000' },
    lines: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '2000' },
    processes: { type: 'string', default: '1,2,4' },
    seconds: { type: 'string', default: '15' },
  },
  allowPositionals: true,
});
const scenarios =
  positionals.length > 0
    ? positionals
    : [
        'startup',
        'health',
        'tokens',
        'bearer',
        'seed',
        'card-tokens',
        'roster',
        'transfers',
        'payroll',
        'webhooks',
        'reads',
      ];
const POSTGRES_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

async function startup(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  // A template directory of this run's own: a start without the shipped template finds none there, as on a machine
  // that never ran the server.
  const templateDir = join(scratch, 'templates');
  const start = async (dataDir: string, shippedTemplate = true) => {
    const initdb = watchPeakRss(/pglite-initdb-child/);
    const server = await startServer({
      EWA_DATA_DIR: join(scratch, dataDir),
      EWA_EMBEDDED_TEMPLATE_DIR: templateDir,
      EWA_EMBEDDED_SHIPPED_TEMPLATE: String(shippedTemplate),
    });
    const initdbPeaksMb = initdb.stop();
    // The serving process itself, and the process of its own that holds the embedded database.
    const pid = server.child.pid ?? -1;
    const peakMb = processPeakRssMb(pid) ?? 0;
    const [databasePeakMb] = processTree(pid)
      .slice(1)
      .map(processPeakRssMb)
      .filter((mb) => mb !== undefined);
    await server.stop();
    const initdbPeak = initdbPeaksMb.length > 0 ? `${initdbPeaksMb.join(', ')} MB` : '–';
    const databasePeak = databasePeakMb === undefined ? '–' : `${databasePeakMb} MB`;
    return {
      ms: server.readyMs,
      seconds: (server.readyMs / 1000).toFixed(1),
      peakMb,
      databasePeak,
      initdbPeak,
    };
  };
  try {
    const first = await start('first');
    const unshipped = await start('second', false);
    const later: Awaited<ReturnType<typeof start>>[] = [];
    for (let run = 0; run < 3; run++) later.push(await start('first'));
    const laterMedian = [...later].sort((a, b) => a.ms - b.ms)[1]!;
    const body = [
      '## Start-up (embedded database)',
      '',
      'Time from `ewa serve` to the first answer from `GET /rest/health` (a 401: the API is up and asks for a token),',
      'and the peak resident set (VmHWM) by then of the serving process and of the process of its own that holds the',
      'embedded database; initdb, which runs only without the shipped template, runs in a process of its own too, which',
      'ends once it has made the cluster (its peak sampled every 50 ms).',
      '',
      "| start | time | peak RSS of the server | peak RSS of the database's process | peak RSS of initdb's process | goal |",
      '|---|---|---|---|---|---|',
      `| first on a machine (the database's files from the template shipped in \`share/\`; migrates, seeds the demo data) | ${first.seconds} s | ${first.peakMb} MB | ${first.databasePeak} | ${first.initdbPeak} | ≤ 15 s |`,
      `| first on a machine without the shipped template (\`EWA_EMBEDDED_SHIPPED_TEMPLATE=false\`: initdb makes the cluster and keeps it as this machine's template; migrates, seeds the demo data) | ${unshipped.seconds} s | ${unshipped.peakMb} MB | ${unshipped.databasePeak} | ${unshipped.initdbPeak} | ≤ 15 s |`,
      `| later (median of 3) | ${laterMedian.seconds} s | ${laterMedian.peakMb} MB | ${laterMedian.databasePeak} | ${laterMedian.initdbPeak} | ≤ 3 s |`,
    ].join('\n');
    writeSection('startup', body);
    console.log(body);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function health(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  const server = await startServer({ EWA_DATA_DIR: dataDir });
  try {
    const token = await demoClientToken(server.authUrl, 'health:read');
    const result = await autocannon({
      url: `${server.baseUrl}/rest/health`,
      connections: 50,
      duration: 10,
      headers: { authorization: `Bearer ${token}` },
    });
    const body = [
      '## GET /rest/health (embedded database, 50 connections, 10 s, autocannon)',
      '',
      '| requests/s (mean) | latency p50 | latency p99 | non-2xx | errors |',
      '|---|---|---|---|---|',
      `| ${Math.round(result.requests.average)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${result.non2xx} | ${result.errors} |`,
      '',
      'Each request runs `select 1` on the database, so this is the floor of a database-backed request.',
    ].join('\n');
    writeSection('health', body);
    console.log(body);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A client_credentials token of the sandbox's demo client. */
export async function demoClientToken(authUrl: string, scope: string): Promise<string> {
  const response = await fetch(`${authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope,
      client_id: DEMO.clients.confidential.clientId,
      client_secret: DEMO.clients.confidential.secret,
    }),
  });
  if (response.status !== 200)
    throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

function seed(): void {
  const people = Number(values.people);
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  try {
    const output = execFileSync(process.execPath, [MAIN, 'seed', '--people', String(people), '--json'], {
      env: { PATH: process.env.PATH ?? '', EWA_DATA_DIR: dataDir, EWA_SEED_DEMO: 'false' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const result = JSON.parse(String(output)) as {
      people: number;
      paychecks: number;
      earnings: number;
      seconds: number;
    };
    const body = [
      '## `ewa seed --people` (embedded database)',
      '',
      '| workers | paychecks | shifts | time | goal |',
      '|---|---|---|---|---|',
      `| ${result.people} | ${result.paychecks} | ${result.earnings} | ${result.seconds} s | 100,000 workers < 120 s |`,
      '',
      'Shifts are one per working day of the open pay period so far, so their number depends on the date.',
    ].join('\n');
    writeSection('seed', body);
    console.log(body);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Starts a benchmark helper script and waits for its "ready …" line; returns the numbers on it. */
async function startHelper(
  script: string,
  args: string[] = [],
): Promise<{ ports: number[]; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk) => {
      text += chunk;
      const ready = /ready ([\d ]+)/.exec(text);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', () => reject(new Error(`${script} exited before it was ready`)));
  });
  return {
    ports: line.trim().split(' ').map(Number),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const tokenBody = (clientId: string, secret: string) =>
  new URLSearchParams({
    grant_type: 'client_credentials',
    scope: 'health:read',
    client_id: clientId,
    client_secret: secret,
  }).toString();

async function tokenRate(
  url: string,
  body: string,
): Promise<{ perSecond: number; p99: number; non2xx: number }> {
  const options = {
    url,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    connections: 50,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: JIT, pools, caches
  const result = await autocannon({ ...options, duration: 10 });
  return { perSecond: Math.round(result.requests.average), p99: result.latency.p99, non2xx: result.non2xx };
}

async function tokens(): Promise<void> {
  const body = await tokenRates();
  writeSection('tokens', body);
  console.log(body);
}

async function tokenRates(): Promise<string> {
  const { confidential } = DEMO.clients;
  const measured: { server: string; rate: Awaited<ReturnType<typeof tokenRate>> }[] = [];
  const schema = `bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  try {
    const onPostgres = await startServer({
      DATABASE_URL: POSTGRES_URL,
      EWA_DB_SCHEMA: schema,
      EWA_DB_POOL_SIZE: '20',
    });
    try {
      const rate = await tokenRate(
        `${onPostgres.authUrl}/oauth2/token`,
        tokenBody(confidential.clientId, confidential.secret),
      );
      measured.push({ server: 'ours, database adapter on PostgreSQL', rate });
    } finally {
      await onPostgres.stop();
    }
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  const onPGlite = await startServer({ EWA_DATA_DIR: dataDir });
  try {
    const rate = await tokenRate(
      `${onPGlite.authUrl}/oauth2/token`,
      tokenBody(confidential.clientId, confidential.secret),
    );
    measured.push({ server: 'ours, database adapter on the embedded database', rate });
  } finally {
    await onPGlite.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const memory = await startHelper('memory-provider.ts');
  let reference: Awaited<ReturnType<typeof tokenRate>>;
  try {
    reference = await tokenRate(
      `http://127.0.0.1:${memory.ports[0]}/oauth2/token`,
      tokenBody('bench', 'bench-secret'),
    );
  } finally {
    await memory.stop();
  }
  const rows = [...measured, { server: 'oidc-provider alone, its in-memory adapter', rate: reference }].map(
    ({ server, rate }) =>
      `| ${server} | ${rate.perSecond} | ${Math.round((100 * rate.perSecond) / reference.perSecond)} % | ${rate.p99} ms | ${rate.non2xx} |`,
  );
  const body = [
    '## client_credentials tokens per second (50 connections, 10 s after a 2 s warm-up, autocannon)',
    '',
    'One server process each. Ours reads the client from the database (and keeps it two seconds) and signs an ES256 JWT',
    "access token, the plain case without the provider's middleware (src/oauth/client-credentials-tokens.ts); the",
    'reference is oidc-provider alone with its one client in memory. Goal (issue 22): ours on PostgreSQL ≥ 80 % of it.',
    '',
    '| server | tokens/s | share of the reference | latency p99 | non-2xx |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  return body;
}

async function bearer(): Promise<void> {
  const measure = async (args: string[]) => {
    const server = await startHelper('api-server.ts', args);
    try {
      const [apiPort, authPort] = server.ports;
      const token = await demoClientToken(`http://127.0.0.1:${authPort}`, 'health:read');
      const options = {
        url: `http://127.0.0.1:${apiPort}/rest/health`,
        connections: 50,
        headers: { authorization: `Bearer ${token}` },
      };
      await autocannon({ ...options, duration: 2 });
      const result = await autocannon({ ...options, duration: 10 });
      return {
        perSecond: Math.round(result.requests.average),
        p99: result.latency.p99,
        non2xx: result.non2xx,
      };
    } finally {
      await server.stop();
    }
  };
  // Alternate the two, three rounds each, and compare medians: single 10 s runs on two cores vary by ±15 %.
  const offRuns: Awaited<ReturnType<typeof measure>>[] = [];
  const onRuns: Awaited<ReturnType<typeof measure>>[] = [];
  for (let round = 0; round < 3; round++) {
    offRuns.push(await measure(['--no-bearer-check']));
    onRuns.push(await measure([]));
  }
  const byRate = (a: { perSecond: number }, b: { perSecond: number }) => a.perSecond - b.perSecond;
  const off = offRuns.sort(byRate)[1]!;
  const on = onRuns.sort(byRate)[1]!;
  const cost = ((off.perSecond - on.perSecond) / off.perSecond) * 100;
  const inProcess = await bearerCostInProcess();
  const inProcessCost = ((inProcess.off - inProcess.on) / inProcess.off) * 100;
  const body = [
    '## Cost of the bearer check (a /rest GET that does no work, 50 connections, 10 s, autocannon, median of 3)',
    '',
    "The same process and route with the check on and off; the route does nothing else, so this is the check's",
    'largest share of any request. The check verifies a token once and then serves it from memory until it',
    'expires; revocations arrive by a background poll. Goal: the check costs ≤ 10 % of throughput.',
    '',
    '| bearer check | requests/s | latency p99 | non-2xx |',
    '|---|---|---|---|',
    `| off | ${off.perSecond} | ${off.p99} ms | ${off.non2xx} |`,
    `| on | ${on.perSecond} | ${on.p99} ms | ${on.non2xx} |`,
    '',
    `Cost of the check over HTTP: ${cost.toFixed(1)} % of throughput (single runs vary by ±15 % on this shared host).`,
    '',
    'The same comparison inside one process (both apps on one database, served alternately in 20 blocks of',
    '2,000 requests through the real request path, so that outside load falls on both alike):',
    '',
    '| bearer check | requests/s |',
    '|---|---|',
    `| off | ${inProcess.off} |`,
    `| on | ${inProcess.on} |`,
    '',
    `Cost of the check in process: ${inProcessCost.toFixed(1)} % of throughput.`,
  ].join('\n');
  writeSection('bearer', body);
  console.log(body);
}

const SCENARIOS: Record<string, () => Promise<void> | void> = {
  startup,
  health,
  tokens,
  bearer,
  seed,
  'card-tokens': cardTokens,
  roster: () => roster(Number(values.lines)),
  transfers: () =>
    transfersScenario({
      workers: Number(values.workers),
      seconds: Number(values.seconds),
      processes: values.processes.split(',').map(Number),
    }),
  payroll: () =>
    payrollScenario({ workers: Number(values.people), advances: Math.round(Number(values.people) / 10) }),
  webhooks: () => webhooksScenario({ workers: Number(values.workers) }),
  reads: () =>
    readsScenario({
      workers: Number(values.workers),
      seconds: Number(values.seconds),
      profileDir: process.env.EWA_BENCH_CPU_PROF || undefined,
    }),
};
for (const scenario of scenarios) {
  const run = SCENARIOS[scenario];
  if (run) {
    takeServerPeaks();
    const { stealNote } = await withSteal(run);
    if (stealNote) {
      appendNote(scenario, stealNote);
      console.log(stealNote);
    }
    const peaks = takeServerPeaks();
    if (peaks.length > 0) {
      const note = `Peak resident set of each \`ewa serve\` process this scenario started (VmHWM), largest first: ${peaks.map((mb) => `${mb} MB`).join(', ')} (goal ≤ 200 MB each).`;
      appendNote(scenario, note);
      console.log(note);
    }
  } else {
    console.error(`unknown scenario "${scenario}"; the scenarios are ${Object.keys(SCENARIOS).join(', ')}`);
    process.exit(2);
  }
}
