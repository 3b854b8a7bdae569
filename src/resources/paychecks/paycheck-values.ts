/** The states of a paycheck, in the order it passes through them (the published description's enumeration). */
export const PAYCHECK_STATUSES = ['ESTIMATED', 'PROCESSING', 'IN_TRANSIT', 'DEPOSITED'] as const;

/** The timestamps a paycheck list can be bounded by, each with `__gte` and `__lt`. */
export const PAYCHECK_DATE_FIELDS = [
  'deposit_expected_at',
  'pay_period_ends_at',
  'pay_period_starts_at',
] as const;
