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
      intervalSeconds: 60,
      run: async ({ now }) => {
        const { sent, ...settled } = await core.settle(now);
        return { ...settled, ...sent };
      },
    },
    {
      name: 'ach-files',
      runKeyAt: (now) => (core.ach ? everyMinutesRunKey(now, 1) : undefined),
      intervalSeconds: 60,
      run: async ({ now }) => {
        const report = await core.exchangeAchFiles(now);
        const attention = achAttention(report);
        return attention ? { ...report, attention } : report;
      },
    },
    {
      name: 'salary-accrual',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      intervalSeconds: 3600,
      run: async ({ now }) => ({
        ...(await accrueSalaries(core.db, core.earnings, now)),
        refreshedMinor: await refreshAccessibleEarnings(core.db, now),
      }),
    },
    {
      name: 'payroll',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      intervalSeconds: 3600,
      run: async ({ now }) => ({ ...(await core.payroll(now)) }),
    },
    {
      name: 'idempotency-key-purge',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      intervalSeconds: 3600,
      run: async ({ now }) => ({ purged: await purgeExpiredKeys(core.db, now) }),
    },
  ];
}

/**
 * What an operator must look at after an ACH exchange: return files refused (their reason is in
 * `ach_return_files.error`, listed by `ewa ach returns`; delete that row to read the file again once fixed) and
 * returns that match none of our entries, or not their amount (nothing was applied for them; kept in
 * ach_unmatched_returns, listed by `ewa ach returns --unmatched`), and notifications of change, which nothing applies
 * (kept in ach_change_notifications, listed by `ewa ach returns --changes`).
 */
export function achAttention(report: Record<string, number>): string | undefined {
  const problems = [
    report.refused ? `${report.refused} return file(s) refused (see \`ewa ach returns\`)` : '',
    report.unmatched
      ? `${report.unmatched} return(s) matching no entry of ours and amount (not applied; see \`ewa ach returns --unmatched\`)`
      : '',
    report.notifications
      ? `${report.notifications} notification(s) of change (update those bank accounts by hand; see \`ewa ach returns --changes\`)`
      : '',
  ].filter(Boolean);
  return problems.length > 0 ? problems.join('; ') : undefined;
}
