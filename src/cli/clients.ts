import type { Db } from '../db/database.ts';
import { AppError } from '../errors/app-error.ts';
import {
  CLIENT_AUTH_METHODS,
  type ClientAuthMethod,
  changeClientOrganizations,
  createClient,
  deleteClient,
  findClient,
  listClients,
  type OAuthClient,
  rotateClientSecret,
} from '../oauth/clients.ts';
import { type Command, type Flags, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

function describe(client: OAuthClient): string {
  return [
    `client_id      ${client.clientId}`,
    `name           ${client.name}`,
    `type           ${client.isPublic ? 'public (PKCE, no secret)' : `confidential (${client.authMethod})`}`,
    `scopes         ${client.scopes.join(' ')}`,
    `redirect URIs  ${client.redirectUris.join(' ') || '-'}`,
    `organizations  ${client.organizationIds.join(' ') || '-'}`,
    ...(client.partner ? [`partner        ${client.partner}`] : []),
    ...(client.logoUri ? [`logo           ${client.logoUri}`] : []),
    ...(client.policyUri ? [`policy         ${client.policyUri}`] : []),
    ...(client.tosUri ? [`terms          ${client.tosUri}`] : []),
    ...(client.jwksUri ? [`jwks_uri       ${client.jwksUri}`] : []),
    `created        ${client.createdAt.toISOString()}`,
  ].join('\n');
}

const toJson = (client: OAuthClient) => ({
  client_id: client.clientId,
  name: client.name,
  public: client.isPublic,
  scopes: client.scopes,
  redirect_uris: client.redirectUris,
  organizations: client.organizationIds,
  partner: client.partner,
  logo_uri: client.logoUri,
  policy_uri: client.policyUri,
  tos_uri: client.tosUri,
  jwks_uri: client.jwksUri,
  token_endpoint_auth_method: client.authMethod,
  created_at: client.createdAt.toISOString(),
});

const list = (value: Flags[string]) =>
  Array.isArray(value) ? value : value === undefined ? [] : [String(value)];
const optional = (value: Flags[string]) => (value === undefined ? undefined : String(value));

/** `--organizations "ID ID"` (spaces or commas between), each a UUID. */
function organizationIdsOf(flags: Flags): string[] {
  return String(flags.organizations ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((id) => uuidValue('--organizations', id));
}

function clientIdOf(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one client id.');
  return positionals[0]!;
}

/** The client named, or RECORD_NOT_FOUND (exit 1). */
async function existingClient(db: Db, clientId: string): Promise<OAuthClient> {
  const client = await findClient(db, clientId);
  if (!client) throw new AppError('RECORD_NOT_FOUND', { detail: `No client ${clientId.slice(0, 64)}.` });
  return client;
}

const create: Command = {
  name: 'clients create',
  summary: 'Register a partner application; prints its client_id and secret once',
  help: [
    'Usage: ewa clients create --name NAME (--public | --confidential) --scopes "SCOPE ..."',
    '         [--redirect-uri URI ...] [--organizations "ID ..."] [--partner NAME] [--logo-uri URI]',
    '         [--policy-uri URI] [--tos-uri URI] [--jwks-uri URI | --jwks JSON] [--auth-method METHOD] [--json]',
    '',
    'Scopes: openid profile email offline_access user:read user:read_write (people sign in), and for confidential',
    'clients client:lookup client:admin health:read (client_credentials). A client token sees only --organizations.',
    'admin:operator (client_credentials) opens the operator API (/admin) on every organization: give it only to',
    "the operator's own client.",
    'The secret is printed once; only its hash is stored (ewa clients rotate-secret makes a new one).',
    "--partner names the partner whose app this is: a partner's clients (say its mobile app and its server) share",
    "what a worker allowed any of them, so the server's webhook endpoint gets that worker's transfers.",
    '--auth-method: client_secret_basic (default; client_secret_post works too), client_secret_post, or',
    'private_key_jwt (with --jwks-uri or --jwks, whose keys also verify signed request objects).',
  ].join('\n'),
  options: {
    name: { type: 'string' },
    public: { type: 'boolean' },
    confidential: { type: 'boolean' },
    scopes: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    organizations: { type: 'string' },
    partner: { type: 'string' },
    'logo-uri': { type: 'string' },
    'policy-uri': { type: 'string' },
    'tos-uri': { type: 'string' },
    'jwks-uri': { type: 'string' },
    jwks: { type: 'string' },
    'auth-method': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const authMethod = optional(flags['auth-method']);
    if (authMethod !== undefined && !(CLIENT_AUTH_METHODS as readonly string[]).includes(authMethod)) {
      throw new UsageError(`--auth-method must be one of ${CLIENT_AUTH_METHODS.join(', ')}.`);
    }
    let jwks: { keys: unknown[] } | undefined;
    if (typeof flags.jwks === 'string') {
      try {
        jwks = JSON.parse(flags.jwks);
      } catch {
        throw new UsageError('--jwks must be JSON: {"keys": [ ... ]}.');
      }
    }
    if (flags.public === flags.confidential)
      throw new UsageError('give exactly one of --public and --confidential.');
    const { name, scopes } = flags;
    if (typeof name !== 'string') throw new UsageError('--name is required.');
    if (typeof scopes !== 'string') throw new UsageError('--scopes is required.');
    const organizationIds = organizationIdsOf(flags);
    return withMigratedDatabase(context, async ({ config, database }) => {
      const { client, secret } = await createClient(
        database.db,
        {
          name,
          isPublic: flags.public === true,
          scopes: scopes.split(/[\s,]+/).filter(Boolean),
          redirectUris: list(flags['redirect-uri']),
          organizationIds,
          partner: optional(flags.partner),
          logoUri: optional(flags['logo-uri']),
          policyUri: optional(flags['policy-uri']),
          tosUri: optional(flags['tos-uri']),
          jwksUri: optional(flags['jwks-uri']),
          jwks,
          authMethod: authMethod as ClientAuthMethod | undefined,
        },
        { sandbox: config.env === 'uat' },
      );
      if (flags.json) writeLine(context.stdout, JSON.stringify({ ...toJson(client), client_secret: secret }));
      else {
        writeLine(context.stdout, describe(client));
        if (secret)
          writeLine(
            context.stdout,
            `client_secret  ${secret}\n\nKeep the secret now: it is not stored and cannot be shown again.`,
          );
      }
      return 0;
    });
  },
};

const listCommand: Command = {
  name: 'clients list',
  summary: 'List registered partner applications',
  help: 'Usage: ewa clients list [--json]',
  options: { json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    return withMigratedDatabase(context, async ({ database }) => {
      const clients = await listClients(database.db);
      if (flags.json) writeLine(context.stdout, JSON.stringify(clients.map(toJson)));
      else if (clients.length === 0)
        writeLine(context.stdout, 'No clients. Register one with `ewa clients create`.');
      else {
        for (const client of clients) {
          writeLine(
            context.stdout,
            `${client.clientId}  ${client.isPublic ? 'public      ' : 'confidential'}  ${client.name}  [${client.scopes.join(' ')}]`,
          );
        }
      }
      return 0;
    });
  },
};

const show: Command = {
  name: 'clients show',
  summary: 'Show one partner application',
  help: 'Usage: ewa clients show CLIENT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const clientId = clientIdOf(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      const client = await existingClient(database.db, clientId);
      writeLine(context.stdout, flags.json ? JSON.stringify(toJson(client)) : describe(client));
      return 0;
    });
  },
};

