import { relationship, resourceObject } from '../../platform/serializer.ts';
import type { PaycheckRow } from './store.ts';

export function paycheckResource(baseUrl: string, row: PaycheckRow) {
  return resourceObject(
    baseUrl,
    'paychecks',
    row.id,
    {
      status: row.status,
      pay_period_starts_at: row.pay_period_starts_at.toISOString(),
      pay_period_ends_at: row.pay_period_ends_at.toISOString(),
      deposit_expected_at: row.deposit_expected_at.toISOString(),
      total_debited: row.total_debited_minor,
      gross_earnings: row.gross_earnings_minor,
      employer_withholdings: row.employer_withholdings_minor,
      net_earnings: row.net_earnings_minor,
      currency: row.currency.trim(),
    },
    {
      person: relationship('people', row.person_id),
      job: relationship('jobs', row.job_id),
    },
  );
}
