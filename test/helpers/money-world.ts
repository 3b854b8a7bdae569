import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { type Db, openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { SystemLedger } from '../../src/ledger/ledger-accounts.ts';
import { EarningsRecorder } from '../../src/money/earnings/earnings-recorder.ts';
import { capture } from './cli.ts';
import { SHARED_PUBLIC_URLS, startApiProcess } from './ew-processes.ts';
import { bankAccountBody } from './factories.ts';
import { createTestDatabaseTarget } from './test-database.ts';

/**
 * One PostgreSQL schema of a test, seen from the test process: a database handle with the money services on it
 * (to set data up and to check the books), and the environment that points `ewa` processes at the same schema.
 */
export interface MoneyWorld {
  db: Db;
  kind: 'postgres';
  ledger: SystemLedger;
  earnings: EarningsRecorder;
  /** DATABASE_URL, EWA_DB_SCHEMA and the shared public URLs: what every process of this test is given. */
  env: Record<string, string>;
  /** Work to do when the test ends, before the database closes and the schema is dropped (last added, first run). */
  onCleanup(work: () => Promise<unknown>): void;
}

/** A migrated schema of its own on the PostgreSQL of DATABASE_URL; closed and dropped when the test ends. */
export async function openMoneyWorld(t: TestContext): Promise<MoneyWorld> {
  const target = await createTestDatabaseTarget();
  if (target.config.kind !== 'postgres') throw new Error('a money world lives on PostgreSQL (DATABASE_URL)');
  const cleanups: (() => Promise<unknown>)[] = [];
  // One hook, in a fixed order: processes go first, so that nothing holds the schema when it is dropped.
  t.after(async () => {
    for (const work of cleanups.reverse()) await work().catch(() => {});
    await target.drop();
  });
  const database = await openDatabase({ ...target.config, poolSize: 10 });
  cleanups.unshift(() => database.close());
  await migrate(database.db);
  const ledger = new SystemLedger(database.db);
  return {
    db: database.db,
    kind: 'postgres',
    ledger,
    earnings: new EarningsRecorder(database.db, ledger),
    env: { ...target.env, EWA_DB_POOL_SIZE: '10', ...SHARED_PUBLIC_URLS },
    onCleanup: (work) => cleanups.push(work),
  };
}

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const run = capture(env);
  const code = await runCli(args, run.context);
  if (code !== 0) throw new Error(`ewa ${args.join(' ')} exited ${code}: ${run.stderr()}`);
  return run.stdout().trim();
}

/** A confidential client with these scopes, made by `ewa clients create`; its id and secret. */
export async function createClientByCli(
  env: Record<string, string>,
  scopes: string,
): Promise<{ client_id: string; client_secret: string }> {
  return JSON.parse(
    await cli(
      [
        'clients',
        'create',
        '--name',
        'Money e2e',
        '--confidential',
        '--scopes',
        scopes,
        '--redirect-uri',
        'https://partner.example/callback',
        '--json',
      ],
      env,
    ),
  );
}

/** A user token for the person, minted by `ewa tokens issue` for a client made by `ewa clients create`. */
export async function issueTokenByCli(world: MoneyWorld, personId: string): Promise<string> {
  const scopes = 'user:read user:read_write';
  const client = await createClientByCli(world.env, scopes);
  return cli(
    ['tokens', 'issue', '--person', personId, '--client', client.client_id, '--scopes', scopes],
    world.env,
  );
}

export interface HttpAnswer {
  status: number;
  /** The body exactly as sent, to compare replays byte for byte. */
  text: string;
  json: { data?: { id: string; attributes: Record<string, unknown> }; errors?: { code: string }[] };
}

/** One request with a bearer token and the JSON:API media type, over real HTTP. */
export async function httpJson(
  url: string,
  token: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HttpAnswer> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    ...(init.signal ? { signal: init.signal } : {}),
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/vnd.api+json',
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let json: HttpAnswer['json'] = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {} // not JSON: the status and text say what it was
  return { status: response.status, text, json };
}

export interface FundedWorker {
  organizationId: string;
  personId: string;
  jobId: string;
  balanceAccountId: string;
  depositoryId: string;
  token: string;
}

/**
 * The rows a roster import makes for a worker: an employer with its policy, the person (New York), an ACTIVATED
 * hourly job at 20.00 and its earnings balance, straight into the database.
 */
