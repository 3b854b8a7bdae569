import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { textProblem } from '../domain/input-text.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import {
  applyPolicyChange,
  type OrganizationPolicy,
  type PolicyChange,
  policyAttributes,
} from './organization-policy.ts';
import {
  findOrganizationById,
  findOrganizations,
  insertDefaultPolicy,
  insertOrganization,
  lockOrganization,
  type Organization,
  organizationHasJobs,
  updatePolicy,
} from './organization-store.ts';

export type { Organization } from './organization-store.ts';

/** The products this server runs; the migration's CHECK allows no other. */
export const PRODUCTS = ['ODP'] as const;
export const ORGANIZATION_NAME_LENGTH_MAX = 200;
export const ORGANIZATIONS_PAGE_MAX = 1_000;

export interface NewOrganization {
  name: unknown;
  products?: unknown;
  policy?: PolicyChange;
}

function checkName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed.length === 0 || trimmed.length > ORGANIZATION_NAME_LENGTH_MAX) {
    throw new InputError(`name must be 1 to ${ORGANIZATION_NAME_LENGTH_MAX} characters.`, { field: 'name' });
  }
  // The one rule for text from outside: `ewa orgs` reads names that never pass the HTTP edge.
  const problem = textProblem(trimmed);
  if (problem) throw new InputError(`name ${problem}`, { field: 'name' });
  return trimmed;
}

function checkProducts(products: unknown): string[] {
  if (!Array.isArray(products) || products.some((product) => typeof product !== 'string')) {
    throw new InputError(`products must be a list of product names (${PRODUCTS.join(', ')}).`, {
      field: 'products',
    });
  }
  for (const product of products as string[]) {
    if (!(PRODUCTS as readonly string[]).includes(product)) {
      throw new InputError(
        `products: ${JSON.stringify(product).slice(0, 40)} is not offered by this server; offered: ${PRODUCTS.join(', ')}.`,
        { field: 'products' },
      );
    }
  }
  return [...new Set(products as string[])];
}

/** The organization of an id given by an operator, or RECORD_NOT_FOUND naming it. */
export function notFound(id: string): AppError {
  return new AppError('RECORD_NOT_FOUND', { detail: `No organization ${id.slice(0, 64)}.` });
}

/** The organization's id as stored and its name, or RECORD_NOT_FOUND naming the id given. */
export async function namedOrganization(db: Db, id: string): Promise<{ id: string; name: string }> {
  if (!isUuid(id)) throw notFound(id);
  const organization = await db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!organization) throw notFound(id);
  return organization;
}

/**
 * Creates an employer with its policy: the migration's defaults (DESIGN §4), with `policy` applied over them and
 * checked as a whole, in one transaction.
 */
export async function createOrganization(db: Db, input: NewOrganization): Promise<Organization> {
  const name = checkName(input.name);
  const products = checkProducts(input.products ?? [...PRODUCTS]);
  const id = randomUUID();
  return withTransaction(db, async (tx) => {
    await insertOrganization(tx, { id, name, products });
    await insertDefaultPolicy(tx, id);
    const created = (await findOrganizationById(tx, id))!;
    if (input.policy && Object.keys(input.policy).length > 0) {
      await updatePolicy(tx, id, applyPolicyChange(created.policy!, input.policy));
    }
    return (await findOrganizationById(tx, id))!;
  });
}

export async function listOrganizations(
  db: Db,
  page: { offset?: number; limit?: number } = {},
): Promise<Organization[]> {
  const offset = page.offset ?? 0;
  const limit = page.limit ?? ORGANIZATIONS_PAGE_MAX;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new InputError('offset must be a whole number from 0.', { field: 'offset' });
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > ORGANIZATIONS_PAGE_MAX) {
    throw new InputError(`limit must be a whole number from 1 to ${ORGANIZATIONS_PAGE_MAX}.`, {
      field: 'limit',
    });
  }
  return findOrganizations(db, { offset, limit });
}

export async function findOrganization(db: Db, id: string): Promise<Organization> {
  const organization = isUuid(id) ? await findOrganizationById(db, id.toLowerCase()) : undefined;
  if (!organization) throw notFound(id);
  return organization;
}

/**
 * Changes some policy fields and keeps the others. The currency is fixed once the organization has jobs: their
 * wages, accounts and balances are in it, and converting money is not a policy change.
 */
export async function setOrganizationPolicy(db: Db, id: string, change: PolicyChange): Promise<Organization> {
  if (!isUuid(id)) throw notFound(id);
  const organizationId = id.toLowerCase();
  return withTransaction(db, async (tx) => {
    if (!(await lockOrganization(tx, organizationId))) throw notFound(id);
    await insertDefaultPolicy(tx, organizationId);
    const current = (await findOrganizationById(tx, organizationId))!.policy!;
    const next: OrganizationPolicy = applyPolicyChange(current, change);
    if (next.currency !== current.currency && (await organizationHasJobs(tx, organizationId))) {
      throw new InputRefusedError(
        `currency cannot change from ${current.currency} to ${next.currency}: the organization has jobs whose ` +
          'wages and balances are in its currency.',
        { field: 'currency' },
      );
    }
    await updatePolicy(tx, organizationId, next);
    return (await findOrganizationById(tx, organizationId))!;
  });
}

/** The organization as the admin API and `--json` show it. */
export function organizationAttributes(organization: Organization) {
  return {
    name: organization.name,
    products: organization.products,
    created_at: organization.createdAt.toISOString(),
    updated_at: organization.updatedAt.toISOString(),
    policy: organization.policy && policyAttributes(organization.policy),
  };
}
