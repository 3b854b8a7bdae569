import {
  type OrganizationPolicy,
  POLICY_FIELDS,
  POLICY_KEYS,
  type PolicyChange,
  policyAttributes,
} from '../operator/organization-policy.ts';
import {
  createOrganization,
  findOrganization,
  listOrganizations,
  ORGANIZATIONS_PAGE_MAX,
  type Organization,
  organizationAttributes,
  PRODUCTS,
  setOrganizationPolicy,
} from '../operator/organizations.ts';
import { type Command, type Flags, positiveInteger, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const flagOf = (key: keyof OrganizationPolicy) => POLICY_FIELDS[key].name.replaceAll('_', '-');

const POLICY_OPTIONS = Object.fromEntries(
  POLICY_KEYS.map((key) => [flagOf(key), { type: 'string' as const }]),
);

/** The longest field name sets the column, so that every value starts at the same place. */
const POLICY_NAME_WIDTH = Math.max(...POLICY_KEYS.map((key) => POLICY_FIELDS[key].name.length));

const POLICY_HELP = [
  'Policy flags (each optional; the field names of the admin API, with dashes):',
  // The admin API's null is `none` on the command line.
  ...POLICY_KEYS.map(
    (key) =>
      `  --${flagOf(key).padEnd(POLICY_NAME_WIDTH)} ${POLICY_FIELDS[key].description.replace('null: not offered', 'none: not offered')}`,
  ),
  'Money is in minor units (500 = $5.00); rates in basis points (5000 = 50 %); a fee of "none" is not offered.',
].join('\n');

/**
 * Flag text to the value the service checks. Text that is not of the field's form is passed on as it is, so that
 * the service's message names the field and shows what was given.
 */
function policyChangeOf(flags: Flags): PolicyChange {
  const change: Record<string, unknown> = {};
  for (const key of POLICY_KEYS) {
    const text = flags[flagOf(key)];
    if (typeof text !== 'string') continue;
    const { kind } = POLICY_FIELDS[key];
    if (kind.type === 'fee') change[key] = feeOf(flagOf(key), text, kind.max);
    else if (kind.type === 'integer' && /^\d{1,16}$/.test(text)) change[key] = Number(text);
    else if (kind.type === 'boolean' && (text === 'true' || text === 'false')) change[key] = text === 'true';
    else change[key] = text;
  }
  return change;
}

/** A fee flag's value: `none` (not offered; the API's null) or minor units, checked here to be told in the CLI's words. */
function feeOf(flag: string, text: string, max: number): number | null {
  if (text === 'none') return null;
  const minor = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(minor <= max))
    throw new UsageError(
      `--${flag} must be none (not offered) or a whole number of minor units from 0 to ${max} (got "${text.slice(0, 40)}").`,
    );
  return minor;
}

function organizationJson(organization: Organization) {
  return { id: organization.id, ...organizationAttributes(organization) };
}

function describe(organization: Organization): string {
  const lines = [
    `id        ${organization.id}`,
    `name      ${organization.name}`,
    `products  ${organization.products.join(' ') || '-'}`,
    `created   ${organization.createdAt.toISOString()}`,
  ];
  if (!organization.policy)
    return [...lines, 'policy    none yet (set-policy creates it with the defaults)'].join('\n');
  const policy = policyAttributes(organization.policy);
  return [
    ...lines,
    'policy',
    ...Object.entries(policy).map(
      ([name, value]) => `  ${name.padEnd(POLICY_NAME_WIDTH)} ${value === null ? 'not offered' : value}`,
    ),
  ].join('\n');
}

function organizationIdOf(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one organization id.');
  return uuidValue('ORGANIZATION_ID', positionals[0]!);
}

