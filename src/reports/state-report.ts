import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { ReportPeriod } from './report-period.ts';

/** NV asks how many people took at least this many advances in the year (NRS 604D). */
export const FREQUENT_USER_ADVANCES = 12;

/** Money figures of one currency (every US employer's is USD; the sums never mix currencies). */
export interface StateReportAmounts {
  currency: string;
  total_amount: number;
  total_fees: number;
  /** Always 0: this server offers no tips. */
  total_tips: number;
  amount_received: number;
  failed_amount: number;
  returned_amount: number;
}

/**
 * The figures a state's regulator asks for, over one period: the advances made there (by the person's state when
 * each was made), the people who made them, money, and the complaints record. Money is integer minor units.
 */
export interface StateReport {
  state: string;
  period: { from: string; to: string; time_zone: string };
  /** Advances made in the period and not failed or returned: PENDING or SETTLED. */
  advances: number;
  unique_users: number;
  /** People with at least FREQUENT_USER_ADVANCES of those advances in the period. */
  users_with_12_or_more_advances: number;
  /** Advances of the period the rail failed (no money reached the person), not counted above. */
  failed_advances: number;
  /** Advances of the period paid and then returned by the receiving bank, not counted above. */
  returned_advances: number;
  amounts: StateReportAmounts[];
  complaints_opened: number;
  complaints_answered: number;
  complaints_closed: number;
  /** Advances of the period whose state was not recorded when they were made (before migration 0018). */
  advances_by_current_state: number;
  notes: string[];
}

/**
 * The advances of the period with the state each counts in: the state recorded with the advance
 * (transfer_disclosures.state_of_residence, written by its own statement), else — for advances made before it
 * was recorded — the person's state now.
 */
function advancesOfPeriod(period: ReportPeriod, state: string) {
  return sql`(select t.person_id, t.amount_minor, t.fee_minor, t.currency,
      t.returned_at is not null as returned, t.status = 'FAILED' and t.returned_at is null as failed,
      t.status <> 'FAILED' as counted, td.state_of_residence is null as by_current_state
    from transfers t
      left join transfer_disclosures td on td.transfer_id = t.id
      join people pe on pe.id = t.person_id
    where t.origin_account_id is not null
      and t.submitted_at >= ${period.startsAt.toISOString()}::timestamptz
      and t.submitted_at < ${period.endsBefore.toISOString()}::timestamptz
      and trim(coalesce(td.state_of_residence, pe.state_of_residence)) = ${state})`;
}

export async function stateReport(db: Kysely<DB>, state: string, period: ReportPeriod): Promise<StateReport> {
  const advances = advancesOfPeriod(period, state);
  const range = (column: string) =>
    sql`${sql.ref(column)} >= ${period.startsAt.toISOString()}::timestamptz
      and ${sql.ref(column)} < ${period.endsBefore.toISOString()}::timestamptz`;
  const { rows: countRows } = await sql<Record<string, string | number>>`select
      count(*) filter (where a.counted) as advances,
      count(distinct a.person_id) filter (where a.counted) as unique_users,
      count(*) filter (where a.failed) as failed_advances,
      count(*) filter (where a.returned) as returned_advances,
      count(*) filter (where a.by_current_state) as advances_by_current_state,
      (select count(*) from (select f.person_id from ${advances} f where f.counted group by f.person_id
        having count(*) >= ${FREQUENT_USER_ADVANCES}) frequent) as frequent_users,
      (select count(*) from complaints c where c.state = ${state} and ${range('c.opened_at')}) as opened,
      (select count(*) from complaints c where c.state = ${state} and ${range('c.answered_at')}) as answered,
      (select count(*) from complaints c where c.state = ${state} and ${range('c.closed_at')}) as closed
    from ${advances} a`.execute(db);
  const { rows: amountRows } = await sql<Record<string, string | number>>`select trim(a.currency) as currency,
      coalesce(sum(a.amount_minor) filter (where a.counted), 0) as total_amount,
      coalesce(sum(a.fee_minor) filter (where a.counted), 0) as total_fees,
      coalesce(sum(a.amount_minor - a.fee_minor) filter (where a.counted), 0) as amount_received,
      coalesce(sum(a.amount_minor) filter (where a.failed), 0) as failed_amount,
      coalesce(sum(a.amount_minor) filter (where a.returned), 0) as returned_amount
    from ${advances} a group by trim(a.currency) order by 1`.execute(db);
  const counts = countRows[0] ?? {};
  const n = (value: unknown) => Number(value ?? 0);
  const byCurrentState = n(counts.advances_by_current_state);
  return {
    state,
    period: { from: period.from, to: period.to, time_zone: period.timeZone },
    advances: n(counts.advances),
    unique_users: n(counts.unique_users),
    users_with_12_or_more_advances: n(counts.frequent_users),
    failed_advances: n(counts.failed_advances),
    returned_advances: n(counts.returned_advances),
    amounts: amountRows.map((row) => ({
      currency: String(row.currency),
      total_amount: n(row.total_amount),
      total_fees: n(row.total_fees),
      total_tips: 0,
      amount_received: n(row.amount_received),
      failed_amount: n(row.failed_amount),
      returned_amount: n(row.returned_amount),
    })),
    complaints_opened: n(counts.opened),
    complaints_answered: n(counts.answered),
    complaints_closed: n(counts.closed),
    advances_by_current_state: byCurrentState,
    notes: reportNotes(byCurrentState),
  };
}

function reportNotes(byCurrentState: number): string[] {
  const notes = [
    'Period: calendar days in UTC, from the first day 00:00 to the end of the last day.',
    'advances counts the advances made in the period (PENDING or SETTLED now), by the state the person lived in when each was made; failed and returned advances are counted apart and in no other figure.',
    'Amounts are integer minor units (cents). amount_received is total_amount less total_fees. total_tips is 0: this server offers no tips.',
    'Complaints are counted by the state of the complainant when the complaint was opened, each figure by the day of that event.',
  ];
  if (byCurrentState > 0)
    notes.push(
      `${byCurrentState} advance(s) were made before the state was recorded with each advance: they are counted at the person's current state of residence.`,
    );
  return notes;
}
