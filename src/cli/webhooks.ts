import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { parseInstant } from '../domain/date-text.ts';
import { AppError } from '../errors/app-error.ts';
import { configuredRails } from '../rails/configured-rails.ts';
import { deliveryAttributes, endpointAttributes } from '../resources/webhook-endpoints/serialize.ts';
import { EVENT_TYPE_NAMES } from '../webhooks/event-types.ts';
import { EndpointNotFound, type WebhookEndpoint } from '../webhooks/webhook-endpoints.ts';
import { DELIVERIES_LIST_MAX, type DeliveryAttempt } from '../webhooks/webhook-events.ts';
import { createWebhooks, type Webhooks } from '../webhooks/webhooks.ts';
import {
  type CliContext,
  type Command,
  type Flags,
  positiveInteger,
  UsageError,
  uuidValue,
  writeLine,
} from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

/** Runs `work` with the webhooks of this database; an endpoint that does not exist is a plain error (exit 1). */
function withWebhooks(
  context: CliContext,
  work: (webhooks: Webhooks, opened: { config: Config; database: Database }) => Promise<number>,
): Promise<number> {
  return withMigratedDatabase(context, async (opened) => {
    const line = (object: object, message?: string) =>
      writeLine(context.stderr, `${message ?? ''} ${JSON.stringify(object, errorsAsText)}`);
    const logger = { warn: line, error: line };
    const { db } = opened.database;
    // The rails decide whether an account event shows a state's free option, as they do in the server.
    const { destinations, instantDestinations } = configuredRails(
      opened.config,
      db,
      context.now ?? (() => new Date()),
    ).rail;
    const webhooks = createWebhooks(db, opened.config, {
      logger,
      now: context.now,
      ...(destinations ? { payable: destinations } : {}),
      instant: instantDestinations,
    });
    try {
      return await work(webhooks, opened);
    } catch (error) {
      // The operator sees every endpoint: the service's "visible to this caller" is for partners and /admin.
      if (error instanceof EndpointNotFound)
        throw new AppError('RECORD_NOT_FOUND', { detail: `No webhook endpoint ${error.endpointId}.` });
      throw error;
    }
  });
}

/** An error as JSON says what it was (JSON.stringify writes an Error as {}). */
const errorsAsText = (_key: string, value: unknown) =>
  value instanceof Error ? { type: value.name, message: value.message } : value;

const now = (context: CliContext) => (context.now ?? (() => new Date()))();

function endpointJson(endpoint: WebhookEndpoint) {
  return { id: endpoint.id, ...endpointAttributes(endpoint, { withClient: true }) };
}

function endpointLine(endpoint: WebhookEndpoint): string {
  const types = endpoint.eventTypes?.join(',') ?? 'all events';
  const status = endpoint.status === 'ENABLED' ? 'ENABLED' : `DISABLED (${endpoint.disabledReason})`;
  return `${endpoint.id}  ${endpoint.clientId}  ${status}  ${endpoint.url}  [${types}]`;
}

function attemptLine(attempt: DeliveryAttempt): string {
  const answer = attempt.statusCode === null ? '---' : String(attempt.statusCode);
  return [
    attempt.attemptedAt.toISOString(),
    attempt.outcome.padEnd(9),
    answer,
    `${attempt.durationMs} ms`.padStart(8),
    `#${attempt.attempt}`,
    attempt.eventType,
    attempt.eventId,
    `endpoint ${attempt.endpointId}`,
    attempt.error ?? '',
  ].join('  ');
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`name one ${what}.`);
  return uuidValue('ENDPOINT_ID', positionals[0]!);
}

/** An optional id flag: a UUID or nothing. */
function idFlag(flag: string, value: Flags[string]): string | undefined {
  return value === undefined ? undefined : uuidValue(`--${flag}`, String(value));
}

function instant(flag: string, value: Flags[string]): Date | undefined {
  if (value === undefined) return undefined;
  const date = parseInstant(String(value));
  if (!date)
    throw new UsageError(
      `--${flag} must be an instant with its offset, on the calendar, such as 2026-11-26T09:00:00Z (got "${String(value)}").`,
    );
  return date;
}

function eventTypes(value: Flags[string]): string[] | undefined {
  if (value === undefined) return undefined;
  return String(value)
    .split(',')
    .map((type) => type.trim())
    .filter(Boolean);
}

