import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import {
  EARNINGS_PROBLEMS_LISTED_MAX,
  EARNINGS_RECORD_CHARS_MAX,
  EARNINGS_ROWS_MAX,
  type EarningsImportResult,
  earningsImportAttributes,
  importEarnings,
} from '../money/earnings/earnings-import.ts';
import { EarningsRecorder } from '../money/earnings/earnings-recorder.ts';
import { EARNINGS_COLUMNS } from '../money/earnings/earnings-row.ts';
import { decimalAmount } from '../operator/decimal-amount.ts';
import {
  type Command,
  inputPath,
  ORGANIZATION_OPTIONS,
  organizationFlag,
  UsageError,
  writeLine,
} from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

const COLUMNS_HELP = Object.entries(EARNINGS_COLUMNS).map(
  ([name, column]) =>
    `  ${name.padEnd(20)} ${column.required ? 'required ' : 'optional '} ${column.description}`,
);

async function readableFile(path: string): Promise<void> {
  try {
    if (!(await stat(path)).isFile()) throw new UsageError(`${path} is not a file.`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
}

/** Lines of the file as the import numbers them (CRLF, CR and LF each end one): the progress bar's total. */
async function countLines(path: string): Promise<number> {
  let count = 0;
  let previous = 0;
  let last = 10;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (const byte of chunk) {
      if (byte === 13 || (byte === 10 && previous !== 13)) count++;
      previous = byte;
    }
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 10 || last === 13 ? count : count + 1;
}

/** Minor units as the currency writes them, by string arithmetic: 12345 USD is 123.45 USD. */
function money(minor: number, currency: string): string {
  return `${decimalAmount(minor, currency)} ${currency}`;
}

function summary(result: EarningsImportResult, seconds: number): string {
  return [
    `Earnings of ${result.organizationName} (${result.organizationId}): ${result.lines} lines in ` +
      `${seconds.toFixed(1)} s (${Math.round(result.lines / Math.max(seconds, 0.001))} lines/s)`,
    `  recorded    ${result.recorded}  (${money(result.recordedMinor, result.currency)})`,
    `  duplicates  ${result.duplicates}`,
    `  rejected    ${result.rejectedCount}`,
    `  credited    ${money(result.creditedMinor, result.currency)} to earnings balances`,
  ].join('\n');
}

const importCommand: Command = {
  name: 'earnings import',
  summary: "Record an employer's earnings (shifts) from a CSV file",
  help: [
    'Usage: ewa earnings import --organization ORGANIZATION_ID EARNINGS.csv [--allow-backdated] [--json]',
    '',
    '--organization (or its alias --org) names the organization whose jobs the lines are for.',
    '',
    "Records each line as pay of a job of the organization, on the paycheck of the line's pay period, and makes",
    "the accessible share of it available in the worker's earnings balance. A line whose job already has its",
    'row_id (from an earlier import or line) is a duplicate: counted, not recorded again, so importing the same',
    'file twice, or again after an interruption, records each line once. A wrong line (bad value, unknown or not',
    'ACTIVATED job, hours for a salaried job, a pay period already closed by payroll) is reported with its number',
    'and field, and nothing of it is written; the other lines are recorded, 1000 lines to a transaction. Exit code',
    '1 when any line was rejected; 2 when the command is misused or the header is wrong (nothing is written).',
    '',
    "A line of a pay period whose deposit day is before today (in the organization's time zone) is backdated pay,",
    'rejected on its date unless --allow-backdated is given. With it, such a line is recorded as any other: on the',
    "period's paycheck while that is ESTIMATED (made if the job has none), its accessible share credited to the",
    'earnings balance at once, the rest paid by the next payroll run, after the deposit day it missed. A paycheck',
    'payroll has closed still rejects it.',
    '',
    'The first line names the columns (any order, any case); any other column refuses the file. Columns:',
    ...COLUMNS_HELP,
    'Each line gives hours or amount, not both. Example:',
    '  row_id,primary_identifier,date,hours,amount',
    '  S-1001,W-17,2026-03-09,7.5,',
    '  S-1002,W-21,2026-03-09,,123.45',
    '',
    `Limits: ${EARNINGS_ROWS_MAX} lines, ${EARNINGS_RECORD_CHARS_MAX} characters a line; at most`,
    `${EARNINGS_PROBLEMS_LISTED_MAX} rejected lines are listed (all are counted). UTF-8, comma-separated, "quotes"`,
    'as in RFC 4180. Progress goes to standard error, the summary to standard output (JSON with --json).',
  ].join('\n'),
  options: { ...ORGANIZATION_OPTIONS, 'allow-backdated': { type: 'boolean' }, json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    if (positionals.length !== 1) throw new UsageError('name one earnings file.');
    const organizationId = organizationFlag(flags);
    if (organizationId === undefined)
      throw new UsageError('--organization names the organization; it is required.');
    const path = inputPath(context, positionals[0]!);
    await readableFile(path);
    const total = Math.max((await countLines(path)) - 1, 0);
    return withMigratedDatabase(context, async ({ database }) => {
      const { db } = database;
      const recorder = new EarningsRecorder(db, new SystemLedger(db));
      const started = performance.now();
      const progress = startProgress(context, 'Importing earnings (lines)', total);
      let result: EarningsImportResult;
      try {
        result = await importEarnings(db, recorder, {
          organizationId,
          source: createReadStream(path),
          now: context.now?.() ?? new Date(),
          allowBackdated: flags['allow-backdated'] === true,
          onProgress: progress.update,
        });
        // Blank lines and quoted line breaks are lines of the file but not of earnings: the bar ends full.
        progress.update(total);
      } finally {
        progress.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      if (flags.json) {
        writeLine(
          context.stdout,
          JSON.stringify({ ...earningsImportAttributes(result), seconds: Math.round(seconds * 10) / 10 }),
        );
      } else {
        for (const problem of result.rejected)
          writeLine(context.stderr, `line ${problem.line}: ${problem.message}`);
        if (result.rejectedCount > result.rejected.length) {
          writeLine(
            context.stderr,
            `… and ${result.rejectedCount - result.rejected.length} more rejected lines.`,
          );
        }
        writeLine(context.stdout, summary(result, seconds));
      }
      return result.rejectedCount > 0 ? 1 : 0;
    });
  },
};

export const earningsCommands: Command[] = [importCommand];
