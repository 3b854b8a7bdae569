import { sql } from 'kysely';
import type { Tx } from '../db/transaction.ts';

/** A job as a roster import reads and writes it. */
export interface RosterJob {
  id: string;
  personId: string;
  primaryIdentifier: string;
  employeeId: string | null;
  group: string | null;
  firstName: string;
  lastName: string;
  location: string | null;
  title: string | null;
  department: string | null;
  activationStatus: string;
  wageRateMinor: number;
  wageFrequency: string;
  earningsBalanceAccountId: string | null;
  /** The row as read; compared again under lock before the row is changed. Empty for a job not yet written. */
  version: string;
}

/** A person as a roster import reads and writes them. */
export interface RosterPerson {
  id: string;
  email: string | null;
  firstName: string;
  lastName: string;
  stateOfResidence: string | null;
  version: string;
}

interface JobRow {
  id: string;
  person_id: string;
  external_primary_identifier: string;
  external_employee_id: string | null;
  external_group: string | null;
  first_name: string;
  last_name: string;
  location: string | null;
  title: string | null;
  department: string | null;
  activation_status: string;
  wage_rate_minor: number;
  wage_frequency: string;
  earnings_balance_account_id: string | null;
  updated_at: string;
}

interface PersonRow {
  id: string;
  email: string | null;
  first_name: string;
  last_name: string;
  state_of_residence: string | null;
  updated_at: string;
}

type Fragment = ReturnType<typeof sql>;

// A version is the whole row as read: the check does not depend on every writer moving updated_at.
function toJob(row: JobRow): RosterJob {
  return {
    id: row.id,
    personId: row.person_id,
    primaryIdentifier: row.external_primary_identifier,
    employeeId: row.external_employee_id,
    group: row.external_group,
    firstName: row.first_name,
    lastName: row.last_name,
    location: row.location,
    title: row.title,
    department: row.department,
    activationStatus: row.activation_status,
    wageRateMinor: row.wage_rate_minor,
    wageFrequency: row.wage_frequency,
    earningsBalanceAccountId: row.earnings_balance_account_id,
    version: JSON.stringify(row),
  };
}

function toPerson(row: PersonRow): RosterPerson {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    stateOfResidence: row.state_of_residence,
    version: JSON.stringify(row),
  };
}

async function selectJobs(tx: Tx, where: Fragment, lock: Fragment = sql``): Promise<RosterJob[]> {
  const { rows } = await sql<JobRow>`select id, person_id, external_primary_identifier, external_employee_id,
      external_group, first_name, last_name, location, title, department, activation_status, wage_rate_minor,
      wage_frequency, earnings_balance_account_id, updated_at::text as updated_at
    from jobs where ${where} ${lock}`.execute(tx);
  return rows.map(toJob);
}

async function selectPeople(tx: Tx, where: Fragment, lock: Fragment = sql``): Promise<RosterPerson[]> {
  const { rows } = await sql<PersonRow>`select id, email, first_name, last_name, state_of_residence,
      updated_at::text as updated_at
    from people where ${where} ${lock}`.execute(tx);
  return rows.map(toPerson);
}

/**
 * Locks the organization against other imports and policy changes for the rest of the transaction (NO KEY
 * UPDATE: inserting jobs that reference it stays possible), and reads what a batch needs of it.
 */
export async function lockOrganizationForImport(
  tx: Tx,
  organizationId: string,
): Promise<{ currency: string; products: string[] } | undefined> {
  const { rows } = await sql<{ currency: string | null; products: string[] }>`select p.currency, o.products
    from organizations o left join organization_policies p on p.organization_id = o.id
    where o.id = ${organizationId}
    for no key update of o`.execute(tx);
  const row = rows[0];
  return row && { currency: (row.currency ?? 'USD').trim(), products: row.products };
}

export function findJobsByIdentifiers(
  tx: Tx,
  organizationId: string,
  identifiers: readonly string[],
): Promise<RosterJob[]> {
  return selectJobs(
    tx,
    sql`organization_id = ${organizationId} and external_primary_identifier = any(${[...identifiers]}::text[])`,
  );
}

export function findPeopleByIdOrEmail(
  tx: Tx,
  ids: readonly string[],
  emails: readonly string[],
): Promise<RosterPerson[]> {
  return selectPeople(tx, sql`id = any(${[...ids]}::uuid[]) or email = any(${[...emails]}::text[])`);
}

/** Of these people, those with a job at another organization than this one. */
export async function findPeopleWorkingElsewhere(
  tx: Tx,
  personIds: readonly string[],
  organizationId: string,
): Promise<Set<string>> {
  const { rows } = await sql<{ person_id: string }>`select distinct person_id from jobs
    where person_id = any(${[...personIds]}::uuid[]) and organization_id <> ${organizationId}`.execute(tx);
  return new Set(rows.map((row) => row.person_id));
}

export function lockJobs(tx: Tx, ids: readonly string[]): Promise<RosterJob[]> {
  return selectJobs(tx, sql`id = any(${[...ids]}::uuid[])`, sql`for update`);
}

