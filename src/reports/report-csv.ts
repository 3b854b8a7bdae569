import type { RemittanceReport } from './remittance-report.ts';
import type { StateReport } from './state-report.ts';

type Cell = string | number | null;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled. A text cell that
 * a spreadsheet would read as a formula (=, +, -, @, a tab or a carriage return first) is written with a leading
 * apostrophe, so that a name like "=HYPERLINK(…)" in a payroll file stays text. Numbers are written as they are.
 */
export function csvCell(value: Cell): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Lines ending in CRLF, as RFC 4180 and spreadsheets have them; the header first. */
export function csvOf(header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

const STATE_COLUMNS = [
  'state',
  'from',
  'to',
  'time_zone',
  'currency',
  'advances',
  'unique_users',
  'total_amount_minor',
  'total_fees_minor',
  'total_tips_minor',
  'amount_received_minor',
  'failed_advances',
  'failed_amount_minor',
  'returned_advances',
  'returned_amount_minor',
  'users_with_12_or_more_advances',
  'complaints_opened',
  'complaints_answered',
  'complaints_closed',
  'advances_by_current_state',
] as const;

/** One line per currency (one with an empty currency and zero amounts when no advance was made). */
export function stateReportCsv(report: StateReport): string {
  const amounts = report.amounts.length
    ? report.amounts
    : [
        {
          currency: '',
          total_amount: 0,
          total_fees: 0,
          total_tips: 0,
          amount_received: 0,
          failed_amount: 0,
          returned_amount: 0,
        },
      ];
  return csvOf(
    STATE_COLUMNS,
    amounts.map((money) => [
      report.state,
      report.period.from,
      report.period.to,
      report.period.time_zone,
      money.currency,
      report.advances,
      report.unique_users,
      money.total_amount,
      money.total_fees,
      money.total_tips,
      money.amount_received,
      report.failed_advances,
      money.failed_amount,
      report.returned_advances,
      money.returned_amount,
      report.users_with_12_or_more_advances,
      report.complaints_opened,
      report.complaints_answered,
      report.complaints_closed,
      report.advances_by_current_state,
    ]),
  );
}

/** One line per paycheck; a column per deduction (REMITTANCE_DEDUCTIONS), then their total. */
export function remittanceCsv(report: RemittanceReport): string {
  const header = [
    'organization_id',
    'organization_name',
    'pay_date',
    'period_start',
    'period_end',
    'job_id',
    'external_employee_id',
    'external_primary_identifier',
    'person_id',
    'first_name',
    'last_name',
    'paycheck_id',
    'paycheck_status',
    'currency',
    ...report.deductions,
    'deduction_minor',
    'advances',
  ];
  return csvOf(
    header,
    report.lines.map((line) => [
      line.organization_id,
      report.organization_name,
      line.pay_date,
      line.period_start,
      line.period_end,
      line.job_id,
      line.external_employee_id,
      line.external_primary_identifier,
      line.person_id,
      line.first_name,
      line.last_name,
      line.paycheck_id,
      line.paycheck_status,
      line.currency,
      ...report.deductions.map((name) => line.deductions[name] ?? 0),
      line.deduction_minor,
      line.advances,
    ]),
  );
}
