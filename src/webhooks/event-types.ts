/** The events a webhook endpoint can receive, each with what it tells (the docs and the OpenAPI document show these). */
export const WEBHOOK_EVENT_TYPES = {
  'transfer.created':
    "A transfer was made: earnings credited to an earnings balance, or an advance (a paycheck's payout is told by paycheck.status_changed).",
  'transfer.settled': 'A transfer reached its destination.',
  'transfer.failed': 'A transfer failed, or came back after it settled (meta.failure_reason says why).',
  'paycheck.status_changed':
    'A paycheck moved on: ESTIMATED → PROCESSING → IN_TRANSIT → DEPOSITED (previous_status says from where).',
  'paycheck.payout_returned':
    'A paycheck’s payout came back from the worker’s bank (or the rail refused it): the money is owed to the worker again; its status stays as it was (payout_return_reason says why).',
  'earnings_balance.updated':
    'What is available in an earnings balance changed (earnings credited, an advance taken or returned, payday).',
  'account.created': 'An account was added: a bank account, a debit card, or an earnings balance.',
  'account.deleted': 'An account was deleted.',
  'job.updated': 'A job changed: its activation, direct deposit or what the employer knows of it.',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

/** Sent on request only (`ewa webhooks test`, the endpoint's test route), to that endpoint alone. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENT_TYPES, value);
}
