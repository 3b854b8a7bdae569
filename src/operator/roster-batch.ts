import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/transaction.ts';
import {
  ensureEarningsBalanceAccounts,
  insertEarningsBalanceAccounts,
  isEarningsBalanceDue,
  type NewEarningsBalanceAccount,
} from '../domain/earnings-balance.ts';
import { InputRefusedError } from '../errors/input-error.ts';
import { type MergedJob, type MergedPerson, RosterMerge, type RowOutcome } from './roster-merge.ts';
import type { RosterRow } from './roster-row.ts';
import {
  findJobsByIdentifiers,
  findPeopleByIdOrEmail,
  findPeopleWorkingElsewhere,
  insertJobs,
  insertPeople,
  lockJobs,
  lockOrganizationForImport,
  lockPeople,
  updateJobs,
  updatePeople,
} from './roster-store.ts';

export type { RowOutcome } from './roster-merge.ts';

/** The organization a batch writes to, as it was when the import began. */
export interface RosterTarget {
  id: string;
  currency: string;
}

/** Someone else changed a row between this batch's reading and writing; the caller retries line by line. */
export class ConcurrentChangeError extends Error {
  override name = 'ConcurrentChangeError';
  /** PostgreSQL's serialization_failure, so that callers treat it as any other retryable conflict. */
  readonly code = '40001';
}

/**
 * Reads the jobs and people the rows name, without locks: most rows of a re-import change nothing, and locking
 * them all would write every one of them. The rows that will change are locked and compared before writing.
 */
async function readMerge(
  tx: Tx,
  organizationId: string,
  rows: readonly RosterRow[],
  peopleSeen: ReadonlySet<string>,
): Promise<RosterMerge> {
  const jobs = await findJobsByIdentifiers(
    tx,
    organizationId,
    rows.map((row) => row.primaryIdentifier),
  );
  const people = await findPeopleByIdOrEmail(
    tx,
    [...new Set(jobs.map((job) => job.personId))],
    rows.map((row) => row.email),
  );
  const workingElsewhere = await findPeopleWorkingElsewhere(
    tx,
    people.map((person) => person.id),
    organizationId,
  );
  return new RosterMerge({ jobs, people, workingElsewhere }, peopleSeen);
}

/**
 * Locks the rows about to change and fails when any is no longer as it was read. The people locked are those
 * changed and those whose jobs change (or get their earnings balance): an advance checks a job's status under its
 * person's lock, and a sign-up its employee id (db/lock-order.ts: people, then jobs).
 */
async function lockUnchangedSinceRead(
  tx: Tx,
  people: readonly MergedPerson[],
  jobs: readonly MergedJob[],
  jobsOfPeople: readonly MergedJob[],
): Promise<void> {
  const owners = [...people.map((person) => person.id), ...jobsOfPeople.map((job) => job.personId)];
  const lockedPeople = owners.length > 0 ? await lockPeople(tx, [...new Set(owners)]) : [];
  const changedIds = new Set(people.map((person) => person.id));
  for (const [read, locked] of [
    [people, lockedPeople.filter((person) => changedIds.has(person.id))],
    [
      jobs,
      jobs.length > 0
        ? await lockJobs(
            tx,
            jobs.map((job) => job.id),
          )
        : [],
    ],
  ] as const) {
    const versions = new Map<string, string>(read.map((row) => [row.id, row.version]));
    if (locked.length !== read.length || locked.some((row) => versions.get(row.id) !== row.version)) {
      throw new ConcurrentChangeError('a row of the batch changed while the roster was imported');
    }
  }
}

async function write(
  tx: Tx,
  organization: RosterTarget & { products: string[] },
  merge: RosterMerge,
): Promise<void> {
  const people = [...merge.people.values()];
  const jobs = [...merge.jobs.values()];
  const changedPeople = people.filter((person) => person.changed);
  const changedJobs = jobs.filter((job) => job.changed);
  const newJobs = jobs.filter((job) => job.isNew);
  // Existing jobs that are due an account: activated by this roster, or from before the organization had ODP.
  const due = jobs.filter((job) => !job.isNew && isEarningsBalanceDue(job, organization.products));
  await lockUnchangedSinceRead(tx, changedPeople, changedJobs, [...changedJobs, ...due]);
  // Changed people first: an email one of them gives up may be the email of a person made below.
  await updatePeople(tx, changedPeople);
  await insertPeople(
    tx,
    people.filter((person) => person.isNew),
  );
  // A new job's account is made before the job, so the job is inserted with it instead of updated afterwards.
  const accounts: NewEarningsBalanceAccount[] = [];
  for (const job of newJobs) {
    if (!isEarningsBalanceDue(job, organization.products)) continue;
    job.earningsBalanceAccountId = randomUUID();
    accounts.push({
      id: job.earningsBalanceAccountId,
      personId: job.personId,
      currency: organization.currency,
    });
  }
  await insertEarningsBalanceAccounts(tx, accounts);
  await insertJobs(tx, organization, newJobs);
  await updateJobs(tx, changedJobs);
  await ensureEarningsBalanceAccounts(
    tx,
    due.map((job) => job.id),
  );
}

/**
 * Writes a batch of checked rows of one organization in the caller's transaction: reads the jobs and people the
 * rows name, applies the rows in file order in memory (RosterMerge), then writes people and jobs with a few
 * set-based statements, and gives activated jobs their earnings balance accounts. A row that conflicts with the
 * database or with an earlier row (an email of another person) is refused with its reason and writes nothing.
 *
 * A person's details (name, email, state) come from the first line of the file that names them (`peopleSeen`
 * holds the people of earlier batches); their other jobs' lines only add jobs, so that a file with one worker on
 * two lines imports the same way every time. Returns the people this batch saw, to add once it has committed.
 */
export async function writeRosterBatch(
  tx: Tx,
  organization: RosterTarget,
  rows: readonly RosterRow[],
  peopleSeen: ReadonlySet<string>,
): Promise<{ outcomes: RowOutcome[]; peopleSeen: ReadonlySet<string> }> {
  // A policy change cannot slip in between reading the organization and writing its jobs.
  const current = await lockOrganizationForImport(tx, organization.id);
  // Possible only before the organization's first job: later the currency is fixed (setOrganizationPolicy).
  if (current?.currency !== organization.currency) {
    throw new InputRefusedError(
      `The organization's currency changed from ${organization.currency} to ${current?.currency} while the ` +
        'roster was read, so its wage amounts may mean something else; import the roster again.',
      { field: 'currency' },
    );
  }
  const merge = await readMerge(tx, organization.id, rows, peopleSeen);
  const outcomes = rows.map((row) => merge.apply(row));
  await write(tx, { ...organization, products: current.products }, merge);
  return { outcomes, peopleSeen: merge.seenNow };
}
