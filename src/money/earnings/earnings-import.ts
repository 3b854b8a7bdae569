import type { Db } from '../../db/database.ts';
import { localDateOf } from '../../domain/calendar.ts';
import { InputError } from '../../errors/input-error.ts';
import { currencyFractionDigits, decimalAmount } from '../../operator/decimal-amount.ts';
import { insertDefaultPolicy } from '../../operator/organization-store.ts';
import { findOrganization } from '../../operator/organizations.ts';
import { type CsvRecord, readCsvRecords } from '../../operator/roster-reader.ts';
import { findJobsByIdentifier, type ImportJob } from './earnings-import-store.ts';
import {
  type EarningsInput,
  type EarningsRecorder,
  HOURS_OF_DAY_HUNDREDTHS_MAX,
} from './earnings-recorder.ts';
import {
  EARNINGS_AMOUNT_MAJOR_MAX,
  type EarningsHeader,
  type EarningsProblem,
  type EarningsRow,
  parseEarningsHeader,
  parseEarningsRow,
} from './earnings-row.ts';
import { payCalendarOf } from './job-terms.ts';
import { type PayCalendar, payPeriodContaining } from './pay-periods.ts';

/** Data lines one import reads; a longer file is split by the employer. */
export const EARNINGS_ROWS_MAX = 500_000;
/** Characters of one CSV record: five short columns need far fewer. */
export const EARNINGS_RECORD_CHARS_MAX = 2_048;
/** Rejected lines listed in a result; `rejectedCount` counts them all. */
export const EARNINGS_PROBLEMS_LISTED_MAX = 1_000;
/** Lines recorded per transaction (one `record` call): as the roster import, large but short. */
const BATCH_ROWS = 1_000;

export interface EarningsImportResult {
  organizationId: string;
  organizationName: string;
  currency: string;
  /** Data lines read: recorded + duplicates + rejectedCount. */
  lines: number;
  recorded: number;
  duplicates: number;
  /** The first EARNINGS_PROBLEMS_LISTED_MAX rejected lines, by line number. */
  rejected: EarningsProblem[];
  rejectedCount: number;
  /** Pay recorded by this import. */
  recordedMinor: number;
  /** What became accessible in earnings balances as a result. */
  creditedMinor: number;
}

export interface EarningsImportInput {
  organizationId: string;
  source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
  /** The instant of the import: what "today" is, and when the postings are dated. */
  now: Date;
  /**
   * Records lines of pay periods whose deposit day is before today (the operator's explicit choice; see
   * RecordOptions for what they do). Without it each is rejected on its `date`.
   */
  allowBackdated?: boolean;
  /** Data lines read so far. */
  onProgress?: (lines: number) => void;
}

interface Target {
  id: string;
  name: string;
  currency: string;
  fractionDigits: number;
  today: string;
  calendar: PayCalendar;
}

async function loadTarget(db: Db, organizationId: string, now: Date): Promise<Target> {
  let organization = await findOrganization(db, organizationId);
  if (!organization.policy) {
    // As the recorder does for such an organization: its policy becomes the defaults, before anything is read.
    await insertDefaultPolicy(db, organization.id);
    organization = await findOrganization(db, organization.id);
  }
  const { currency, timeZone } = organization.policy!;
  return {
    id: organization.id,
    name: organization.name,
    currency,
    fractionDigits: currencyFractionDigits(currency),
    today: localDateOf(now, timeZone),
    calendar: payCalendarOf(organization.policy!),
  };
}

