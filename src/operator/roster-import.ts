import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { isUuid } from '../domain/uuid.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { currencyFractionDigits } from './decimal-amount.ts';
import { notFound } from './organizations.ts';
import { type RowOutcome, writeRosterBatch } from './roster-batch.ts';
import {
  type RosterDatabase,
  type RosterImportTurns,
  withRosterImportSession,
} from './roster-import-turn.ts';
import { type CsvRecord, readCsvRecords } from './roster-reader.ts';
import {
  parseRosterHeader,
  parseRosterRow,
  type RosterHeader,
  type RosterProblem,
  type RosterRow,
} from './roster-row.ts';

/** Data lines one import reads; a longer file is split by the employer. */
export const ROSTER_ROWS_MAX = 500_000;
/** Characters of one CSV record, quoted line breaks included. */
export const ROSTER_RECORD_CHARS_MAX = 8_192;
/** Problems listed in a result; `rejected` counts them all. */
export const ROSTER_PROBLEMS_LISTED_MAX = 1_000;
/** Rows written per transaction: large enough that set-based statements pay off, small enough to stay short. */
const BATCH_ROWS = 1_000;

export interface RosterImportResult {
  organizationId: string;
  organizationName: string;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /** Up to ROSTER_PROBLEMS_LISTED_MAX rejected lines, by line number. */
  problems: RosterProblem[];
  problemsTruncated: boolean;
  bytesRead: number;
}

export interface RosterImportInput {
  /** The organization of the import; without it, the file's organization_id column names it. */
  organizationId?: string | undefined;
  source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
  onProgress?: (bytesRead: number) => void;
}

interface Target {
  id: string;
  name: string;
  currency: string;
  fractionDigits: number;
}

async function loadTarget(db: Db, id: string, notFound: () => Error): Promise<Target> {
  if (!isUuid(id)) throw notFound();
  const row = await db
    .selectFrom('organizations as o')
    .leftJoin('organization_policies as p', 'p.organization_id', 'o.id')
    .select(['o.id', 'o.name', 'p.currency'])
    .where('o.id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!row) throw notFound();
  const currency = (row.currency ?? 'USD').trim();
  return { id: row.id, name: row.name, currency, fractionDigits: currencyFractionDigits(currency) };
}

/** Database refusals that another statement running at the same moment can cause, or that one row can cause. */
function isRowConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('23') || code === '40001' || code === '40P01');
}

function conflictProblem(row: RosterRow, error: unknown): RosterProblem {
  const constraint = String((error as { constraint?: unknown }).constraint ?? '');
  const field = /email/.test(constraint)
    ? 'email'
    : /primary_identifier/.test(constraint)
      ? 'primary_identifier'
      : null;
  return {
    line: row.line,
    field,
    detail: `${field ?? 'the line'} could not be saved: it conflicts with a change made at the same time (${constraint || 'database constraint'}); import the line again.`,
  };
}

/**
 * The embedded database runs no autovacuum: without fresh statistics, the planner takes tables that grew from
 * empty during the import for tiny ones and looks rows up by sequential scan, which makes a large import
 * quadratic. Refreshed each time the rows created double. Without the right to analyze, PostgreSQL only warns.
 */
async function refreshPlannerStatistics(db: Db): Promise<void> {
  await sql`analyze people, jobs, accounts`.execute(db);
}

/** One import in progress: the lines read so far, the batch being gathered, and the counts. */
class RosterImport {
  readonly #db: Db;
  readonly #turns: RosterImportTurns;
  #target: Target | undefined;
  /** Gives the organization's turn back; set once the import has taken it. */
  #giveTurnBack: (() => Promise<void>) | undefined;
  #header: RosterHeader | undefined;
  #pending: RosterRow[] = [];
  #dataRows = 0;
  #createdAtLastAnalyze = 0;
  /** primary_identifier → the line that had it, so that a second line with it is refused. */
  readonly #identifiers = new Map<string, number>();
  readonly #peopleSeen = new Set<string>();
  readonly counts = { created: 0, updated: 0, unchanged: 0, rejected: 0 };
  readonly problems: RosterProblem[] = [];

