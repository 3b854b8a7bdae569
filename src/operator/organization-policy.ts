import { isCalendarDay } from '../domain/date-text.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * An organization's policy (the `organization_policies` row): pay calendar, access rate, withholding estimate,
 * transfer limits and fees. Rates are basis points (5000 = 50 %), money is integer minor units of `currency`, and a
 * null fee means that destination and schedule is not offered.
 */
export interface OrganizationPolicy {
  currency: string;
  timeZone: string;
  payFrequency: PayFrequency;
  payCalendarAnchor: string;
  paydayOffsetDays: number;
  accessRateBp: number;
  withholdingEstimateBp: number;
  transfersEnabled: boolean;
  minimumTransferMinor: number;
  maximumTransferMinor: number;
  maximumFeeMinor: number;
  dailyTransferCountMax: number;
  dailyTransferAmountMaxMinor: number;
  feeCardInstantMinor: number | null;
  feeCardNextDayMinor: number | null;
  feeBankInstantMinor: number | null;
  feeBankNextDayMinor: number | null;
  overpaymentDefaultResolution: OverpaymentPolicyResolution;
  overpaymentInstallments: number;
  overpaymentWriteOffAfterPeriods: number;
  overpaymentWriteOffDelinquent: boolean;
  paydayPayout: PaydayPayout;
}

/** NONE: the person chooses (OVERPAYMENT_RESOLUTION_REQUIRED until they do). */
export const OVERPAYMENT_POLICY_RESOLUTIONS = ['NONE', 'NEXT_PAYCHECK', 'INSTALLMENTS'] as const;
export type OverpaymentPolicyResolution = (typeof OVERPAYMENT_POLICY_RESOLUTIONS)[number];
/** The most paychecks an overpayment may be spread over. */
export const OVERPAYMENT_INSTALLMENTS_MAX = 12;

/**
 * Who pays net pay on payday: PROVIDER (this server, through the rail) or EMPLOYER (the employer runs payroll
 * itself, pays its workers directly and remits the remittance report's deductions to the provider).
 */
export const PAYDAY_PAYOUTS = ['PROVIDER', 'EMPLOYER'] as const;
export type PaydayPayout = (typeof PAYDAY_PAYOUTS)[number];

export type PolicyKey = keyof OrganizationPolicy;
export type PolicyChange = { [K in PolicyKey]?: unknown };

export const PAY_FREQUENCIES = ['WEEKLY', 'BIWEEKLY', 'TWICE_MONTHLY', 'MONTHLY'] as const;
export type PayFrequency = (typeof PAY_FREQUENCIES)[number];

/** Far above any wage or transfer, far below 2^53: a typo of a few extra digits is refused. */
export const POLICY_MONEY_MINOR_MAX = 100_000_000_000;
const TRANSFER_COUNT_MAX = 1_000;
const ANCHOR_YEARS = { min: 2000, max: 2100 } as const;

export type PolicyFieldKind =
  | { type: 'currency' }
  | { type: 'time-zone' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'date' }
  | { type: 'integer'; min: number; max: number }
  | { type: 'fee'; max: number }
  | { type: 'boolean' };

export interface PolicyField {
  /** The name on the wire, in the database and in messages. */
  name: string;
  kind: PolicyFieldKind;
  description: string;
}

const MONEY: PolicyFieldKind = { type: 'integer', min: 0, max: POLICY_MONEY_MINOR_MAX };

/**
 * One table drives validation, the database columns, the admin API schema and the CLI flags, so the four cannot
 * disagree about a field's name or range. Ranges are the CHECK constraints of the migration, with upper bounds.
 */