/** Why the job cannot take this row, if it cannot; else the row's pay in minor units. */
function payOf(row: EarningsRow, job: ImportJob | undefined, target: Target): number | EarningsProblem {
  const problem = (field: string, message: string) => ({ line: row.line, field, message });
  const named = JSON.stringify(row.primaryIdentifier);
  if (!job)
    return problem('primary_identifier', `primary_identifier ${named} names no job of this organization.`);
  if (job.activationStatus !== 'ACTIVATED') {
    return problem(
      'primary_identifier',
      `primary_identifier: job ${named} is ${job.activationStatus}; earnings are recorded for ACTIVATED jobs only.`,
    );
  }
  if (job.wageCurrency !== target.currency) {
    return problem(
      'primary_identifier',
      `primary_identifier: job ${named} is paid in ${job.wageCurrency}, not ${target.currency}.`,
    );
  }
  // A reversal's pay is the reversed row's, found by the recorder under the person's lock.
  if (row.reverses !== null) return 0;
  if (row.hoursHundredths === null) return row.amountMinor!;
  if (job.wageFrequency !== 'HOURLY') {
    return problem(
      'hours',
      `hours: job ${named} is paid ${job.wageFrequency}, not by the hour; give its pay as an amount instead.`,
    );
  }
  // Rounded half up, in integers: hundredths of an hour × minor units an hour.
  const amountMinor = Math.floor((row.hoursHundredths * job.wageRateMinor + 50) / 100);
  const maxMinor = EARNINGS_AMOUNT_MAJOR_MAX * 10 ** target.fractionDigits;
  if (amountMinor <= 0 || amountMinor > maxMinor) {
    return problem(
      'hours',
      `hours at the wage rate of job ${named} make ${amountMinor} minor units; pay must be above 0 and at most ${EARNINGS_AMOUNT_MAJOR_MAX}.`,
    );
  }
  return amountMinor;
}

/** A line of a pay period whose deposit day is before today, refused because the import does not allow backdating. */
function backdatedProblem(row: EarningsRow, target: Target): EarningsProblem {
  const period = payPeriodContaining(target.calendar, row.workedOn ?? target.today);
  return {
    line: row.line,
    field: 'date',
    message:
      `date: the pay period of ${row.workedOn} (${period.firstDay} to ${period.lastDay}) was due to be deposited on ` +
      `${period.depositDay}, before today (${target.today}); backdated pay is recorded only when the import ` +
      'allows it (ewa earnings import --allow-backdated; allow_backdated=true on the admin API).',
  };
}

/** Hundredths of an hour as hours: 2400 → "24", 750 → "7.5". */
function hoursText(hundredths: number): string {
  return String(hundredths / 100);
}

/** A line whose hours would take its job's day past 24 hours, with what the day had already. */
function payProblem(
  row: EarningsRow,
  amountMinor: number,
  beforeMinor: number,
  currency: string,
): EarningsProblem {
  const job = JSON.stringify(row.primaryIdentifier);
  return {
    line: row.line,
    field: 'amount',
    message:
      `amount: ${decimalAmount(amountMinor, currency)} would take the pay of job ${job} for the pay period of ` +
      `${row.workedOn} below zero: ${decimalAmount(beforeMinor, currency)} is recorded for that period (earlier ` +
      'lines of this file included). A correction lowers the pay recorded for its period, never below zero.',
  };
}

function hoursProblem(row: EarningsRow, beforeHundredths: number): EarningsProblem {
  const job = JSON.stringify(row.primaryIdentifier);
  const hours = row.hoursHundredths ?? 0;
  return {
    line: row.line,
    field: 'hours',
    message:
      `hours: job ${job} would have ${hoursText(beforeHundredths + hours)} hours on ${row.workedOn}, more than the ` +
      `${hoursText(HOURS_OF_DAY_HUNDREDTHS_MAX)} of a day: ${hoursText(beforeHundredths)} are recorded already ` +
      `(earlier lines of this file included) and this line adds ${hoursText(hours)}. To correct a day's hours, ` +
      'reverse its row (reverses) and send the right hours.',
  };
}

/** Why a reversal row was not recorded, naming the row it reverses. */
function reversalProblem(
  row: EarningsRow,
  outcome: 'UNKNOWN_REVERSED_ROW' | 'ALREADY_REVERSED' | 'NOT_REVERSIBLE',
): EarningsProblem {
  const named = JSON.stringify(row.reverses);
  const job = JSON.stringify(row.primaryIdentifier);
  const message = {
    UNKNOWN_REVERSED_ROW: `reverses: job ${job} has no row ${named} to reverse.`,
    ALREADY_REVERSED: `reverses: row ${named} of job ${job} is reversed already; a row is reversed once.`,
    NOT_REVERSIBLE: `reverses: row ${named} of job ${job} is a reversal itself; send the pay again as a new row instead.`,
  }[outcome];
  return { line: row.line, field: 'reverses', message };
}

