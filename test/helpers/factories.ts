import { randomUUID } from 'node:crypto';
import type { TestApp } from './build-test-app.ts';
import { clientToken, createTestClient, userToken } from './tokens.ts';

/** An employer with its policy (DESIGN §4 defaults unless overridden). */
export async function createOrganization(
  app: TestApp,
  options: { name?: string; policy?: Record<string, unknown> } = {},
): Promise<string> {
  const id = randomUUID();
  const { db } = app.database;
  await db
    .insertInto('organizations')
    .values({ id, name: options.name ?? `Employer ${id.slice(0, 8)}` })
    .execute();
  await db
    .insertInto('organization_policies')
    .values({ organization_id: id, ...options.policy })
    .execute();
  return id;
}

export interface Worker {
  personId: string;
  jobId: string;
  balanceAccountId: string | null;
}

/**
 * A person with one job at the organization and, when the job is ACTIVATED, its earnings balance account, as the
 * roster import makes them.
 */
export async function createWorker(
  app: TestApp,
  organizationId: string,
  options: { activationStatus?: string; employeeId?: string; group?: string; personId?: string } = {},
): Promise<Worker> {
  const { db } = app.database;
  const personId = options.personId ?? randomUUID();
  if (!options.personId) {
    await db
      .insertInto('people')
      .values({ id: personId, email: `${personId}@people.example`, first_name: 'Robin', last_name: 'Lee' })
      .execute();
  }
  const activationStatus = options.activationStatus ?? 'ACTIVATED';
  const balanceAccountId = activationStatus === 'ACTIVATED' ? randomUUID() : null;
  if (balanceAccountId) {
    await db
      .insertInto('accounts')
      .values({
        id: balanceAccountId,
        person_id: personId,
        account_type: 'EARNINGS_BALANCE',
        subtype: 'ODP',
        name: 'Earnings balance',
        details: '{}',
      })
      .execute();
  }
  const jobId = randomUUID();
  await db
    .insertInto('jobs')
    .values({
      id: jobId,
      person_id: personId,
      organization_id: organizationId,
      external_primary_identifier: `P-${jobId.slice(0, 8)}`,
      external_employee_id: options.employeeId ?? `E-${jobId.slice(0, 6)}`,
      external_group: options.group ?? null,
      first_name: 'Robin',
      last_name: 'Lee',
      location: 'Main site',
      title: 'Associate',
      department: null,
      activation_status: activationStatus,
      wage_rate_minor: 2000,
      wage_frequency: 'HOURLY',
      earnings_balance_account_id: balanceAccountId,
    })
    .execute();
  return { personId, jobId, balanceAccountId };
}

/** A confidential client linked to these organizations, and a client token of it with these scopes. */
export async function linkedClientToken(app: TestApp, organizationIds: string[], scopes: string[]) {
  const client = await createTestClient(app, { organizationIds });
  return { client, token: await clientToken(app, scopes, client) };
}

/** The signed-in person's token (read and write), through the provider. */
export async function workerToken(app: TestApp, personId: string, scopes = ['user:read', 'user:read_write']) {
  return userToken(app, personId, scopes);
}

/** Requests against the REST listener with a bearer token and the JSON:API media type. */
export function restClient(app: TestApp, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' };
  return {
    get: (url: string) => app.api.inject({ method: 'GET', url, headers }),
    patch: (url: string, body: unknown) =>
      app.api.inject({ method: 'PATCH', url, headers, payload: JSON.stringify(body) }),
    post: (url: string, body: unknown) =>
      app.api.inject({ method: 'POST', url, headers, payload: JSON.stringify(body) }),
    delete: (url: string) =>
      app.api.inject({ method: 'DELETE', url, headers: { authorization: headers.authorization } }),
  };
}

/** The body of POST /rest/accounts for a bank account of the person; `overrides` and `details` replace members. */
export function bankAccountBody(
  personId: string,
  overrides: Record<string, unknown> = {},
  details: Record<string, unknown> = {},
) {
  return {
    data: {
      type: 'accounts',
      attributes: {
        name: 'Everyday checking',
        account_type: 'DEPOSITORY',
        subtype: 'CHECKING',
        details: {
          first_name: 'Robin',
          last_name: 'Lee',
          routing_number: '110000000',
          account_number: '000123456789',
          ...details,
        },
        ...overrides,
      },
      relationships: { person: { data: { type: 'people', id: personId } } },
    },
  };
}