export async function createWorkerRows(world: MoneyWorld, policy: Record<string, unknown> = {}) {
  const { db } = world;
  const organizationId = randomUUID();
  const personId = randomUUID();
  const balanceAccountId = randomUUID();
  const jobId = randomUUID();
  const primaryIdentifier = `P-${jobId.slice(0, 8)}`;
  await db.insertInto('organizations').values({ id: organizationId, name: 'Money e2e employer' }).execute();
  await db
    .insertInto('organization_policies')
    .values({ organization_id: organizationId, ...policy })
    .execute();
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
      id: balanceAccountId,
      person_id: personId,
      account_type: 'EARNINGS_BALANCE',
      subtype: 'ODP',
      name: 'Earnings balance',
      details: '{}',
    })
    .execute();
  await db
    .insertInto('jobs')
    .values({
      id: jobId,
      person_id: personId,
      organization_id: organizationId,
      external_primary_identifier: primaryIdentifier,
      external_employee_id: `E-${jobId.slice(0, 6)}`,
      first_name: 'Robin',
      last_name: 'Lee',
      activation_status: 'ACTIVATED',
      wage_rate_minor: 2000,
      wage_frequency: 'HOURLY',
      earnings_balance_account_id: balanceAccountId,
    })
    .execute();
  return { organizationId, personId, jobId, balanceAccountId, primaryIdentifier };
}

/**
 * A worker who may take advances, made as production makes one: the employer, person, job and earnings balance
 * in the database (the roster import's rows), the bank account and the job's default through the REST API of a
 * running process, and the shifts through the earnings recorder.
 */
export async function createFundedWorker(
  world: MoneyWorld,
  apiUrl: string,
  options: { policy?: Record<string, unknown>; grossMinor: number; now?: Date },
): Promise<FundedWorker> {
  const { organizationId, personId, balanceAccountId, jobId } = await createWorkerRows(world, options.policy);
  const token = await issueTokenByCli(world, personId);
  const created = await httpJson(`${apiUrl}/rest/accounts`, token, {
    method: 'POST',
    body: bankAccountBody(
      personId,
      { name: 'Checking' },
      { account_number: `0001${personId.replace(/\D/g, '').slice(0, 8).padEnd(8, '7')}` },
    ),
  });
  if (created.status !== 200) throw new Error(`bank account: ${created.status} ${created.text}`);
  const depositoryId = created.json.data!.id;
  const patched = await httpJson(`${apiUrl}/rest/jobs/${jobId}`, token, {
    method: 'PATCH',
    body: {
      data: {
        type: 'jobs',
        id: jobId,
        relationships: {
          direct_deposit_default_depository: { data: { type: 'accounts', id: depositoryId } },
        },
      },
    },
  });
  if (patched.status !== 200) throw new Error(`job default: ${patched.status} ${patched.text}`);
  const now = options.now ?? new Date();
  const recorded = await world.earnings.record(
    [
      {
        jobId,
        externalId: `shift-${randomUUID()}`,
        workedOn: now.toISOString().slice(0, 10),
        hoursHundredths: null,
        amountMinor: options.grossMinor,
        source: 'SHIFT',
      },
    ],
    now,
    { backdated: 'RECORD' },
  );
  if (recorded.outcomes[0] !== 'RECORDED') throw new Error(`earnings: ${recorded.outcomes[0]}`);
  return { organizationId, personId, jobId, balanceAccountId, depositoryId, token };
}

/** The advance request of the reference API: from the earnings balance to the bank account, next business day. */
export function advanceRequest(worker: FundedWorker, amountMinor: number, id?: string) {
  return {
    data: {
      type: 'transfers',
      ...(id ? { id } : {}),
      attributes: { amount: amountMinor, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY' },
      relationships: {
        origin: { data: { type: 'accounts', id: worker.balanceAccountId } },
        destination: { data: { type: 'accounts', id: worker.depositoryId } },
      },
    },
  };
}

/**
 * POST /rest/transfers to one process. No answer — the connection cut by a killed process, or the client giving
 * up through `signal` — is an answer of status 0.
 */
export async function postAdvance(
  apiUrl: string,
  worker: FundedWorker,
  body: unknown,
  key: string,
  signal?: AbortSignal,
): Promise<HttpAnswer> {
  try {
    return await httpJson(`${apiUrl}/rest/transfers`, worker.token, {
      method: 'POST',
      body,
      headers: { 'idempotency-key': key },
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    return { status: 0, text: String((error as Error).cause ?? error), json: {} };
  }
}

/** The earnings balance as the REST API shows it. */
export async function availableMinor(apiUrl: string, worker: FundedWorker): Promise<number> {
  const answer = await httpJson(`${apiUrl}/rest/accounts/${worker.balanceAccountId}`, worker.token);
  if (answer.status !== 200) throw new Error(`balance: ${answer.status} ${answer.text}`);
  return (answer.json.data!.attributes.balances as { available: number }).available;
}

/** `count` API processes on the world's database, started one after the other, each stopped when the test ends. */
export async function startApiProcesses(
  world: MoneyWorld,
  env: Record<string, string>,
  count: number,
): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const server = await startApiProcess(env);
    world.onCleanup(() => server.kill());
    urls.push(server.apiUrl);
  }
  return urls;
}
