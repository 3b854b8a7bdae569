import { createHash } from 'node:crypto';
import { type Config, loadConfig } from '../config.ts';
import { hashPassword } from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { createMoneyCore } from '../earnings/money-core.ts';
import type { PayCalendar } from '../earnings/pay-periods.ts';
import { salaryPerWorkingDayMinor } from '../earnings/paycheck-math.ts';
import { insertClient } from '../oauth/clients.ts';
import { BankAccountSecrets } from '../resources/accounts/bank-account-secrets.ts';
import { insertDemoBankAccount } from './demo-bank-account.ts';
import { DEMO_SHIFT_HOURS, type DemoWorker, seedDemoHistory } from './demo-history.ts';

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
  /** Sandbox credentials, published in the README: the sandbox holds no real money or people. */
  password: 'sandbox-password',
  clients: {
    confidential: {
      clientId: 'demo-partner-server',
      secret: 'demo-partner-secret',
      name: 'Demo Partner (server)',
      redirectUris: ['http://localhost:3000/callback'],
      scopes: [
        'openid',
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
      name: 'Demo Partner (mobile)',
      redirectUris: ['http://localhost:3000/callback', 'com.example.ewa:/callback'],
      scopes: ['openid', 'offline_access', 'user:read', 'user:read_write'],
    },
  },
} as const;

const DEMO_SETTING = 'demo_data_seeded_at';
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

/**
 * Seeds the sandbox demo data once per database; returns false when it was there already. The people, jobs,
 * accounts and clients are written with the claim in one transaction; the money history is then made by the
 * money services, each step in its own transactions (they cannot run inside another), by the process that won
 * the claim. `config` gives the master key that seals the demo bank account numbers and the money settings; the
 * sandbox defaults when not given.
 */
export async function seedDemoDataOnce(db: Db, now: Date, config: Config = loadConfig({})): Promise<boolean> {
  const claimed = await withTransaction(db, async (tx) => {
    const claim = await tx
      .insertInto('app_settings')
      .values({ key: DEMO_SETTING, value: JSON.stringify(now.toISOString()) })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!claim) return false;
    await insertDemoData(tx, config, now);
    return true;
  });
  if (!claimed) return false;
  await seedDemoHistory(createMoneyCore(db, config), DEMO_CALENDAR, demoWorkers(), now);
  const stateless = DEMO.people.filter((person) => person.state === null).map((person) => person.id);
  // Emery stays the sandbox's worker without a state of residence (MISSING_STATE_OF_RESIDENCE), with a history.
  if (stateless.length > 0)
    await db.updateTable('people').set({ state_of_residence: null }).where('id', 'in', stateless).execute();
  return true;
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
        // A worker without a state gets one while its history is made (advances need it); see seedDemoDataOnce.
        state_of_residence: person.state ?? HISTORY_STATE,
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
  await insertClient(
    tx,
    {
      ...confidential,
      redirectUris: [...confidential.redirectUris],
      scopes: [...confidential.scopes],
      isPublic: false,
      organizationIds,
    },
    { sandbox: true },
  );
  await insertClient(
    tx,
    {
      ...mobile,
      redirectUris: [...mobile.redirectUris],
      scopes: [...mobile.scopes],
      isPublic: true,
      organizationIds,
    },
    { sandbox: true },
  );
}

/** One working day's pay: a shift for hourly jobs, what the salary accrual credits a day for salaried ones. */
export function dailyEarningsMinor(rateMinor: number, frequency: string): number {
  return frequency === 'HOURLY'
    ? rateMinor * DEMO_SHIFT_HOURS
    : salaryPerWorkingDayMinor(rateMinor, frequency);
}

/** What a developer needs to try the sandbox, printed when the demo data is loaded. */
export function demoCredentials(): string {
  const { confidential, public: mobile } = DEMO.clients;
  return [
    'Sandbox credentials (also in the README):',
    `  confidential client  client_id=${confidential.clientId}  client_secret=${confidential.secret}`,
    `  public client        client_id=${mobile.clientId}  (PKCE, no secret)`,
    `  demo workers         ${DEMO.people[0].email} … (password: ${DEMO.password})`,
  ].join('\n');
}
