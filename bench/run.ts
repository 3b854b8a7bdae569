import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEMO } from '../src/seed/demo.ts';
import { writeSection } from './report.ts';
import { startServer } from './server-process.ts';

/**
 * Benchmarks of the foundation. `npm run bench` runs them all; `npm run bench -- startup health` runs some;
 * `--people N` sizes the seed scenario (default 100,000). Results go to BENCHMARKS.md.
 */
const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { people: { type: 'string', default: '100000' } },
  allowPositionals: true,
});
const scenarios = positionals.length > 0 ? positionals : ['startup', 'health', 'seed'];
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;
const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

async function startup(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  try {
    const first = await startServer({ EWA_DATA_DIR: dataDir });
    await first.stop();
    const later: number[] = [];
    for (let run = 0; run < 3; run++) {
      const server = await startServer({ EWA_DATA_DIR: dataDir });
      later.push(server.readyMs);
      await server.stop();
    }
    const body = [
      '## Start-up (embedded database)',
      '',
      'Time from `ewa serve` to the first answer from `GET /rest/health` (a 401: the API is up and asks for a token).',
      '',
      '| start | time | goal |',
      '|---|---|---|',
      `| first (creates the database, migrates, seeds the demo data) | ${(first.readyMs / 1000).toFixed(1)} s | ≤ 15 s |`,
      `| later (median of 3) | ${(median(later) / 1000).toFixed(1)} s | ≤ 3 s |`,
    ].join('\n');
    writeSection('startup', body);
    console.log(body);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
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

for (const scenario of scenarios) {
  if (scenario === 'startup') await startup();
  else if (scenario === 'health') await health();
  else if (scenario === 'seed') seed();
  else {
    console.error(`unknown scenario "${scenario}"; the scenarios are startup, health, seed`);
    process.exit(2);
  }
}
