import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import { InputRefusedError } from '../errors/input-error.ts';

/**
 * What an employer that runs payroll itself (policy `payday_payout` EMPLOYER) must deduct from each paycheck on its
 * payday and remit to the provider: per paycheck paid on the days asked, the deductions it carries. Its payday
 * records that remittance in the ledger (employerPayday in src/ledger/movements.ts) with these same amounts. For an
 * employer whose net pay this server routes (PROVIDER, the default: docs/operators/payroll-and-rails.md) payday
 * deducts them itself and there is nothing to remit: the report refuses it, naming the field.
 *
 * Each deduction is one entry of this table, a column of every row and a part of its total: a later deduction
 * (an overpayment's recovery from the paycheck) is one more entry here, nothing else.
 */
export const REMITTANCE_DEDUCTIONS: readonly {
  name: string;
  description: string;
  /** Its amount in minor units, from the paycheck `p`. */
  amount: RawBuilder<unknown>;
}[] = [
  {
    name: 'advances_minor',
    description:
      'What advances took from the paycheck and did not give back (its total_debited), up to its net pay: what is ' +
      'above net pay is an overpayment, recovered from later paychecks.',
    amount: sql`least(p.total_debited_minor, greatest(p.net_earnings_minor, 0))`,
  },
  {
    name: 'overpayment_recovered_minor',
    description: 'What this paycheck repays of an earlier overpayment of the same job (no fee, no interest).',
    amount: sql`p.overpayment_recovered_minor`,
  },
];

export interface RemittanceLine {
  organization_id: string;
  job_id: string;
  external_employee_id: string | null;
  external_primary_identifier: string;
  person_id: string;
  first_name: string;
  last_name: string;
  paycheck_id: string;
  /** ESTIMATED until the pay period closes: its deductions may still grow until then. */
  paycheck_status: string;
  /** The pay period's first and last day and its payday, in the employer's time zone. */
  period_start: string;
  period_end: string;
  pay_date: string;
  currency: string;
  /** Each deduction of REMITTANCE_DEDUCTIONS, by its name. */
  deductions: Record<string, number>;
  /** The sum of the deductions: what the paycheck must carry. */
  deduction_minor: number;
  /** Advances (not failed) funded by this paycheck. */
  advances: number;
}

export interface RemittanceReport {
  organization_id: string;
  organization_name: string;
  time_zone: string;
  from: string;
  to: string;
  deductions: string[];
  /** Sums per currency of deduction_minor, for the transfer to the provider. */
  totals: { currency: string; deduction_minor: number; paychecks: number }[];
  lines: RemittanceLine[];
}

/**
 * The paychecks of the organization paid from `from` to `to` (calendar days in its time zone, both included)
 * that carry a deduction, in pay date, then employee order.
 */
export async function remittanceReport(
  db: Kysely<DB>,
  organizationId: string,
  from: string,
  to: string,
): Promise<RemittanceReport> {
  const organization = await db
    .selectFrom('organizations as o')
    .leftJoin('organization_policies as pol', 'pol.organization_id', 'o.id')
    .select([
      'o.id',
      'o.name',
      sql<string>`coalesce(pol.time_zone, 'America/New_York')`.as('time_zone'),
      sql<string>`coalesce(pol.payday_payout, 'PROVIDER')`.as('payday_payout'),
    ])
    .where('o.id', '=', organizationId)
    .executeTakeFirst();
  if (!organization)
    throw new InputRefusedError(`No organization has the id ${organizationId}.`, { field: 'organization' });
  if (organization.payday_payout !== 'EMPLOYER')
    throw new InputRefusedError(
      `Organization ${organizationId} has payday_payout ${organization.payday_payout}: this server pays its net ` +
        'pay on payday and deducts the advances itself, so it remits nothing. The report serves employers whose ' +
        'payday_payout is EMPLOYER.',
      { field: 'organization' },
    );
  const zone = organization.time_zone;
  const local = (column: RawBuilder<unknown>) => sql`(${column} at time zone ${zone})::date`;
  const deductionColumns = sql.join(
    REMITTANCE_DEDUCTIONS.map((deduction) => sql`${deduction.amount} as ${sql.ref(deduction.name)}`),
  );
  const { rows } = await sql<Record<string, unknown>>`select * from (select j.organization_id, j.id as job_id,
      j.external_employee_id, j.external_primary_identifier, j.person_id, j.first_name, j.last_name,
      p.id as paycheck_id, p.status as paycheck_status,
      ${local(sql`p.pay_period_starts_at`)}::text as period_start,
      ${local(sql`p.pay_period_ends_at`)}::text as period_end,
      ${local(sql`p.deposit_expected_at`)}::text as pay_date, trim(p.currency) as currency,
      ${deductionColumns},
      (select count(distinct fs.transfer_id) from funding_sources fs join transfers t on t.id = fs.transfer_id
        where fs.paycheck_id = p.id and t.status <> 'FAILED' and t.origin_account_id is not null) as advances
    from jobs j join paychecks p on p.job_id = j.id
    where j.organization_id = ${organizationId}
      and ${local(sql`p.deposit_expected_at`)} between ${from}::date and ${to}::date) r
    where ${sql.join(
      REMITTANCE_DEDUCTIONS.map((deduction) => sql`${sql.ref(`r.${deduction.name}`)} > 0`),
      sql` or `,
    )}
    order by r.pay_date, r.external_employee_id nulls last, r.external_primary_identifier, r.period_start`.execute(
    db,
  );
  const lines = rows.map((row): RemittanceLine => {
    const deductions = Object.fromEntries(
      REMITTANCE_DEDUCTIONS.map((deduction) => [deduction.name, Number(row[deduction.name])]),
    );
    return {
      organization_id: row.organization_id as string,
      job_id: row.job_id as string,
      external_employee_id: (row.external_employee_id as string | null) ?? null,
      external_primary_identifier: row.external_primary_identifier as string,
      person_id: row.person_id as string,
      first_name: row.first_name as string,
      last_name: row.last_name as string,
      paycheck_id: row.paycheck_id as string,
      paycheck_status: row.paycheck_status as string,
      period_start: row.period_start as string,
      period_end: row.period_end as string,
      pay_date: row.pay_date as string,
      currency: row.currency as string,
      deductions,
      deduction_minor: Object.values(deductions).reduce((sum, amount) => sum + amount, 0),
      advances: Number(row.advances),
    };
  });
  const totals = new Map<string, { currency: string; deduction_minor: number; paychecks: number }>();
  for (const line of lines) {
    const total = totals.get(line.currency) ?? { currency: line.currency, deduction_minor: 0, paychecks: 0 };
    total.deduction_minor += line.deduction_minor;
    total.paychecks += 1;
    totals.set(line.currency, total);
  }
  return {
    organization_id: organization.id,
    organization_name: organization.name,
    time_zone: zone,
    from,
    to,
    deductions: REMITTANCE_DEDUCTIONS.map((deduction) => deduction.name),
    totals: [...totals.values()],
    lines,
  };
}
