import { randomUUID } from 'node:crypto';
import type { RosterProblem, RosterRow } from './roster-row.ts';
import type { RosterJob, RosterPerson } from './roster-store.ts';

export type RowOutcome = 'created' | 'updated' | 'unchanged' | RosterProblem;

export interface MergedPerson extends RosterPerson {
  /** Has a job at another organization: this employer's roster does not change the person's details. */
  shared: boolean;
  isNew: boolean;
  changed: boolean;
}

export interface MergedJob extends RosterJob {
  isNew: boolean;
  changed: boolean;
}

const JOB_FIELDS = [
  'employeeId',
  'group',
  'firstName',
  'lastName',
  'location',
  'title',
  'department',
  'activationStatus',
  'wageRateMinor',
  'wageFrequency',
] as const;

/**
 * A batch's view of the people and jobs its lines name: what the database held when the batch began, with the
 * batch's own lines applied in file order. Pure: the batch reads before and writes after.
 */
export class RosterMerge {
  readonly people = new Map<string, MergedPerson>();
  readonly jobs = new Map<string, MergedJob>();
  readonly #personByEmail = new Map<string, string>();
  /** People an earlier line of the file described: their details come from that first line. */
  readonly #seenBefore: ReadonlySet<string>;
  readonly seenNow = new Set<string>();

  constructor(
    existing: {
      jobs: readonly RosterJob[];
      people: readonly RosterPerson[];
      workingElsewhere: ReadonlySet<string>;
    },
    seenBefore: ReadonlySet<string>,
  ) {
    for (const job of existing.jobs)
      this.jobs.set(job.primaryIdentifier, { ...job, isNew: false, changed: false });
    for (const person of existing.people) {
      this.#addPerson({
        ...person,
        shared: existing.workingElsewhere.has(person.id),
        isNew: false,
        changed: false,
      });
    }
    this.#seenBefore = seenBefore;
  }

  #addPerson(person: MergedPerson): void {
    this.people.set(person.id, person);
    if (person.email !== null) this.#personByEmail.set(person.email, person.id);
  }

  #seen(personId: string): boolean {
    return this.#seenBefore.has(personId) || this.seenNow.has(personId);
  }

  /** Why the line's email cannot be the email of the worker of its job, if it cannot. */
  #emailRefusal(row: RosterRow, person: MergedPerson): string | undefined {
    const job = row.primaryIdentifier;
    if (this.#seen(person.id)) {
      return `email: the worker of job ${job} has the email ${person.email} on an earlier line of this file; one person has one email.`;
    }
    const holder = this.#personByEmail.get(row.email);
    if (holder !== undefined && holder !== person.id) {
      return `email ${row.email} belongs to another person than the worker of job ${job}; a roster cannot move a job to another person.`;
    }
    if (person.shared) {
      return `email: the worker of job ${job} also works for another employer, so this roster cannot change their email to ${row.email}.`;
    }
    return undefined;
  }

  /** Applies one line, or says why it cannot be; nothing changes for a refused line. */
  apply(row: RosterRow): RowOutcome {
    const existingJob = this.jobs.get(row.primaryIdentifier);
    const ownerId = existingJob ? existingJob.personId : this.#personByEmail.get(row.email);
    const person = ownerId === undefined ? undefined : this.people.get(ownerId);
    if (existingJob && person && person.email !== row.email) {
      const refusal = this.#emailRefusal(row, person);
      if (refusal) return { line: row.line, field: 'email', detail: refusal };
    }
    const { person: worker, changed: personChanged } = this.#applyPerson(row, person);
    if (!existingJob) {
      this.jobs.set(row.primaryIdentifier, {
        id: randomUUID(),
        personId: worker.id,
        primaryIdentifier: row.primaryIdentifier,
        employeeId: row.employeeId ?? null,
        group: row.group ?? null,
        firstName: row.firstName,
        lastName: row.lastName,
        location: row.location ?? null,
        title: row.title ?? null,
        department: row.department ?? null,
        activationStatus: row.activationStatus ?? 'ACTIVATED',
        wageRateMinor: row.wageAmountMinor,
        wageFrequency: row.wageFrequency,
        earningsBalanceAccountId: null,
        version: '',
        isNew: true,
        changed: false,
      });
      return 'created';
    }
    const jobChanged = this.#applyJob(row, existingJob);
    return jobChanged || personChanged ? 'updated' : 'unchanged';
  }

  /**
   * The line's worker: a new person, or the one found, whose details follow the line unless another employer
   * shares them or an earlier line of the file described them.
   */
  #applyPerson(row: RosterRow, found: MergedPerson | undefined): { person: MergedPerson; changed: boolean } {
    let changed = false;
    let person = found;
    if (!person) {
      person = {
        id: randomUUID(),
        email: row.email,
        firstName: row.firstName,
        lastName: row.lastName,
        stateOfResidence: row.stateOfResidence ?? null,
        version: '',
        shared: false,
        isNew: true,
        changed: false,
      };
      this.#addPerson(person);
    } else if (!person.shared && !this.#seen(person.id)) {
      const next = {
        email: row.email,
        firstName: row.firstName,
        lastName: row.lastName,
        stateOfResidence: row.stateOfResidence ?? person.stateOfResidence,
      };
      const before = person;
      changed = (Object.keys(next) as (keyof typeof next)[]).some((key) => next[key] !== before[key]);
      if (changed) {
        if (person.email !== null && this.#personByEmail.get(person.email) === person.id) {
          this.#personByEmail.delete(person.email);
        }
        Object.assign(person, next);
        this.#personByEmail.set(row.email, person.id);
        if (!person.isNew) person.changed = true;
      }
    }
    this.seenNow.add(person.id);
    return { person, changed };
  }

  /** Sets the job's fields the line gives (a column not in the file gives nothing); true when one differed. */
  #applyJob(row: RosterRow, job: MergedJob): boolean {
    const given = {
      employeeId: row.employeeId,
      group: row.group,
      firstName: row.firstName,
      lastName: row.lastName,
      location: row.location,
      title: row.title,
      department: row.department,
      activationStatus: row.activationStatus,
      wageRateMinor: row.wageAmountMinor,
      wageFrequency: row.wageFrequency,
    };
    let changed = false;
    for (const field of JOB_FIELDS) {
      const value = given[field];
      if (value !== undefined && value !== job[field]) {
        (job as unknown as Record<string, unknown>)[field] = value;
        changed = true;
      }
    }
    if (changed && !job.isNew) job.changed = true;
    return changed;
  }
}
