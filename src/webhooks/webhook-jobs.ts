import type { Config } from '../config.ts';
import { everyMinutesRunKey, type ScheduledJob } from '../jobs/scheduler.ts';
import type { Webhooks } from './webhooks.ts';

const DAY_MS = 86_400_000;

/** Events and their delivery log are kept EWA_WEBHOOK_RETENTION_DAYS for redelivery, then purged hourly. */
export function webhookJobs(webhooks: Webhooks, config: Config): ScheduledJob[] {
  return [
    {
      name: 'webhook-retention',
      runKeyAt: (now) => everyMinutesRunKey(now, 60),
      intervalSeconds: 3600,
      run: async ({ now }) => ({
        purged: await webhooks.events.purgeBefore(
          new Date(now.getTime() - config.webhooks.retentionDays * DAY_MS),
        ),
      }),
    },
  ];
}
