import type { Config } from '../config.ts';
import { everyMinutesRunKey, type ScheduledJob } from '../jobs/scheduler.ts';
import type { Webhooks } from './webhooks.ts';

const DAY_MS = 86_400_000;

/**
 * Events and their delivery log are kept EWA_WEBHOOK_RETENTION_DAYS for redelivery, then purged hourly.
 *
 * Events carry two clocks in the sandbox: a transfer's or paycheck's the sandbox's, an account's or job's the
 * database's own (real time). The retention counts from the earlier of the scheduler's now and `realNow`, so
 * that a sandbox clock moved ahead never purges an event younger than the retention on either clock.
 */
export function webhookJobs(
  webhooks: Webhooks,
  config: Config,
  realNow: () => Date = () => new Date(),
): ScheduledJob[] {
  return [
    {
      name: 'webhook-retention',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      intervalSeconds: 3600,
      run: async ({ now }) => ({
        purged: await webhooks.events.purgeBefore(
          retentionCutoff(now, realNow(), config.webhooks.retentionDays),
        ),
      }),
    },
  ];
}

/** The instant before which events are purged: `days` before the earlier of the two clocks. */
function retentionCutoff(now: Date, realNow: Date, days: number): Date {
  return new Date(Math.min(now.getTime(), realNow.getTime()) - days * DAY_MS);
}
