import { isUsState } from '../domain/us-states.ts';
import { isUuid } from '../domain/uuid.ts';
import { InputError } from '../errors/input-error.ts';
import { type PeriodInput, type ReportPeriod, readPeriod } from './report-period.ts';

/** The report formats; JSON unless asked. */
export const REPORT_FORMATS = ['json', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export function readFormat(value: string | undefined): ReportFormat {
  if (value === undefined) return 'json';
  if (!(REPORT_FORMATS as readonly string[]).includes(value))
    throw new InputError(`format must be json or csv (got "${value.slice(0, 20)}").`, { field: 'format' });
  return value as ReportFormat;
}

/** The state and period of a state report, each checked on its face; an InputError names the one at fault. */
export function readStateReportInput(input: { state?: string | undefined } & PeriodInput): {
  state: string;
  period: ReportPeriod;
} {
  const { state } = input;
  if (state === undefined) throw new InputError('state is required, such as WI.', { field: 'state' });
  if (!isUsState(state))
    throw new InputError(
      `state must be the two-letter code of a US state or DC in capitals, such as WI (got "${state.slice(0, 20)}").`,
      { field: 'state' },
    );
  return { state, period: readPeriod(input) };
}

/** The organization and pay dates of a remittance: one `pay_date`, or `from` and `to` (days of the employer). */
export function readRemittanceInput(input: {
  organization?: string | undefined;
  pay_date?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}): { organizationId: string; from: string; to: string } {
  const { organization } = input;
  if (organization === undefined)
    throw new InputError('organization is required: the employer’s id.', { field: 'organization' });
  if (!isUuid(organization))
    throw new InputError(`organization must be a UUID (got "${organization.slice(0, 40)}").`, {
      field: 'organization',
    });
  if (input.pay_date !== undefined) {
    if (input.from !== undefined || input.to !== undefined)
      throw new InputError('give pay_date, or from and to: not both.', { field: 'pay_date' });
    let from: string;
    try {
      ({ from } = readPeriod({ from: input.pay_date, to: input.pay_date }));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      throw new InputError(error.message.replace(/^from\b/, 'pay_date'), { field: 'pay_date' });
    }
    return { organizationId: organization.toLowerCase(), from, to: from };
  }
  if (input.from === undefined && input.to === undefined)
    throw new InputError('pay_date is required (or from and to): the payday of the paychecks.', {
      field: 'pay_date',
    });
  const { from, to } = readPeriod({ from: input.from, to: input.to });
  return { organizationId: organization.toLowerCase(), from, to };
}