/** One import in progress: the header, the batch being gathered with the problems of its lines, and the counts. */
class EarningsImport {
  readonly #db: Db;
  readonly #recorder: EarningsRecorder;
  readonly #target: Target;
  readonly #now: Date;
  readonly #allowBackdated: boolean;
  #header: EarningsHeader | undefined;
  #pending: EarningsRow[] = [];
  /** Job and row id of each pending row, so that a reversal of one of them waits for it to be recorded. */
  #pendingRows = new Set<string>();
  /** Problems of the lines since the last flush, listed with the batch's own so that the list stays in line order. */
  #pendingProblems: EarningsProblem[] = [];
  readonly counts = {
    lines: 0,
    recorded: 0,
    duplicates: 0,
    rejectedCount: 0,
    recordedMinor: 0,
    creditedMinor: 0,
  };
  readonly rejected: EarningsProblem[] = [];

  constructor(db: Db, recorder: EarningsRecorder, target: Target, now: Date, allowBackdated: boolean) {
    this.#db = db;
    this.#recorder = recorder;
    this.#target = target;
    this.#now = now;
    this.#allowBackdated = allowBackdated;
  }

  get hasHeader(): boolean {
    return this.#header !== undefined;
  }

  /** A line that is rejected whatever the database holds. */
  reject(problem: EarningsProblem): void {
    this.counts.lines++;
    this.#pendingProblems.push(problem);
  }