const create: Command = {
  name: 'orgs create',
  summary: 'Add an employer with its policy',
  help: [
    'Usage: ewa orgs create --name NAME [--products "ODP"] [policy flags] [--json]',
    '',
    `--products: the products it offers (${PRODUCTS.join(', ')}; the default). With ODP, each ACTIVATED job gets an`,
    'earnings balance account. Policy fields not given take the defaults (access rate 50 %, biweekly, …).',
    '',
    POLICY_HELP,
  ].join('\n'),
  options: {
    name: { type: 'string' },
    products: { type: 'string' },
    json: { type: 'boolean' },
    ...POLICY_OPTIONS,
  },
  async run(flags, _positionals, context) {
    if (typeof flags.name !== 'string') throw new UsageError('--name is required.');
    const products =
      typeof flags.products === 'string' ? flags.products.split(/[\s,]+/).filter(Boolean) : undefined;
    const policy = policyChangeOf(flags);
    return withMigratedDatabase(context, async ({ database }) => {
      const organization = await createOrganization(database.db, { name: flags.name, products, policy });
      writeLine(
        context.stdout,
        flags.json ? JSON.stringify(organizationJson(organization)) : describe(organization),
      );
      return 0;
    });
  },
};

const list: Command = {
  name: 'orgs list',
  summary: 'List employers by name',
  help: [
    `Usage: ewa orgs list [--offset N] [--limit N] [--json]`,
    '',
    `At most --limit organizations (1 to ${ORGANIZATIONS_PAGE_MAX}, the default), after skipping --offset.`,
  ].join('\n'),
  options: { offset: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const number = (flag: 'offset' | 'limit') => {
      const text = flags[flag];
      if (text === undefined) return undefined;
      if (flag === 'limit') return positiveInteger(flag, text, ORGANIZATIONS_PAGE_MAX);
      if (typeof text !== 'string' || !/^\d{1,9}$/.test(text)) {
        throw new UsageError(`--${flag} must be a whole number from 0 (got "${String(text).slice(0, 40)}").`);
      }
      return Number(text);
    };
    const page = { offset: number('offset'), limit: number('limit') };
    return withMigratedDatabase(context, async ({ database }) => {
      const organizations = await listOrganizations(database.db, page);
      if (flags.json) writeLine(context.stdout, JSON.stringify(organizations.map(organizationJson)));
      else if (organizations.length === 0)
        writeLine(context.stdout, 'No organizations. Add one with `ewa orgs create`.');
      else {
        for (const organization of organizations) {
          writeLine(
            context.stdout,
            `${organization.id}  ${organization.products.join(',') || '-'}  ${organization.name}`,
          );
        }
      }
      return 0;
    });
  },
};

const show: Command = {
  name: 'orgs show',
  summary: 'Show one employer and its policy',
  help: 'Usage: ewa orgs show ORGANIZATION_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = organizationIdOf(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      const organization = await findOrganization(database.db, id);
      writeLine(
        context.stdout,
        flags.json ? JSON.stringify(organizationJson(organization)) : describe(organization),
      );
      return 0;
    });
  },
};

const setPolicy: Command = {
  name: 'orgs set-policy',
  summary: "Change some of an employer's policy fields",
  help: [
    'Usage: ewa orgs set-policy ORGANIZATION_ID [policy flags] [--json]',
    '',
    'Fields not given keep their values. The currency is fixed once the organization has jobs.',
    '',
    POLICY_HELP,
  ].join('\n'),
  options: { json: { type: 'boolean' }, ...POLICY_OPTIONS },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = organizationIdOf(positionals);
    const change = policyChangeOf(flags);
    if (Object.keys(change).length === 0) throw new UsageError('give at least one policy flag to change.');
    return withMigratedDatabase(context, async ({ database }) => {
      const organization = await setOrganizationPolicy(database.db, id, change);
      writeLine(
        context.stdout,
        flags.json ? JSON.stringify(organizationJson(organization)) : describe(organization),
      );
      return 0;
    });
  },
};

export const organizationCommands: Command[] = [create, list, show, setPolicy];
