import { createHash } from 'node:crypto';
import { type Config, loadConfig } from '../config.ts';
import { BankAccountSecrets } from '../crypto/bank-account-secrets.ts';
import { hashPassword } from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { claimRun, finishRun } from '../jobs/scheduled-run.ts';
import type { ScheduledJob } from '../jobs/scheduler.ts';
import type { PayCalendar } from '../money/earnings/pay-periods.ts';
import { salaryPerWorkingDayMinor } from '../money/earnings/paycheck-math.ts';
import { createMoneyCore } from '../money/money-core.ts';
import { insertClient } from '../oauth/clients.ts';
import { createSandboxRail } from '../rails/sandbox-rail.ts';
import { insertDemoBankAccount } from './demo-bank-account.ts';
import {
  DEMO_SHIFT_HOURS,
  type DemoHistoryStep,
  type DemoWorker,
  demoHistorySteps as historySteps,
} from './demo-history.ts';

/** Fixed ids, so that the README's walk-through and scripts can name demo records. */
export const DEMO = {
  organizations: {
    acme: { id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001', name: 'Acme Logistics', products: ['ODP'] },
    northwind: {
      id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0002',
      name: 'Northwind Cafes',
      products: ['ODP'],
    },
  },
  people: [
    {
      id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001',
      first: 'Alex',
      last: 'Rivera',
      email: 'alex.rivera@example.com',
      state: 'NY',
      org: 'acme',
      employeeId: 'A-1001',
      rateMinor: 2400,
      frequency: 'HOURLY',
    },
    {
      id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0002',
      first: 'Bailey',
      last: 'Chen',
      email: 'bailey.chen@example.com',
      state: 'NJ',
      org: 'acme',
      employeeId: 'A-1002',
      rateMinor: 2150,
      frequency: 'HOURLY',
    },
    {
      id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0003',
      first: 'Casey',
      last: 'Morgan',
      email: 'casey.morgan@example.com',
      state: 'CA',
      org: 'acme',
      employeeId: 'A-1003',
      // $350 a working day: one day of salary is enough for $100 available on a period's first day.
      rateMinor: 9_100_000,
      frequency: 'ANNUALLY',
    },
    {
      id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0004',
      first: 'Devon',
      last: 'Patel',
      email: 'devon.patel@example.com',
      state: 'TX',
      org: 'northwind',
      employeeId: 'N-2001',
      rateMinor: 1900,
      frequency: 'HOURLY',
    },
    {
      id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0005',
      first: 'Emery',
      last: 'Brooks',
      email: 'emery.brooks@example.com',
      state: null,
      org: 'northwind',
      employeeId: 'N-2002',
      rateMinor: 2000,
      frequency: 'HOURLY',
    },
  ],
  /** Sandbox credentials, published in docs/integrators/sandbox.md: the sandbox holds no real money or people. */
  password: 'sandbox-password',
  clients: {
    confidential: {
      clientId: 'demo-partner-server',
      secret: 'demo-partner-secret',
      partner: 'demo-partner',
      name: 'Demo Partner (server)',
      redirectUris: ['http://localhost:3000/callback'],
      scopes: [
        'openid',
        'profile',
        'email',
        'offline_access',
        'user:read',
        'user:read_write',
        'client:lookup',
        'client:admin',
        'health:read',
      ],
    },
    public: {
      clientId: 'demo-partner-mobile',
      partner: 'demo-partner',
      name: 'Demo Partner (mobile)',
      redirectUris: ['http://localhost:3000/callback', 'com.example.ewa:/callback'],
      scopes: ['openid', 'profile', 'email', 'offline_access', 'user:read', 'user:read_write'],
    },
  },
} as const;

/** The app_settings row that claims the demo data, with the instant it was seeded. */
export const DEMO_SETTING = 'demo_data_seeded_at';
const DEMO_CALENDAR: PayCalendar = {
  frequency: 'BIWEEKLY',
  anchor: '2026-01-05',
  timeZone: 'America/New_York',
  paydayOffsetDays: 5,
};
/** Demo bank account numbers: this prefix and the worker's number (0001 …), at the sandbox routing number. */
const DEMO_ACCOUNT_NUMBER_PREFIX = '55500000';
/** The state a worker without one has while its history is made; removed again afterwards. */
const HISTORY_STATE = 'NY';

/** Derives a stable UUID for a demo child record from its parent's id and a label. */
export function childId(parentId: string, label: string): string {
  const d = createHash('sha256').update(`${parentId}:${label}`).digest('hex');
  return `${d.slice(0, 8)}-${d.slice(8, 12)}-4${d.slice(13, 16)}-8${d.slice(17, 20)}-${d.slice(20, 32)}`;
}

/** The fixed ids of a demo worker's job, accounts and advances. */
export function demoWorkerIds(personId: string) {
  return {
    jobId: childId(personId, 'job'),
    balanceAccountId: childId(personId, 'earnings-balance'),
    depositoryId: childId(personId, 'checking'),
    advanceIds: {
      settled: childId(personId, 'advance-settled'),
      failed: childId(personId, 'advance-failed'),
      pending: childId(personId, 'advance-pending'),
    },
  };
}

/** The scheduled-runs row that records the demo history as made (DONE), being made (RUNNING) or cut off. */
const DEMO_HISTORY_RUN = { job: 'demo-history', key: 'once' } as const;
/**
 * Making the demo history takes seconds; a RUNNING claim older than this was left by a process that died, and the
 * next start finishes it. On the embedded database only one process can be running, so it finishes it at once.
 */
export const DEMO_HISTORY_STALE_MS = 2 * 60_000;

export interface DemoSeedOptions {
  /** No other process can be using the database (the embedded one): a history left RUNNING was cut off. */
  soleProcess?: boolean;
}

/**
 * What seeding found and did: SEEDED the demo data, or FINISHED a history that a process cut off; or PRESENT, made
 * already; or BEING_MADE by another process (or cut off less than DEMO_HISTORY_STALE_MS ago, and finished later).
 */
export type DemoSeedOutcome = 'SEEDED' | 'FINISHED' | 'PRESENT' | 'BEING_MADE';

/**
 * Seeds the sandbox demo data once per database. The people, jobs, accounts and clients are written with the claim
 * in one transaction (claimDemoData); the money history is then made by the money services (finishDemoHistory),
 * whose steps run in transactions of their own and can each be run again, so a history cut off by a crash is
 * finished by the next start. `config` gives the master key that seals the demo bank account numbers and the money
 * settings; the sandbox defaults when not given.
 */
export async function seedDemoDataOnce(
  db: Db,
  now: Date,
  config: Config = loadConfig({}),
  options: DemoSeedOptions = {},
): Promise<DemoSeedOutcome> {
  const claimed = await claimDemoData(db, now, config);
  const history = await finishDemoHistory(db, now, config, options);
  if (history === 'MADE') return claimed ? 'SEEDED' : 'FINISHED';
  return history;
}

/** Writes the demo organizations, people, jobs, accounts and clients with the claim, unless claimed already. */
export async function claimDemoData(db: Db, now: Date, config: Config): Promise<boolean> {
  return withTransaction(db, (tx) => claimDemoDataIn(tx, now, config));
}

/**
 * The same in the caller's transaction (a sandbox reset claims the demo data again in the one that emptied it). Demo
 * clients that exist already (a reset keeps OAuth clients) are linked to the demo organizations again, not made.
 */
export async function claimDemoDataIn(tx: Tx, now: Date, config: Config): Promise<boolean> {
  const claim = await tx
    .insertInto('app_settings')
    .values({ key: DEMO_SETTING, value: JSON.stringify(now.toISOString()) })
    .onConflict((conflict) => conflict.column('key').doNothing())
    .returning('key')
    .executeTakeFirst();
  if (!claim) return false;
  await insertDemoData(tx, config, now);
  return true;
}

/**
 * Makes the demo workers' money history, as of the instant the demo data was claimed, unless it is made already or
 * another living process is making it. Its claim is a scheduled run (claimRun), so that one process makes it
 * however many start at once.
 */
async function finishDemoHistory(
  db: Db,
  now: Date,
  config: Config,
  options: DemoSeedOptions = {},
): Promise<'MADE' | 'PRESENT' | 'BEING_MADE'> {
  if (!(await demoSeededAt(db))) throw new Error('The demo history is made after the demo data is claimed.');
  const staleAfterMs = options.soleProcess ? 1 : DEMO_HISTORY_STALE_MS;
  const { job, key } = DEMO_HISTORY_RUN;
  if (!(await claimRun(db, job, key, now, staleAfterMs))) {
    const run = await db
      .selectFrom('scheduled_runs')
      .select('state')
      .where('job_name', '=', job)
      .where('run_key', '=', key)
      .executeTakeFirst();
    return run?.state === 'DONE' ? 'PRESENT' : 'BEING_MADE';
  }
  let steps: number;
  try {
    steps = await makeDemoHistory(db, config);
  } catch (error) {
    await finishRun(db, job, key, new Date(), 'FAILED', { error: String(error) }, now);
    throw error;
  }
  await finishRun(db, job, key, new Date(), 'DONE', { steps }, now);
  return 'MADE';
}

/**
 * The scheduled job that finishes a demo history whose process died while making it (on PostgreSQL, where other
 * processes may be running, its claim must first be DEMO_HISTORY_STALE_MS old). A made history is DONE, so the job
 * does nothing after that.
 */
export function demoHistoryJob(db: Db, config: Config): ScheduledJob {
  return {
    name: DEMO_HISTORY_RUN.job,
    runKeyAt: () => DEMO_HISTORY_RUN.key,
    staleAfterMs: DEMO_HISTORY_STALE_MS,
    run: async () => ({ steps: await makeDemoHistory(db, config) }),
  };
}

/** Runs every step of the demo history as of the claim's instant; returns how many (none before the claim). */
async function makeDemoHistory(db: Db, config: Config): Promise<number> {
  const seededAt = await demoSeededAt(db);
  if (!seededAt) return 0;
  const steps = demoHistorySteps(seededAt, config, db);
  await withHistoryStates(db, async () => {
    for (const step of steps) await step.run();
  });
  return steps.length;
}

/** The steps of the demo history as of `seededAt` (see demo-history.ts); exported for the resumption test. */
export function demoHistorySteps(seededAt: Date, config: Config, db: Db): DemoHistoryStep[] {
  // The history is a simulated past, planned on the sandbox's timings: it is paid through the sandbox whatever
  // EWA_RAIL says, so that a sandbox on ACH shows the same settled and failed advances and deposited paychecks.
  const core = createMoneyCore(db, config, {
    rail: createSandboxRail({ instantDelayMs: config.money.sandboxInstantSettleSeconds * 1000 }),
  });
  return historySteps(core, DEMO_CALENDAR, demoWorkers(), seededAt);
}

/**
 * Runs `work` with every demo worker without a state of residence given one, since advances need it, and takes it
 * away again afterwards: Emery stays the sandbox's worker without one (MISSING_STATE_OF_RESIDENCE), with a history.
 */
export async function withHistoryStates(db: Db, work: () => Promise<void>): Promise<void> {
  const stateless = DEMO.people.filter((person) => person.state === null).map((person) => person.id);
  if (stateless.length > 0)
    await db
      .updateTable('people')
      .set({ state_of_residence: HISTORY_STATE })
      .where('id', 'in', stateless)
      .execute();
  await work();
  if (stateless.length > 0)
    await db.updateTable('people').set({ state_of_residence: null }).where('id', 'in', stateless).execute();
}

async function demoSeededAt(db: Db): Promise<Date | undefined> {
  const row = await db
    .selectFrom('app_settings')
    .select('value')
    .where('key', '=', DEMO_SETTING)
    .executeTakeFirst();
  return row ? new Date(row.value as string) : undefined;
}

function demoWorkers(): DemoWorker[] {
  return DEMO.people.map((person) => {
    const ids = demoWorkerIds(person.id);
    return {
      personId: person.id,
      jobId: ids.jobId,
      balanceAccountId: ids.balanceAccountId,
      depositoryId: ids.depositoryId,
      dayPayMinor: dailyEarningsMinor(person.rateMinor, person.frequency),
      salaried: person.frequency !== 'HOURLY',
      advanceIds: ids.advanceIds,
    };
  });
}

async function insertDemoData(tx: Tx, config: Config, now: Date): Promise<void> {
  const passwordHash = await hashPassword(DEMO.password);
  const secrets = new BankAccountSecrets(config.masterKey);
  for (const org of Object.values(DEMO.organizations)) {
    await tx
      .insertInto('organizations')
      .values({ id: org.id, name: org.name, products: [...org.products] })
      .execute();
    await tx
      .insertInto('organization_policies')
      .values({
        organization_id: org.id,
        time_zone: DEMO_CALENDAR.timeZone,
        pay_frequency: DEMO_CALENDAR.frequency,
        pay_calendar_anchor: DEMO_CALENDAR.anchor,
        payday_offset_days: DEMO_CALENDAR.paydayOffsetDays,
      })
      .execute();
  }
  for (const [index, person] of DEMO.people.entries()) {
    const org = DEMO.organizations[person.org];
    const ids = demoWorkerIds(person.id);
    await tx
      .insertInto('people')
      .values({
        id: person.id,
        email: person.email,
        first_name: person.first,
        last_name: person.last,
        state_of_residence: person.state,
        password_hash: passwordHash,
      })
      .execute();
    await tx
      .insertInto('accounts')
      .values({
        id: ids.balanceAccountId,
        person_id: person.id,
        account_type: 'EARNINGS_BALANCE',
        subtype: 'ODP',
        name: 'Earnings balance',
        details: '{}',
      })
      .execute();
    await insertDemoBankAccount(tx, secrets, {
      id: ids.depositoryId,
      personId: person.id,
      firstName: person.first,
      lastName: person.last,
      accountNumber: `${DEMO_ACCOUNT_NUMBER_PREFIX}${String(index + 1).padStart(4, '0')}`,
      now,
    });
    await tx
      .insertInto('jobs')
      .values({
        id: ids.jobId,
        person_id: person.id,
        organization_id: org.id,
        external_primary_identifier: `${person.employeeId}-primary`,
        external_employee_id: person.employeeId,
        external_group: org.name.split(' ')[0]!.toLowerCase(),
        first_name: person.first,
        last_name: person.last,
        location: 'Main site',
        title: person.frequency === 'HOURLY' ? 'Associate' : 'Supervisor',
        department: 'Operations',
        wage_rate_minor: person.rateMinor,
        wage_frequency: person.frequency,
        direct_deposit_status: 'SETUP_COMPLETE',
        direct_deposit_default_depository_id: ids.depositoryId,
        earnings_balance_account_id: ids.balanceAccountId,
      })
      .execute();
  }
  const organizationIds = Object.values(DEMO.organizations).map((organization) => organization.id);
  const { confidential, public: mobile } = DEMO.clients;
  for (const client of [
    { ...confidential, isPublic: false },
    { ...mobile, isPublic: true },
  ]) {
    const made = await tx
      .selectFrom('oauth_clients')
      .select(['client_id', 'scopes'])
      .where('client_id', '=', client.clientId)
      .executeTakeFirst();
    if (made) {
      // A demo client made before a demo scope existed (profile, email) is given it; none is taken away.
      const missing = client.scopes.filter((scope) => !made.scopes.includes(scope));
      if (missing.length > 0) {
        await tx
          .updateTable('oauth_clients')
          .set({ scopes: [...made.scopes, ...missing] })
          .where('client_id', '=', client.clientId)
          .execute();
      }
      await tx
        .insertInto('oauth_client_organizations')
        .values(
          organizationIds.map((organizationId) => ({
            client_id: client.clientId,
            organization_id: organizationId,
          })),
        )
        .onConflict((conflict) => conflict.doNothing())
        .execute();
      continue;
    }
    await insertClient(
      tx,
      {
        ...client,
        redirectUris: [...client.redirectUris],
        scopes: [...client.scopes],
        organizationIds,
      },
      { sandbox: true },
    );
  }
}

/** One working day's pay: a shift for hourly jobs, what the salary accrual credits a day for salaried ones. */
export function dailyEarningsMinor(rateMinor: number, frequency: string): number {
  return frequency === 'HOURLY'
    ? rateMinor * DEMO_SHIFT_HOURS
    : salaryPerWorkingDayMinor(rateMinor, frequency);
}

/** What seeding did, in words for the console; the credentials when the demo data is there to try. */
export function describeDemoSeed(outcome: DemoSeedOutcome): string {
  switch (outcome) {
    case 'SEEDED':
      return `Seeded the sandbox demo data.\n${demoCredentials()}`;
    case 'FINISHED':
      return `Finished the sandbox demo data's money history, which an earlier start had cut off.\n${demoCredentials()}`;
    case 'PRESENT':
      return 'The sandbox demo data is already there.';
    case 'BEING_MADE':
      return (
        "The sandbox demo data's money history is being made by another process, or was cut off less than " +
        `${DEMO_HISTORY_STALE_MS / 60_000} minutes ago; a running \`ewa serve\` finishes it after that.`
      );
  }
}

/** What a developer needs to try the sandbox, printed when the demo data is loaded. */
export function demoCredentials(): string {
  const { confidential, public: mobile } = DEMO.clients;
  return [
    'Sandbox credentials (also in docs/integrators/sandbox.md):',
    `  confidential client  client_id=${confidential.clientId}  client_secret=${confidential.secret}`,
    `  public client        client_id=${mobile.clientId}  (PKCE, no secret)`,
    `  demo workers         ${DEMO.people[0].email} … (password: ${DEMO.password})`,
  ].join('\n');
}
