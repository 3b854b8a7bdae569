import { createHash } from 'node:crypto';
import { hashPassword } from '../crypto/passwords.ts';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';
import { localDateOf, weekdaysBetween } from '../earnings/calendar.ts';
import { type PayCalendar, payPeriodContaining, previousPayPeriod } from '../earnings/pay-periods.ts';
import { insertClient } from '../oauth/clients.ts';

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
      rateMinor: 6_240_000,
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
const SHIFT_HOURS = 8;
const WITHHOLDING_BP = 2500;

/** Derives a stable UUID for a demo child record from its parent's id and a label. */
export function childId(parentId: string, label: string): string {
  const d = createHash('sha256').update(`${parentId}:${label}`).digest('hex');
  return `${d.slice(0, 8)}-${d.slice(8, 12)}-4${d.slice(13, 16)}-8${d.slice(17, 20)}-${d.slice(20, 32)}`;
}

/** Seeds the sandbox demo data once per database; returns false when it was there already. */
export async function seedDemoDataOnce(db: Db, now: Date): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const claimed = await tx
      .insertInto('app_settings')
      .values({ key: DEMO_SETTING, value: JSON.stringify(now.toISOString()) })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!claimed) return false;
    await insertDemoData(tx, now);
    return true;
  });
}

async function insertDemoData(tx: Tx, now: Date): Promise<void> {
  const passwordHash = await hashPassword(DEMO.password);
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
  const today = localDateOf(now, DEMO_CALENDAR.timeZone);
  const current = payPeriodContaining(DEMO_CALENDAR, today);
  const previous = previousPayPeriod(DEMO_CALENDAR, current);
  for (const person of DEMO.people) {
    const org = DEMO.organizations[person.org];
    const jobId = childId(person.id, 'job');
    const balanceId = childId(person.id, 'earnings-balance');
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
        id: balanceId,
        person_id: person.id,
        account_type: 'EARNINGS_BALANCE',
        subtype: 'ODP',
        name: 'Earnings balance',
        details: '{}',
      })
      .execute();
    await tx
      .insertInto('jobs')
      .values({
        id: jobId,
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
        earnings_balance_account_id: balanceId,
      })
      .execute();
    for (const [label, period, status] of [
      ['previous', previous, 'DEPOSITED'],
      ['current', current, 'ESTIMATED'],
    ] as const) {
      const paycheckId = childId(person.id, `paycheck-${label}`);
      const lastWorkedDay = label === 'current' ? today : period.lastDay;
      const days = weekdaysBetween(period.firstDay, lastWorkedDay);
      const dailyMinor = dailyEarningsMinor(person.rateMinor, person.frequency);
      const grossMinor = dailyMinor * days.length;
      const withheldMinor = Math.floor((grossMinor * WITHHOLDING_BP) / 10_000);
      await tx
        .insertInto('paychecks')
        .values({
          id: paycheckId,
          job_id: jobId,
          person_id: person.id,
          status,
          pay_period_starts_at: period.startsAt,
          pay_period_ends_at: period.endsAt,
          deposit_expected_at: period.depositExpectedAt,
          gross_earnings_minor: grossMinor,
          employer_withholdings_minor: withheldMinor,
          net_earnings_minor: grossMinor - withheldMinor,
        })
        .execute();
      if (days.length > 0) {
        await tx
          .insertInto('earnings')
          .values(
            days.map((day) => ({
              id: childId(paycheckId, day),
              job_id: jobId,
              paycheck_id: paycheckId,
              external_id: `demo-${day}`,
              worked_on: day,
              hours_hundredths: person.frequency === 'HOURLY' ? SHIFT_HOURS * 100 : null,
              amount_minor: dailyMinor,
              source: person.frequency === 'HOURLY' ? 'SHIFT' : 'SALARY',
            })),
          )
          .execute();
      }
    }
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

/** One working day's pay: a shift for hourly jobs, 1/260 of the year for salaried ones. */
export function dailyEarningsMinor(rateMinor: number, frequency: string): number {
  return frequency === 'HOURLY' ? rateMinor * SHIFT_HOURS : Math.floor(rateMinor / 260);
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
