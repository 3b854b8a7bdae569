import type { Config } from '../config.ts';
import type { MoneyCore } from '../money/money-core.ts';
import { DEMO, demoHistoryJob } from '../seed/demo.ts';
import { demoShiftsJob } from '../seed/demo-shifts.ts';
import { moneyJobs } from './money-jobs.ts';
import type { ScheduledJob } from './scheduler.ts';

/**
 * Every job a server's scheduler runs, in the order each tick runs them. `ewa serve` registers this list and the
 * sandbox clock's advance runs it, so that moving the sandbox's time does what living through it does. With the demo
 * data (EWA_SEED_DEMO), the demo's hourly workers' shifts come after salary accrual and before payroll, so that a
 * day's shift is on its paycheck before the period closes; last, the demo history's catch-up.
 */
export function serverJobs(core: MoneyCore, config: Config): ScheduledJob[] {
  const jobs = moneyJobs(core, config);
  if (!config.seedDemoData) return jobs;
  const payroll = jobs.findIndex((job) => job.name === 'payroll');
  const demoOrganizations = Object.values(DEMO.organizations).map((organization) => organization.id);
  return [
    ...jobs.slice(0, payroll),
    demoShiftsJob(core, demoOrganizations),
    ...jobs.slice(payroll),
    demoHistoryJob(core.db, config),
  ];
}