const rotateSecret: Command = {
  name: 'clients rotate-secret',
  summary: 'Give a confidential client a new secret (the old one stops working within two seconds)',
  help: 'Usage: ewa clients rotate-secret CLIENT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const clientId = clientIdOf(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      const secret = await rotateClientSecret(database.db, clientId);
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({ client_id: clientId, client_secret: secret })
          : `client_secret  ${secret}`,
      );
      return 0;
    });
  },
};

const remove: Command = {
  name: 'clients delete',
  summary: 'Delete a partner application and revoke every token issued to it',
  help: 'Usage: ewa clients delete CLIENT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const clientId = clientIdOf(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      await deleteClient(database.db, clientId, new Date());
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({ deleted: clientId })
          : `Deleted ${clientId}; its tokens no longer work.`,
      );
      return 0;
    });
  },
};

/** `clients link` and `clients unlink`: the same command but for the way the links change. */
function linkCommand(way: 'link' | 'unlink'): Command {
  const linking = way === 'link';
  return {
    name: `clients ${way}`,
    summary: linking
      ? 'Link a partner application to employers: its client tokens and webhooks see them'
      : 'Unlink a partner application from employers: its client tokens and webhooks no longer see them',
    help: [
      `Usage: ewa clients ${way} CLIENT_ID --organizations "ID ..." [--json]`,
      '',
      linking
        ? 'Its client tokens see the people with a job at a linked organization, their jobs and earnings balances, and its'
        : 'At once its client tokens no longer see those organizations, their people, jobs and earnings balances, and its',
      linking
        ? 'webhook endpoints receive their events, from now on. Linking one already linked changes nothing.'
        : 'webhook endpoints receive none of their new events (deliveries already queued are sent). Unlinking one that is',
      ...(linking ? [] : ['not linked changes nothing.']),
      'Prints the client as it is after.',
    ].join('\n'),
    options: { organizations: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    async run(flags, positionals, context) {
      const clientId = clientIdOf(positionals);
      const organizationIds = organizationIdsOf(flags);
      if (organizationIds.length === 0)
        throw new UsageError(`name the organizations to ${way} with --organizations "ID ...".`);
      return withMigratedDatabase(context, async ({ database }) => {
        const client = await changeClientOrganizations(database.db, clientId, { [way]: organizationIds });
        writeLine(context.stdout, flags.json ? JSON.stringify(toJson(client)) : describe(client));
        return 0;
      });
    },
  };
}

export const clientCommands: Command[] = [
  create,
  listCommand,
  show,
  linkCommand('link'),
  linkCommand('unlink'),
  rotateSecret,
  remove,
];
