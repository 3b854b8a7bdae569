import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { writeSection } from './report.ts';
import { startServer } from './server-process.ts';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');
const POSTGRES_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Card tokens per second: one sandbox test card, the per-address limit lifted so that only the work counts. Each
 * body gets a server of its own, so that neither run spends the other's per-address allowance, and the answers are
 * counted by status: a 429 would be the limit, not the work.
 */
export async function cardTokens(): Promise<void> {
  const card = {
    first_name: 'Robin',
    last_name: 'Lee',
    card_number: '4111111111111111',
    expiration_month: '02',
    expiration_year: String(new Date().getUTCFullYear() + 3),
    cvv: '123',
    address_line_one: '1 Main St',
    address_city: 'Albany',
    address_state: 'NY',
    address_zip_code: '12207',
    address_country: 'US',
  };
  const rows: string[] = [];
  for (const [label, body] of [
    ['valid card', card],
    ['invalid card (Luhn)', { ...card, card_number: '4111111111111112' }],
  ] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
    const server = await startServer({ EWA_DATA_DIR: dataDir, EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '100000' });
    try {
      const options = {
        url: `${server.paymentsUrl}/v2/cards/generic`,
        method: 'POST' as const,
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        connections: 10,
      };
      await autocannon({ ...options, duration: 2 }); // warm-up
      const result = await autocannon({ ...options, duration: 10 });
      const byStatus = Object.entries(result.statusCodeStats ?? {})
        .map(([status, stats]) => `${status}: ${stats.count}`)
        .join(', ');
      rows.push(
        `| ${label} | ${Math.round(result.requests.average)} | ${result.latency.p50} ms | ${result.latency.p99} ms | ${byStatus} |`,
      );
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const body = [
    '## POST /v2/cards/generic (10 connections, 10 s after a 2 s warm-up, autocannon)',
    '',
    '| body | requests/s | latency p50 | latency p99 | answers by status |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Each valid request validates the card and encrypts a token (ECDH-ES+A256KW on P-256, A256GCM); no database.',
    'Each body runs on a server of its own, with EWA_CARD_TOKENS_PER_IP_PER_MINUTE=100000.',
  ].join('\n');
  writeSection('card-tokens', body);
  console.log(body);
}

/** A roster of `lines` workers, one job each, as an employer would send it. */
function rosterCsv(lines: number): string {
  const rows = [
    'primary_identifier,employee_id,first_name,last_name,email,state_of_residence,wage_amount,wage_frequency',
  ];
  for (let i = 1; i <= lines; i++) {
    rows.push(
      `J-${i},E-${i},Worker,Number ${i},worker.${i}@bench.example,NY,${(15 + (i % 20)).toFixed(2)},HOURLY`,
    );
  }
  return `${rows.join('\n')}\n`;
}

function ewa(env: Record<string, string>, ...args: string[]): string {
  return String(
    execFileSync(process.execPath, [MAIN, ...args], {
      env: { PATH: process.env.PATH ?? '', EWA_SEED_DEMO: 'false', EWA_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
}

/** `ewa people import` of a new roster, then of the same file again, timed as the command reports it. */
function importTwice(env: Record<string, string>, file: string): { first: number; again: number } {
  const organization = JSON.parse(ewa(env, 'orgs', 'create', '--name', 'Bench Employer', '--json')) as {
    id: string;
  };
  const run = () =>
    (
      JSON.parse(ewa(env, 'people', 'import', file, '--organization', organization.id, '--json')) as {
        seconds: number;
      }
    ).seconds;
  return { first: run(), again: run() };
}

export async function roster(lines: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-bench-'));
  const file = join(dir, 'roster.csv');
  writeFileSync(file, rosterCsv(lines));
  const rows: string[] = [];
  try {
    const embedded = importTwice({ EWA_DATA_DIR: join(dir, 'data') }, file);
    rows.push(`| embedded (PGlite) | ${embedded.first} s | ${embedded.again} s |`);
    const schema = `bench_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    try {
      const onPostgres = importTwice({ DATABASE_URL: POSTGRES_URL, EWA_DB_SCHEMA: schema }, file);
      rows.push(`| PostgreSQL | ${onPostgres.first} s | ${onPostgres.again} s |`);
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const body = [
    `## \`ewa people import\` of ${lines.toLocaleString('en-US')} workers`,
    '',
    '| database | all new | the same file again |',
    '|---|---|---|',
    ...rows,
    '',
    'Times are those the command reports (reading, checking and writing; not the start of the process).',
  ].join('\n');
  writeSection('roster', body);
  console.log(body);
}
