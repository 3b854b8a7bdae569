/** The activation states of a job, as the published description lists them. */
export const ACTIVATION_STATUSES = [
  'ACTIVATED',
  'DEACTIVATED',
  'DEACTIVATION_PENDING',
  'ACTIVATION_REQUIRED',
  'ACTIVATION_UNDER_REVIEW',
] as const;

/** How often a job's wage rate is paid. */
export const WAGE_FREQUENCIES = [
  'HOURLY',
  'WEEKLY',
  'BIWEEKLY',
  'TWICE_MONTHLY',
  'MONTHLY',
  'ANNUALLY',
] as const;

export const DIRECT_DEPOSIT_STATUSES = ['SETUP_REQUIRED', 'SETUP_PENDING', 'SETUP_COMPLETE'] as const;
