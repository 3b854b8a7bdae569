import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { PaychecksTable } from '../../db/schema.ts';
import type { Tx } from '../../db/transaction.ts';
import { type Money, money } from '../../domain/money.ts';
import { ensureOwnedLedgerAccounts } from '../../ledger/ledger-accounts.ts';
import type { PayPeriod } from './pay-periods.ts';

/** A paycheck's columns that the wire shows (from the schema's types). */
export type PaycheckFigures = Pick<
  Selectable<PaychecksTable>,
  | 'id'
  | 'job_id'
  | 'person_id'
  | 'status'
  | 'pay_period_starts_at'
  | 'pay_period_ends_at'
  | 'deposit_expected_at'
  | 'currency'
  | 'gross_earnings_minor'
  | 'employer_withholdings_minor'
  | 'net_earnings_minor'
  | 'total_debited_minor'
>;

export type PaycheckStatus = 'ESTIMATED' | 'PROCESSING' | 'IN_TRANSIT' | 'DEPOSITED';

/** A paycheck as the money core and the routes speak of it; PaycheckFigures is how the database keeps it. */
export interface Paycheck {
  id: string;
  jobId: string;
  personId: string;
  status: PaycheckStatus;
  payPeriodStartsAt: Date;
  /** The start of the period's last day. */
  payPeriodEndsAt: Date;
  depositExpectedAt: Date;
  gross: Money;
  employerWithholdings: Money;
  net: Money;
  /** What advances have taken from it. */
  totalDebited: Money;
}

export function paycheckOf(row: PaycheckFigures): Paycheck {
  const currency = row.currency.trim();
  return {
    id: row.id,
    jobId: row.job_id,
    personId: row.person_id,
    status: row.status as PaycheckStatus,
    payPeriodStartsAt: new Date(row.pay_period_starts_at),
    payPeriodEndsAt: new Date(row.pay_period_ends_at),
    depositExpectedAt: new Date(row.deposit_expected_at),
    gross: money(row.gross_earnings_minor, currency),
    employerWithholdings: money(row.employer_withholdings_minor, currency),
    net: money(row.net_earnings_minor, currency),
    totalDebited: money(row.total_debited_minor, currency),
  };
}

/** A paycheck as the money rules read it: the wire's columns, and what it has made accessible so far. */
export interface PaycheckRow extends PaycheckFigures {
  accessible_minor: number;
}

export interface PaycheckWanted {
  jobId: string;
  personId: string;
  currency: string;
  period: PayPeriod;
}

/**
 * The paychecks of these (job, period) pairs, created ESTIMATED where missing, each with its clearing account in
 * the ledger. Keyed `${jobId}/${startsAt ISO}`. The caller holds the people's locks, so no one else creates them.
 */
export async function ensurePaychecks(
  tx: Tx,
  wanted: readonly PaycheckWanted[],
): Promise<Map<string, PaycheckRow>> {
  const byKey = new Map<string, PaycheckWanted>();
  for (const w of wanted) byKey.set(paycheckKey(w.jobId, w.period.startsAt), w);
  const all = [...byKey.values()];
  if (all.length === 0) return new Map();
  const fresh = all.map((w) => ({ ...w, id: randomUUID() }));
  await sql`insert into paychecks (id, job_id, person_id, pay_period_starts_at, pay_period_ends_at,
      deposit_expected_at, currency)
    select * from unnest(${fresh.map((w) => w.id)}::uuid[], ${fresh.map((w) => w.jobId)}::uuid[],
      ${fresh.map((w) => w.personId)}::uuid[], ${fresh.map((w) => w.period.startsAt.toISOString())}::timestamptz[],
      ${fresh.map((w) => w.period.lastDayStartsAt.toISOString())}::timestamptz[],
      ${fresh.map((w) => w.period.depositExpectedAt.toISOString())}::timestamptz[],
      ${fresh.map((w) => w.currency)}::char(3)[])
    on conflict (job_id, pay_period_starts_at) do nothing`.execute(tx);
  const { rows } = await sql<PaycheckRow>`select p.* from paychecks p
    join unnest(${all.map((w) => w.jobId)}::uuid[], ${all.map((w) => w.period.startsAt.toISOString())}::timestamptz[])
      as w(job_id, starts_at) on p.job_id = w.job_id and p.pay_period_starts_at = w.starts_at
    for update of p`.execute(tx);
  await ensureOwnedLedgerAccounts(
    tx,
    'paycheck',
    rows.map((row) => ({ id: row.id, currency: row.currency.trim() })),
  );
  return new Map(rows.map((row) => [paycheckKey(row.job_id, row.pay_period_starts_at), normalize(row)]));
}

export function paycheckKey(jobId: string, startsAt: Date): string {
  return `${jobId}/${startsAt.toISOString()}`;
}

export function normalize(row: PaycheckRow): PaycheckRow {
  return { ...row, currency: row.currency.trim() };
}