export const POLICY_FIELDS: { readonly [K in PolicyKey]: PolicyField } = {
  currency: {
    name: 'currency',
    kind: { type: 'currency' },
    description: 'ISO 4217 code of wages, balances and fees; fixed once the organization has jobs.',
  },
  timeZone: {
    name: 'time_zone',
    kind: { type: 'time-zone' },
    description: 'IANA time zone of the pay calendar, e.g. America/New_York.',
  },
  payFrequency: {
    name: 'pay_frequency',
    kind: { type: 'enum', values: PAY_FREQUENCIES },
    description: 'How often the organization pays.',
  },
  payCalendarAnchor: {
    name: 'pay_calendar_anchor',
    kind: { type: 'date' },
    description: 'First day (YYYY-MM-DD) of one pay period; weekly and biweekly periods repeat from it.',
  },
  paydayOffsetDays: {
    name: 'payday_offset_days',
    kind: { type: 'integer', min: 0, max: 31 },
    description: "Days after a period's last day that pay is deposited.",
  },
  accessRateBp: {
    name: 'access_rate_bp',
    kind: { type: 'integer', min: 0, max: 10_000 },
    description: 'Share of estimated net earnings a worker may take early, in basis points (5000 = 50 %).',
  },
  withholdingEstimateBp: {
    name: 'withholding_estimate_bp',
    kind: { type: 'integer', min: 0, max: 10_000 },
    description: 'Estimated withholdings, in basis points of gross earnings.',
  },
  transfersEnabled: {
    name: 'transfers_enabled',
    kind: { type: 'boolean' },
    description: "False stops every worker's transfers (TRANSFERS_DISABLED).",
  },
  minimumTransferMinor: {
    name: 'minimum_transfer_minor',
    kind: MONEY,
    description: 'Smallest transfer, in minor units.',
  },
  maximumTransferMinor: {
    name: 'maximum_transfer_minor',
    kind: MONEY,
    description: 'Largest transfer, in minor units; at least minimum_transfer_minor.',
  },
  maximumFeeMinor: {
    name: 'maximum_fee_minor',
    kind: MONEY,
    description: 'Largest fee of one transfer, in minor units; every offered fee is at most this.',
  },
  dailyTransferCountMax: {
    name: 'daily_transfer_count_max',
    kind: { type: 'integer', min: 0, max: TRANSFER_COUNT_MAX },
    description: 'Transfers a worker may make in 24 hours.',
  },
  dailyTransferAmountMaxMinor: {
    name: 'daily_transfer_amount_max_minor',
    kind: MONEY,
    description: 'Amount a worker may transfer in 24 hours, in minor units.',
  },
  feeCardInstantMinor: {
    name: 'fee_card_instant_minor',
    kind: { type: 'fee', max: POLICY_MONEY_MINOR_MAX },
    description: 'Fee of a card transfer within thirty minutes; null: not offered.',
  },
  feeCardNextDayMinor: {
    name: 'fee_card_next_day_minor',
    kind: { type: 'fee', max: POLICY_MONEY_MINOR_MAX },
    description: 'Fee of a card transfer on the next business day; null: not offered.',
  },
  feeBankInstantMinor: {
    name: 'fee_bank_instant_minor',
    kind: { type: 'fee', max: POLICY_MONEY_MINOR_MAX },
    description: 'Fee of a bank transfer within thirty minutes; null: not offered.',
  },
  feeBankNextDayMinor: {
    name: 'fee_bank_next_day_minor',
    kind: { type: 'fee', max: POLICY_MONEY_MINOR_MAX },
    description: 'Fee of a bank transfer on the next business day; null: not offered.',
  },
  overpaymentDefaultResolution: {
    name: 'overpayment_default_resolution',
    kind: { type: 'enum', values: OVERPAYMENT_POLICY_RESOLUTIONS },
    description:
      'How a new overpayment is recovered unless the worker chose: NONE (the worker must choose), NEXT_PAYCHECK, or INSTALLMENTS.',
  },
  overpaymentInstallments: {
    name: 'overpayment_installments',
    kind: { type: 'integer', min: 1, max: OVERPAYMENT_INSTALLMENTS_MAX },
    description:
      'Paychecks an overpayment is spread over when the default resolution is INSTALLMENTS; 1 is all from the next paycheck, the overpayment recorded as NEXT_PAYCHECK.',
  },
  overpaymentWriteOffAfterPeriods: {
    name: 'overpayment_write_off_after_periods',
    kind: { type: 'integer', min: 1, max: 52 },
    description: 'Paydays of the job after which what is left of an overpayment is written off.',
  },
  overpaymentWriteOffDelinquent: {
    name: 'overpayment_write_off_delinquent',
    kind: { type: 'boolean' },
    description: 'True: a write-off makes the worker DELINQUENT (transfers disabled).',
  },
  paydayPayout: {
    name: 'payday_payout',
    kind: { type: 'enum', values: PAYDAY_PAYOUTS },
    description:
      'Who pays net pay on payday: PROVIDER (this server, through the rail) or EMPLOYER (the employer runs payroll, ' +
      'pays its workers and remits the deductions of the remittance report).',
  },
};

