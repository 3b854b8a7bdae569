import type { Config } from '../config.ts';
import { purgeExpiredKeys } from '../idempotency/idempotency.ts';
import { refreshAccessibleEarnings } from '../money/earnings/accessible-refresh.ts';
import { accrueSalaries } from '../money/earnings/salary-accrual.ts';
import type { MoneyCore } from '../money/money-core.ts';
import { everyMinutesRunKey, type ScheduledJob } from './scheduler.ts';

/**
 * The scheduled money work. Each is safe to repeat (it does only what is left), so short run keys are fine: the
 * rail is asked every minute, salaries and payday every hour (each organization's local day turns at its own hour).
 */
export function moneyJobs(core: MoneyCore, _config: Config): ScheduledJob[] {
  return [
    {
      name: 'settle-due',
      runKeyAt: (now) => everyMinutesRunKey(now, 1),
      run: async ({ now }) => {
        const { sent, ...settled } = await core.settle(now);
        return { ...settled, ...sent };
      },
    },
    {
      name: 'ach-files',
      runKeyAt: (now) => (core.ach ? everyMinutesRunKey(now, 1) : undefined),
      run: ({ now }) => core.exchangeAchFiles(now),
    },
    {
      name: 'salary-accrual',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      run: async ({ now }) => ({
        ...(await accrueSalaries(core.db, core.earnings, now)),
        refreshedMinor: await refreshAccessibleEarnings(core.db, now),
      }),
    },
    {
      name: 'payroll',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      run: async ({ now }) => ({ ...(await core.payroll(now)) }),
    },
    {
      name: 'idempotency-key-purge',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      run: async ({ now }) => ({ purged: await purgeExpiredKeys(core.db, now) }),
    },
  ];
}