  /** Takes one CSV record; 'stop' when no more may be read. */
  async accept(record: CsvRecord): Promise<'more' | 'stop'> {
    if (!this.#header) {
      this.#header = parseEarningsHeader(record.fields, record.line);
      return 'more';
    }
    if (this.counts.lines >= EARNINGS_ROWS_MAX) {
      this.reject({
        line: record.line,
        field: null,
        message: `the file has more than ${EARNINGS_ROWS_MAX} lines of earnings; this line and the rest were not read. Split the file.`,
      });
      return 'stop';
    }
    const parsed = parseEarningsRow(record.fields, this.#header, {
      line: record.line,
      fractionDigits: this.#target.fractionDigits,
      today: this.#target.today,
    });
    if ('problem' in parsed) {
      this.reject(parsed.problem);
      return 'more';
    }
    this.counts.lines++;
    const { row } = parsed;
    // The recorder looks a reversed row up in the database: one earlier in this batch is recorded first.
    if (row.reverses !== null && this.#pendingRows.has(JSON.stringify([row.primaryIdentifier, row.reverses])))
      await this.flush();
    this.#pending.push(row);
    this.#pendingRows.add(JSON.stringify([row.primaryIdentifier, row.rowId]));
    if (this.#pending.length >= BATCH_ROWS) await this.flush();
    return 'more';
  }

  /** Records the lines gathered so far in one call of the recorder (one transaction), and lists their problems. */
  async flush(): Promise<void> {
    const rows = this.#pending;
    const problems = this.#pendingProblems;
    this.#pending = [];
    this.#pendingRows.clear();
    this.#pendingProblems = [];
    if (rows.length > 0) problems.push(...(await this.#record(rows)));
    this.counts.rejectedCount += problems.length;
    for (const problem of problems.sort((a, b) => a.line - b.line)) {
      if (this.rejected.length >= EARNINGS_PROBLEMS_LISTED_MAX) break;
      this.rejected.push(problem);
    }
  }

  async #record(rows: readonly EarningsRow[]): Promise<EarningsProblem[]> {
    const problems: EarningsProblem[] = [];
    const jobs = await findJobsByIdentifier(
      this.#db,
      this.#target.id,
      rows.map((row) => row.primaryIdentifier),
    );
    const payable: { row: EarningsRow; input: EarningsInput }[] = [];
    for (const row of rows) {
      const job = jobs.get(row.primaryIdentifier);
      const pay = payOf(row, job, this.#target);
      if (typeof pay === 'object') {
        problems.push(pay);
        continue;
      }
      payable.push({
        row,
        input: {
          jobId: job!.id,
          externalId: row.rowId,
          workedOn: row.workedOn,
          hoursHundredths: row.hoursHundredths,
          amountMinor: pay,
          source: row.reverses !== null || pay < 0 ? 'ADJUSTMENT' : 'SHIFT',
          reverses: row.reverses,
        },
      });
    }
    if (payable.length === 0) return problems;
    // The recorder calls a line recorded before DUPLICATE, even on a closed period (a file sent again after payday),
    // and so a line repeated within the batch: its insert keeps the first.
    const recorded = await this.#recorder.record(
      payable.map(({ input }) => input),
      this.#now,
      { backdated: this.#allowBackdated ? 'RECORD' : 'REFUSE' },
    );
    this.counts.creditedMinor += recorded.creditedMinor;
    this.counts.recordedMinor += recorded.recordedMinor;
    recorded.outcomes.forEach((outcome, index) => {
      const { row } = payable[index]!;
      if (outcome === 'RECORDED') {
        this.counts.recorded++;
      } else if (
        outcome === 'UNKNOWN_REVERSED_ROW' ||
        outcome === 'ALREADY_REVERSED' ||
        outcome === 'NOT_REVERSIBLE'
      ) {
        problems.push(reversalProblem(row, outcome));
      } else if (outcome === 'DUPLICATE') {
        this.counts.duplicates++;
      } else if (outcome === 'PERIOD_CLOSED') {
        problems.push({
          line: row.line,
          field: 'date',
          message: `date: the pay period of ${row.workedOn} is closed (its payroll has run); pay for it is not accepted any more.`,
        });
      } else if (outcome === 'BACKDATED') {
        problems.push(backdatedProblem(row, this.#target));
      } else if (outcome === 'HOURS_EXCEEDED') {
        problems.push(hoursProblem(row, recorded.hoursBefore.get(index) ?? 0));
      } else if (outcome === 'PAY_BELOW_ZERO') {
        const { amountMinor } = payable[index]!.input;
        problems.push(
          payProblem(row, amountMinor, recorded.payBefore.get(index) ?? 0, this.#target.currency),
        );
      } else {
        problems.push({
          line: row.line,
          field: 'primary_identifier',
          message: `primary_identifier: job ${JSON.stringify(row.primaryIdentifier)} was removed during the import.`,
        });
      }
    });
    return problems;
  }
}

/**
 * Records an employer's earnings (see earnings-row.ts for the columns) through the earnings recorder. The file is
 * streamed and recorded in batches of BATCH_ROWS lines, each batch in one call of the recorder, so one
 * transaction. A line that is wrong, or whose job cannot take it, or whose pay period is closed, or whose pay
 * period's deposit day is before today (unless `allowBackdated`), is rejected with its line number and field and
 * writes nothing; the other lines are recorded. So is a line whose hours would take its job's day past 24 (the
 * recorder counts, under the person's lock, what is recorded and the earlier lines). A line whose row_id its job already has, from an earlier import or
 * an earlier line, is a duplicate: counted, not recorded again, so that sending the same file twice, or again after
 * a failure halfway, records each line once. A file whose header is wrong is
 * refused as a whole (InputError) before anything is written; an unknown organization is RECORD_NOT_FOUND.
 */
export async function importEarnings(
  db: Db,
  recorder: EarningsRecorder,
  input: EarningsImportInput,
): Promise<EarningsImportResult> {
  const target = await loadTarget(db, input.organizationId, input.now);
  const run = new EarningsImport(db, recorder, target, input.now, input.allowBackdated ?? false);
  const chunks = readCsvRecords(input.source, { recordCharsMax: EARNINGS_RECORD_CHARS_MAX });
  reading: for await (const chunk of chunks) {
    for (const record of chunk.records) {
      if ((await run.accept(record)) === 'stop') break reading;
    }
    if (chunk.problem) {
      if (!run.hasHeader) throw new InputError(`line ${chunk.problem.line}: ${chunk.problem.detail}`);
      run.reject({ line: chunk.problem.line, field: null, message: chunk.problem.detail });
    }
    input.onProgress?.(run.counts.lines);
  }
  if (!run.hasHeader) {
    throw new InputError(
      'The earnings file is empty: it needs a header line naming its columns, then a line per shift.',
    );
  }
  await run.flush();
  input.onProgress?.(run.counts.lines);
  return {
    organizationId: target.id,
    organizationName: target.name,
    currency: target.currency,
    ...run.counts,
    rejected: run.rejected,
  };
}

/** The result as `ewa earnings import --json` prints it and the admin API answers it. */
export function earningsImportAttributes(result: EarningsImportResult) {
  return {
    organization_id: result.organizationId,
    organization_name: result.organizationName,
    currency: result.currency,
    lines: result.lines,
    recorded: result.recorded,
    duplicates: result.duplicates,
    rejected: result.rejectedCount,
    rejected_lines: result.rejected,
    rejected_lines_truncated: result.rejectedCount > result.rejected.length,
    recorded_minor: result.recordedMinor,
    credited_minor: result.creditedMinor,
  };
}