export const POLICY_KEYS = Object.keys(POLICY_FIELDS) as PolicyKey[];
const FEE_KEYS = POLICY_KEYS.filter((key) => POLICY_FIELDS[key].kind.type === 'fee');

let currencies: Set<string> | undefined;
let timeZones: Set<string> | undefined;

/** Canonical IANA names only: an offset such as +05:30 means the opposite in PostgreSQL's AT TIME ZONE. */
function isIanaTimeZone(value: string): boolean {
  timeZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  return timeZones.has(value);
}

export function isCurrency(value: string): boolean {
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return /^[A-Z]{3}$/.test(value) && currencies.has(value);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Checks one value against its field; returns it in its stored form or throws an InputError naming the field. */
export function checkPolicyValue<K extends PolicyKey>(key: K, value: unknown): OrganizationPolicy[K] {
  const { name, kind } = POLICY_FIELDS[key];
  const fail = (what: string): never => {
    throw new InputError(`${name} must be ${what} (got ${shown(value)}).`, { field: name });
  };
  switch (kind.type) {
    case 'currency':
      if (typeof value !== 'string' || !isCurrency(value)) fail('an ISO 4217 currency code such as USD');
      break;
    case 'time-zone':
      if (typeof value !== 'string' || !isIanaTimeZone(value))
        fail('an IANA time zone name such as America/New_York');
      break;
    case 'enum':
      if (typeof value !== 'string' || !kind.values.includes(value)) fail(`one of ${kind.values.join(', ')}`);
      break;
    case 'date': {
      const year = typeof value === 'string' ? Number(value.slice(0, 4)) : Number.NaN;
      if (
        typeof value !== 'string' ||
        !isCalendarDay(value) ||
        year < ANCHOR_YEARS.min ||
        year > ANCHOR_YEARS.max
      ) {
        fail(`a calendar date YYYY-MM-DD from ${ANCHOR_YEARS.min} to ${ANCHOR_YEARS.max}`);
      }
      break;
    }
    case 'integer':
      if (!Number.isSafeInteger(value) || (value as number) < kind.min || (value as number) > kind.max)
        fail(`a whole number from ${kind.min} to ${kind.max}`);
      break;
    case 'fee':
      if (
        value !== null &&
        (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > kind.max)
      )
        fail(`null (not offered) or a whole number of minor units from 0 to ${kind.max}`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      break;
  }
  return value as OrganizationPolicy[K];
}

/**
 * Applies a partial change to a policy: every given value is checked, then the rules between fields. Unknown keys
 * are refused by name, so that a misspelt field is never silently ignored.
 */
export function applyPolicyChange(current: OrganizationPolicy, change: PolicyChange): OrganizationPolicy {
  const next = { ...current } as Record<PolicyKey, unknown>;
  for (const [key, value] of Object.entries(change)) {
    if (!Object.hasOwn(POLICY_FIELDS, key)) {
      throw new InputError(`${key} is not a policy field.`, { field: key });
    }
    if (value === undefined) continue;
    next[key as PolicyKey] = checkPolicyValue(key as PolicyKey, value);
  }
  const policy = next as unknown as OrganizationPolicy;
  if (policy.minimumTransferMinor > policy.maximumTransferMinor) {
    const field = 'minimumTransferMinor' in change ? 'minimum_transfer_minor' : 'maximum_transfer_minor';
    throw new InputError(
      `minimum_transfer_minor (${policy.minimumTransferMinor}) must not be above maximum_transfer_minor (${policy.maximumTransferMinor}).`,
      { field },
    );
  }
  for (const key of FEE_KEYS) {
    const fee = policy[key] as number | null;
    if (fee !== null && fee > policy.maximumFeeMinor) {
      const field = key in change ? POLICY_FIELDS[key].name : 'maximum_fee_minor';
      throw new InputError(
        `${POLICY_FIELDS[key].name} (${fee}) must not be above maximum_fee_minor (${policy.maximumFeeMinor}); ` +
          'a fee above the maximum could never be charged.',
        { field },
      );
    }
  }
  return policy;
}

/** The policy as the admin API and `--json` show it: every field under its wire name. */
export function policyAttributes(
  policy: OrganizationPolicy,
): Record<string, string | number | boolean | null> {
  return Object.fromEntries(POLICY_KEYS.map((key) => [POLICY_FIELDS[key].name, policy[key]]));
}