  constructor(db: Db, turns: RosterImportTurns) {
    this.#db = db;
    this.#turns = turns;
  }

  /** Takes the organization's turn before anything of it is written: refused while another import of it runs. */
  async begin(target: Target): Promise<void> {
    this.#giveTurnBack = await this.#turns.take(target);
    this.#target = target;
  }

  /** Gives the turn back, whether the import succeeded or failed. */
  async end(): Promise<void> {
    const giveBack = this.#giveTurnBack;
    this.#giveTurnBack = undefined;
    await giveBack?.();
  }

  get target(): Target | undefined {
    return this.#target;
  }

  get hasHeader(): boolean {
    return this.#header !== undefined;
  }

  reject(problem: RosterProblem): void {
    this.counts.rejected++;
    if (this.problems.length < ROSTER_PROBLEMS_LISTED_MAX) this.problems.push(problem);
  }

  /** Takes one CSV record; 'stop' when no more may be read. */
  async accept(record: CsvRecord): Promise<'more' | 'stop'> {
    if (!this.#header) {
      this.#header = parseRosterHeader(record.fields, record.line);
      if (!this.#target && !this.#header.has('organization_id')) {
        throw new InputError(
          // Only the CLI imports without naming the organization (the admin API's path always names one).
          'The roster names no organization: add an organization_id column, or name it with --organization ID.',
          { field: 'organization_id' },
        );
      }
      return 'more';
    }
    if (++this.#dataRows > ROSTER_ROWS_MAX) {
      this.reject({
        line: record.line,
        field: null,
        detail: `the file has more than ${ROSTER_ROWS_MAX} lines of workers; this line and the rest were not read. Split the file.`,
      });
      return 'stop';
    }
    if (!this.#target) await this.begin(await this.#targetOfFirstLine(record));
    const target = this.#target!;
    const parsed = parseRosterRow(record.fields, this.#header, {
      line: record.line,
      fractionDigits: target.fractionDigits,
    });
    const problem = 'problem' in parsed ? parsed.problem : this.#conflictWithFile(parsed.row, target);
    if (problem) {
      this.reject(problem);
      return 'more';
    }
    const { row } = parsed as { row: RosterRow };
    this.#identifiers.set(row.primaryIdentifier, row.line);
    this.#pending.push(row);
    if (this.#pending.length >= BATCH_ROWS) await this.flush();
    return 'more';
  }

  /** Writes the lines gathered so far. */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    this.#pending = [];
    for (const outcome of await this.#write(rows)) {
      if (typeof outcome === 'object') this.reject(outcome);
      else this.counts[outcome]++;
    }
    if (this.counts.created >= Math.max(BATCH_ROWS, 2 * this.#createdAtLastAnalyze)) {
      this.#createdAtLastAnalyze = this.counts.created;
      await refreshPlannerStatistics(this.#db);
    }
  }

  #targetOfFirstLine(record: CsvRecord): Promise<Target> {
    const id = record.fields[this.#header!.get('organization_id')!]?.trim() ?? '';
    return loadTarget(
      this.#db,
      id,
      () =>
        new InputRefusedError(
          `line ${record.line}: organization_id names no organization (got "${id.slice(0, 40)}").`,
          {
            field: 'organization_id',
          },
        ),
    );
  }

  /** A line at odds with the import itself: another organization, or an identifier an earlier line had. */
  #conflictWithFile(row: RosterRow, target: Target): RosterProblem | undefined {
    if (row.organizationId !== undefined && row.organizationId !== target.id) {
      return {
        line: row.line,
        field: 'organization_id',
        detail: `organization_id ${row.organizationId} is not the organization of this import (${target.id}).`,
      };
    }
    const earlier = this.#identifiers.get(row.primaryIdentifier);
    if (earlier === undefined) return undefined;
    return {
      line: row.line,
      field: 'primary_identifier',
      detail: `primary_identifier ${JSON.stringify(row.primaryIdentifier)} is already on line ${earlier} of this file.`,
    };
  }

  async #attempt(rows: RosterRow[]): Promise<RowOutcome[]> {
    const written = await withTransaction(this.#db, (tx) =>
      writeRosterBatch(tx, this.#target!, rows, this.#peopleSeen),
    );
    for (const personId of written.peopleSeen) this.#peopleSeen.add(personId);
    return written.outcomes;
  }

  /** A batch in one transaction; after a conflict, line by line, so that only the conflicting line is refused. */
  async #write(rows: RosterRow[]): Promise<RowOutcome[]> {
    try {
      return await this.#attempt(rows);
    } catch (error) {
      if (!isRowConflict(error)) throw error;
      if (rows.length > 1) {
        const outcomes: RowOutcome[] = [];
        for (const row of rows) outcomes.push(...(await this.#write([row])));
        return outcomes;
      }
      try {
        // A concurrent writer may have made the very row: a second reading sees it and updates it.
        return await this.#attempt(rows);
      } catch (again) {
        if (!isRowConflict(again)) throw again;
        return [conflictProblem(rows[0]!, again)];
      }
    }
  }
}

/**
 * Imports an employer's roster (see roster-row.ts for the columns): creates or updates the person and the job of
 * each line, keyed by the organization and primary_identifier, so that importing the same file again changes
 * nothing. The file is streamed and written in batches of BATCH_ROWS rows, each batch in one transaction. A line
 * that is wrong is refused with its line number and field and writes nothing; the other lines are written. When a
 * batch meets a conflict with concurrent work, its lines are written one by one, each in its own transaction, so
 * that only the conflicting line is refused. A file whose header is wrong or that names no organization is
 * refused as a whole (InputError) before anything is written.
 *
 * Imports of one organization run one at a time: the import takes the organization's turn (roster-import-turn.ts)
 * as soon as it knows the organization, the one named or the one of the file's first line of workers, before it
 * writes a line; another import of it meanwhile is refused at once (ROSTER_IMPORT_RUNNING), however it ends.
 */
export function importRoster(
  database: RosterDatabase,
  input: RosterImportInput,
): Promise<RosterImportResult> {
  return withRosterImportSession(database, async (db, turns) => {
    const run = new RosterImport(db, turns);
    let result: RosterImportResult;
    try {
      result = await runImport(db, run, input);
    } catch (error) {
      // The import's own failure is the one to tell: a turn that cannot be given back went with its session.
      await run.end().catch(() => {});
      throw error;
    }
    await run.end();
    return result;
  });
}

async function runImport(db: Db, run: RosterImport, input: RosterImportInput): Promise<RosterImportResult> {
  const { organizationId } = input;
  if (organizationId !== undefined)
    await run.begin(await loadTarget(db, organizationId, () => notFound(organizationId)));
  let bytesRead = 0;
  const chunks = readCsvRecords(input.source, { recordCharsMax: ROSTER_RECORD_CHARS_MAX });
  reading: for await (const chunk of chunks) {
    bytesRead = chunk.bytesRead;
    for (const record of chunk.records) {
      if ((await run.accept(record)) === 'stop') break reading;
    }
    if (chunk.problem) {
      if (!run.hasHeader) throw new InputError(`line ${chunk.problem.line}: ${chunk.problem.detail}`);
      run.reject(chunk.problem);
    }
    input.onProgress?.(bytesRead);
  }
  if (!run.hasHeader) {
    throw new InputError(
      'The roster is empty: it needs a header line naming its columns, then a line per job.',
    );
  }
  await run.flush();
  input.onProgress?.(bytesRead);
  if (!run.target) {
    throw new InputError('The roster has a header but no lines of workers, so it names no organization.', {
      field: 'organization_id',
    });
  }
  return {
    organizationId: run.target.id,
    organizationName: run.target.name,
    ...run.counts,
    problems: run.problems.sort((a, b) => a.line - b.line),
    problemsTruncated: run.counts.rejected > run.problems.length,
    bytesRead,
  };
}

/** The result as `ewa people import --json` prints it and the admin API answers it. */
export function rosterImportAttributes(result: RosterImportResult) {
  return {
    organization_id: result.organizationId,
    organization_name: result.organizationName,
    created: result.created,
    updated: result.updated,
    unchanged: result.unchanged,
    rejected: result.rejected,
    rejected_lines: result.problems,
    rejected_lines_truncated: result.problemsTruncated,
  };
}
