import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { type Config, loadConfig } from '../src/config.ts';
import { type Database, openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { localDateOf } from '../src/domain/calendar.ts';
import type { EarningsRecorder } from '../src/money/earnings/earnings-recorder.ts';
import { createMoneyCore } from '../src/money/money-core.ts';
import { createClient } from '../src/oauth/clients.ts';
import { issueUserToken } from '../src/oauth/issue-token.ts';

export const POSTGRES_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The public URLs every server process of a money benchmark shares: access tokens name the API as audience and the
 * authorization server as issuer, so a token minted here is accepted by each of N processes on their own ports.
 */
const PUBLIC_URLS = { EWA_BASE_URL: 'http://127.0.0.1:1/bench', EWA_AUTH_URL: 'http://127.0.0.1:2/bench' };

/** A migrated schema of its own on the benchmark PostgreSQL, dropped by `drop`. */
export interface MoneyBenchDatabase {
  schema: string;
  database: Database;
  config: Config;
  /** The environment that points `ewa serve` at this schema, with the shared public URLs. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function adminQuery(text: string, url = POSTGRES_URL): Promise<pg.QueryResult> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await admin.query(text);
  } finally {
    await admin.end();
  }
}

export function sessionNameOf(schema: string): string {
  return `ewa-bench-${schema}`;
}

export async function openBenchSchema(
  poolSize: number,
  extraEnv: Record<string, string> = {},
): Promise<MoneyBenchDatabase> {
  const schema = `bench_money_${randomBytes(5).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  // Sessions carry the schema's name, so that PostgreSQL's CPU and session states can be counted for ours alone.
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('application_name', sessionNameOf(schema));
  const env = {
    DATABASE_URL: url.toString(),
    EWA_DB_SCHEMA: schema,
    EWA_DB_POOL_SIZE: String(poolSize),
    EWA_SEED_DEMO: 'false',
    EWA_LOG_LEVEL: 'warn',
    ...PUBLIC_URLS,
    ...extraEnv,
  };
  const config = loadConfig(env);
  const database = await openDatabase(config.database);
  await migrate(database.db);
  return {
    schema,
    database,
    config,
    env,
    async drop() {
      await database.close();
      await adminQuery(`drop schema if exists ${schema} cascade`);
    },
  };
}

/** Fresh statistics for the tables an advance reads, as autovacuum keeps them on a running system. */
export async function analyzeMoneyTables(db: Database['db']): Promise<void> {
  await sql`analyze people, accounts, jobs, organizations, organization_policies, paychecks, transfers,
    funding_sources, ledger_accounts, ledger_postings, ledger_entries, idempotency_keys`.execute(db);
}

/** One employer whose policy lets each worker take many advances a day: only the work of an advance is measured. */
export async function createBenchEmployer(db: Database['db']): Promise<string> {
  const { rows } = await sql<{ id: string }>`insert into organizations (id, name, products)
    values (gen_random_uuid(), 'Bench Employer', array['ODP']) returning id`.execute(db);
  const organizationId = rows[0]!.id;
  await sql`insert into organization_policies (organization_id, daily_transfer_count_max,
      daily_transfer_amount_max_minor)
    values (${organizationId}::uuid, 1000, 1000000000000)`.execute(db);
  return organizationId;
}

export interface BenchWorker {
  personId: string;
  jobId: string;
  balanceAccountId: string;
  depositoryId: string;
}

/**
 * Workers made by the database from generate_series, as the roster import and the account API would leave them:
 * state of residence set, an ACTIVATED job with its earnings balance, and a checking account that is the job's
 * default depository (so direct deposit is SETUP_COMPLETE). Chunks of 10,000, one transaction each.
 */
export async function createBenchWorkers(
  db: Database['db'],
  organizationId: string,
  count: number,
): Promise<BenchWorker[]> {
  const run = randomBytes(4).toString('hex');
  const chunk = 10_000;
  for (let low = 1; low <= count; low += chunk) {
    const high = Math.min(count, low + chunk - 1);
    await withTransaction(db, async (tx) => {
      const series = sql`generate_series(${low}::int, ${high}::int) as g(i)`;
      const id = (kind: string) => sql`md5(${run} || ${`:${kind}:`} || i)::uuid`;
      await sql`insert into people (id, email, first_name, last_name, state_of_residence)
        select ${id('person')}, 'worker' || i || '.' || ${run} || '@bench.example', 'Worker', 'No. ' || i, 'NY'
        from ${series}`.execute(tx);
      await sql`insert into accounts (id, person_id, account_type, subtype, name)
        select ${id('balance')}, ${id('person')}, 'EARNINGS_BALANCE', 'ODP', 'Earnings balance'
        from ${series}`.execute(tx);
      await sql`insert into accounts (id, person_id, account_type, subtype, name, routing_number, details)
        select ${id('checking')}, ${id('person')}, 'DEPOSITORY', 'CHECKING', 'Checking', '110000000',
          jsonb_build_object('account_number_last_four', lpad((i % 10000)::text, 4, '0'))
        from ${series}`.execute(tx);
      await sql`insert into jobs (id, person_id, organization_id, external_primary_identifier, external_employee_id,
          first_name, last_name, wage_rate_minor, wage_frequency, direct_deposit_status,
          direct_deposit_default_depository_id, earnings_balance_account_id)
        select ${id('job')}, ${id('person')}, ${organizationId}::uuid, ${run} || '-' || i, 'E' || i, 'Worker',
          'No. ' || i, 2000, 'HOURLY', 'SETUP_COMPLETE', ${id('checking')}, ${id('balance')}
        from ${series}`.execute(tx);
    });
  }
  const { rows } = await sql<{
    person_id: string;
    job_id: string;
    balance_id: string;
    depository_id: string;
  }>`select person_id, id as job_id, earnings_balance_account_id as balance_id,
      direct_deposit_default_depository_id as depository_id
    from jobs where organization_id = ${organizationId}::uuid order by person_id`.execute(db);
  return rows.map((row) => ({
    personId: row.person_id,
    jobId: row.job_id,
    balanceAccountId: row.balance_id,
    depositoryId: row.depository_id,
  }));
}

/**
 * One shift per worker through the real earnings recorder, `batchSize` workers per call (one transaction each):
 * paychecks, clearing postings and the accessible share credited to each earnings balance. Returns seconds.
 */
export async function recordShifts(
  recorder: EarningsRecorder,
  workers: readonly BenchWorker[],
  options: { amountMinor: number; workedOn: string; now: Date; batchSize?: number; label: string },
): Promise<number> {
  const started = performance.now();
  const batchSize = options.batchSize ?? 1000;
  for (let low = 0; low < workers.length; low += batchSize) {
    const batch = workers.slice(low, low + batchSize);
    const result = await recorder.record(
      batch.map((worker) => ({
        jobId: worker.jobId,
        externalId: `${options.label}-${worker.jobId}`,
        workedOn: options.workedOn,
        hoursHundredths: 800,
        amountMinor: options.amountMinor,
        source: 'SHIFT' as const,
      })),
      options.now,
      { backdated: 'RECORD' },
    );
    const refused = result.outcomes.filter((outcome) => outcome !== 'RECORDED').length;
    if (refused > 0) throw new Error(`${refused} shifts were not recorded (${result.outcomes[0]})`);
  }
  return (performance.now() - started) / 1000;
}

/** A user token (user:read user:read_write) per worker, minted as `ewa tokens issue` does, a few at a time. */
export async function issueWorkerTokens(
  bench: MoneyBenchDatabase,
  workers: readonly BenchWorker[],
  concurrency = 8,
): Promise<string[]> {
  const scopes = ['user:read', 'user:read_write'];
  const { client } = await createClient(
    bench.database.db,
    {
      name: 'Bench Partner',
      isPublic: false,
      redirectUris: ['https://partner.example/callback'],
      scopes: ['openid', ...scopes],
      organizationIds: [],
    },
    { sandbox: true },
  );
  const tokens: string[] = new Array(workers.length);
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < workers.length; index = next++) {
      const response = await issueUserToken(bench.config, bench.database.db, {
        personId: workers[index]!.personId,
        clientId: client.clientId,
        scopes,
      });
      tokens[index] = response.access_token;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return tokens;
}

/**
 * An employer and `count` workers, each with a shift of `shift.amountMinor` worked today (New York) and a user token:
 * the start of the scenarios that load the API with workers' requests.
 */
export async function seedWorkersWithTokens(
  bench: MoneyBenchDatabase,
  count: number,
  shift: { amountMinor: number; label: string },
): Promise<{ workers: BenchWorker[]; tokens: string[] }> {
  const organizationId = await createBenchEmployer(bench.database.db);
  const workers = await createBenchWorkers(bench.database.db, organizationId, count);
  const now = new Date();
  await recordShifts(createMoneyCore(bench.database.db, bench.config).earnings, workers, {
    ...shift,
    workedOn: localDateOf(now, 'America/New_York'),
    now,
  });
  return { workers, tokens: await issueWorkerTokens(bench, workers) };
}
