import type { Paycheck } from '../../money/earnings/paychecks.ts';
import { relationship, resourceObject } from '../../platform/serializer.ts';

export function paycheckResource(baseUrl: string, paycheck: Paycheck) {
  return resourceObject(
    baseUrl,
    'paychecks',
    paycheck.id,
    {
      status: paycheck.status,
      pay_period_starts_at: paycheck.payPeriodStartsAt.toISOString(),
      pay_period_ends_at: paycheck.payPeriodEndsAt.toISOString(),
      deposit_expected_at: paycheck.depositExpectedAt.toISOString(),
      total_debited: paycheck.totalDebited.amountMinor,
      gross_earnings: paycheck.gross.amountMinor,
      employer_withholdings: paycheck.employerWithholdings.amountMinor,
      net_earnings: paycheck.net.amountMinor,
      currency: paycheck.gross.currency,
    },
    {
      person: relationship('people', paycheck.personId),
      job: relationship('jobs', paycheck.jobId),
    },
  );
}