/** Locks people in id order, as every money transaction does (`db/lock-order.ts`), so the two cannot deadlock. */
export function lockPeople(tx: Tx, ids: readonly string[]): Promise<RosterPerson[]> {
  return selectPeople(tx, sql`id = any(${[...ids]}::uuid[])`, sql`order by id for update`);
}

const column = <T, K extends keyof T>(items: readonly T[], key: K) => items.map((item) => item[key]);

// Every write below is one statement over unnest() of one array per column, whatever the number of rows.

export async function updatePeople(tx: Tx, people: readonly RosterPerson[]): Promise<void> {
  if (people.length === 0) return;
  await sql`update people p set email = u.email, first_name = u.first_name, last_name = u.last_name,
      state_of_residence = u.state_of_residence,
      -- A state the roster changes is the employer's record; one it leaves as it was keeps its source.
      state_of_residence_source = case when p.state_of_residence is distinct from u.state_of_residence
        then case when u.state_of_residence is null then null else 'EMPLOYER_RECORD' end
        else p.state_of_residence_source end,
      updated_at = now()
    from unnest(${column(people, 'id')}::uuid[], ${column(people, 'email')}::text[],
      ${column(people, 'firstName')}::text[], ${column(people, 'lastName')}::text[],
      ${column(people, 'stateOfResidence')}::text[])
      as u(id, email, first_name, last_name, state_of_residence)
    where p.id = u.id`.execute(tx);
}

export async function insertPeople(tx: Tx, people: readonly RosterPerson[]): Promise<void> {
  if (people.length === 0) return;
  await sql`insert into people (id, email, first_name, last_name, state_of_residence, state_of_residence_source)
    select u.*, case when u.state_of_residence is null then null else 'EMPLOYER_RECORD' end
    from unnest(${column(people, 'id')}::uuid[], ${column(people, 'email')}::text[],
      ${column(people, 'firstName')}::text[], ${column(people, 'lastName')}::text[],
      ${column(people, 'stateOfResidence')}::text[]) as u(id, email, first_name, last_name, state_of_residence)`.execute(
    tx,
  );
}

export async function insertJobs(
  tx: Tx,
  organization: { id: string; currency: string },
  jobs: readonly RosterJob[],
): Promise<void> {
  if (jobs.length === 0) return;
  await sql`insert into jobs (id, person_id, organization_id, external_primary_identifier, external_employee_id,
      external_group, first_name, last_name, location, title, department, activation_status, wage_rate_minor,
      wage_currency, wage_frequency, earnings_balance_account_id)
    select u.id, u.person_id, ${organization.id}, u.primary_identifier, u.employee_id, u.grp, u.first_name,
      u.last_name, u.location, u.title, u.department, u.activation_status, u.wage_rate_minor,
      ${organization.currency}, u.wage_frequency, u.account_id
    from unnest(${column(jobs, 'id')}::uuid[], ${column(jobs, 'personId')}::uuid[],
      ${column(jobs, 'primaryIdentifier')}::text[], ${column(jobs, 'employeeId')}::text[],
      ${column(jobs, 'group')}::text[], ${column(jobs, 'firstName')}::text[], ${column(jobs, 'lastName')}::text[],
      ${column(jobs, 'location')}::text[], ${column(jobs, 'title')}::text[], ${column(jobs, 'department')}::text[],
      ${column(jobs, 'activationStatus')}::text[], ${column(jobs, 'wageRateMinor')}::bigint[],
      ${column(jobs, 'wageFrequency')}::text[], ${column(jobs, 'earningsBalanceAccountId')}::uuid[])
      as u(id, person_id, primary_identifier, employee_id, grp, first_name, last_name, location, title,
        department, activation_status, wage_rate_minor, wage_frequency, account_id)`.execute(tx);
}

export async function updateJobs(tx: Tx, jobs: readonly RosterJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await sql`update jobs j set external_employee_id = u.employee_id, external_group = u.grp,
      first_name = u.first_name, last_name = u.last_name, location = u.location, title = u.title,
      department = u.department, activation_status = u.activation_status, wage_rate_minor = u.wage_rate_minor,
      wage_frequency = u.wage_frequency, updated_at = now()
    from unnest(${column(jobs, 'id')}::uuid[], ${column(jobs, 'employeeId')}::text[],
      ${column(jobs, 'group')}::text[], ${column(jobs, 'firstName')}::text[], ${column(jobs, 'lastName')}::text[],
      ${column(jobs, 'location')}::text[], ${column(jobs, 'title')}::text[], ${column(jobs, 'department')}::text[],
      ${column(jobs, 'activationStatus')}::text[], ${column(jobs, 'wageRateMinor')}::bigint[],
      ${column(jobs, 'wageFrequency')}::text[])
      as u(id, employee_id, grp, first_name, last_name, location, title, department, activation_status,
        wage_rate_minor, wage_frequency)
    where j.id = u.id`.execute(tx);
}