const EVENTS_HELP = `Events: ${EVENT_TYPE_NAMES.join(', ')}.`;

export const webhookCommands: Command[] = [
  {
    name: 'webhooks add',
    summary: "Register a URL to receive a client's events (prints its signing secret once)",
    help:
      'Usage: ewa webhooks add --client CLIENT_ID --url URL [--events TYPE,TYPE] [--description TEXT] [--json]\n\n' +
      'The endpoint receives what a token of the client could read: jobs and earnings balances of its\n' +
      "organizations, and a worker's transfers, paychecks and accounts once the worker signed in to one of the\n" +
      "partner's apps (ewa clients create --partner). Deliveries are signed by the Standard Webhooks scheme with\n" +
      'the secret printed here (whsec_…): it is not shown again. A running server sends them.\n' +
      EVENTS_HELP,
    options: {
      client: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(flags, _positionals, context) {
      if (typeof flags.client !== 'string') throw new UsageError('--client is required.');
      if (typeof flags.url !== 'string') throw new UsageError('--url is required.');
      return withWebhooks(context, async (webhooks) => {
        const { endpoint, secret } = await webhooks.endpoints.create(
          flags.client as string,
          {
            url: flags.url as string,
            description: flags.description as string | undefined,
            eventTypes: eventTypes(flags.events),
          },
          now(context),
        );
        writeLine(
          context.stdout,
          flags.json
            ? JSON.stringify({ ...endpointJson(endpoint), secret })
            : `${endpointLine(endpoint)}\nsecret  ${secret}  (shown once: give it to the receiver)`,
        );
        return 0;
      });
    },
  },
  {
    name: 'webhooks list',
    summary: 'List webhook endpoints (of one client, or all) with their status',
    help: 'Usage: ewa webhooks list [--client CLIENT_ID] [--json]\n\nA DISABLED endpoint says why.',
    options: { client: { type: 'string' }, json: { type: 'boolean' } },
    async run(flags, _positionals, context) {
      return withWebhooks(context, async (webhooks) => {
        const endpoints = await webhooks.endpoints.list(
          typeof flags.client === 'string' ? { clientId: flags.client } : 'operator',
        );
        if (flags.json) writeLine(context.stdout, JSON.stringify(endpoints.map(endpointJson)));
        else if (endpoints.length === 0) writeLine(context.stdout, 'No webhook endpoints.');
        else for (const endpoint of endpoints) writeLine(context.stdout, endpointLine(endpoint));
        return 0;
      });
    },
  },
  {
    name: 'webhooks remove',
    summary: 'Delete a webhook endpoint (deliveries queued for it are dropped)',
    help: 'Usage: ewa webhooks remove ENDPOINT_ID',
    options: {},
    allowPositionals: true,
    async run(_flags, positionals, context) {
      const id = one(positionals, 'endpoint id');
      return withWebhooks(context, async (webhooks) => {
        await webhooks.endpoints.remove('operator', id);
        writeLine(context.stdout, `Removed webhook endpoint ${id}.`);
        return 0;
      });
    },
  },
  ...(['enable', 'disable'] as const).map(
    (verb): Command => ({
      name: `webhooks ${verb}`,
      summary:
        verb === 'enable'
          ? 'Turn a disabled endpoint back on (then redeliver what it missed)'
          : 'Stop sending to an endpoint',
      help: `Usage: ewa webhooks ${verb} ENDPOINT_ID`,
      options: {},
      allowPositionals: true,
      async run(_flags, positionals, context) {
        const id = one(positionals, 'endpoint id');
        return withWebhooks(context, async (webhooks) => {
          const endpoint = await webhooks.endpoints.update(
            'operator',
            id,
            { enabled: verb === 'enable' },
            now(context),
          );
          writeLine(context.stdout, endpointLine(endpoint));
          return 0;
        });
      },
    }),
  ),
  {
    name: 'webhooks rotate-secret',
    summary: 'Give an endpoint a new signing secret; the old ones keep signing for the overlap',
    help:
      'Usage: ewa webhooks rotate-secret ENDPOINT_ID [--overlap-seconds N]\n\n' +
      'Deliveries carry a signature by every secret not yet expired; the previous secrets expire after\n' +
      '--overlap-seconds (86400, a day, by default; 0 at once).',
    options: { 'overlap-seconds': { type: 'string' } },
    allowPositionals: true,
    async run(flags, positionals, context) {
      const id = one(positionals, 'endpoint id');
      const overlap = flags['overlap-seconds'];
      const seconds =
        overlap === undefined
          ? undefined
          : overlap === '0'
            ? 0
            : positiveInteger('overlap-seconds', overlap, 604_800);
      return withWebhooks(context, async (webhooks) => {
        const { secret, previousExpireAt } = await webhooks.endpoints.rotateSecret(
          'operator',
          id,
          seconds,
          now(context),
        );
        writeLine(
          context.stdout,
          `secret  ${secret}  (shown once)\nprevious secrets sign until ${previousExpireAt.toISOString()}`,
        );
        return 0;
      });
    },
  },
  {
    name: 'webhooks test',
    summary: 'Send a webhook.test event to an endpoint now, and print how the receiver answered',
    help: 'Usage: ewa webhooks test ENDPOINT_ID\n\nExit code 1 when the receiver did not accept it (it is retried later).',
    options: {},
    allowPositionals: true,
    async run(_flags, positionals, context) {
      const id = one(positionals, 'endpoint id');
      return withWebhooks(context, async (webhooks) => {
        const at = now(context);
        const eventId = await webhooks.events.sendTest('operator', id, at);
        await webhooks.dispatcher.dispatchDue(at);
        const [attempt] = await webhooks.events.deliveries('operator', { endpointId: id, eventId, limit: 1 });
        if (!attempt) {
          writeLine(context.stdout, `Queued test event ${eventId}; another process is sending it.`);
          return 0;
        }
        writeLine(context.stdout, attemptLine(attempt));
        return attempt.outcome === 'DELIVERED' ? 0 : 1;
      });
    },
  },
  {
    name: 'webhooks deliveries',
    summary: 'The delivery log: each attempt, its status code, duration and outcome (latest first)',
    help:
      'Usage: ewa webhooks deliveries [--endpoint ENDPOINT_ID] [--event EVENT_ID] [--limit N] [--json]\n\n' +
      `At most ${DELIVERIES_LIST_MAX} attempts (100 by default).`,
    options: {
      endpoint: { type: 'string' },
      event: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(flags, _positionals, context) {
      const limit =
        flags.limit === undefined ? undefined : positiveInteger('limit', flags.limit, DELIVERIES_LIST_MAX);
      return withWebhooks(context, async (webhooks) => {
        const attempts = await webhooks.events.deliveries('operator', {
          endpointId: idFlag('endpoint', flags.endpoint),
          eventId: idFlag('event', flags.event),
          limit,
        });
        if (flags.json) {
          const shown = attempts.map((attempt) => ({ id: attempt.id, ...deliveryAttributes(attempt) }));
          writeLine(context.stdout, JSON.stringify(shown));
        } else if (attempts.length === 0) writeLine(context.stdout, 'No deliveries.');
        else for (const attempt of attempts) writeLine(context.stdout, attemptLine(attempt));
        return 0;
      });
    },
  },
  {
    name: 'webhooks redeliver',
    summary: 'Send again one event, or every event of a time range to one endpoint',
    help:
      'Usage: ewa webhooks redeliver --event EVENT_ID [--endpoint ENDPOINT_ID]\n' +
      '       ewa webhooks redeliver --endpoint ENDPOINT_ID --from INSTANT --to INSTANT\n\n' +
      'Queues the deliveries (the server sends them, oldest first, with their original webhook-id) and prints how\n' +
      'many. Only to enabled endpoints that still receive the event. Instants are ISO 8601 (2026-11-26T09:00:00Z).',
    options: {
      event: { type: 'string' },
      endpoint: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
    async run(flags, _positionals, context) {
      return withWebhooks(context, async (webhooks) => {
        const queued = await webhooks.events.redeliver(
          'operator',
          {
            eventId: idFlag('event', flags.event),
            endpointId: idFlag('endpoint', flags.endpoint),
            from: instant('from', flags.from),
            to: instant('to', flags.to),
          },
          now(context),
        );
        writeLine(context.stdout, `Queued ${queued} deliver${queued === 1 ? 'y' : 'ies'}.`);
        return 0;
      });
    },
  },
];
