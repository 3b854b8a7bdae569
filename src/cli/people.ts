import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  importRoster,
  ROSTER_PROBLEMS_LISTED_MAX,
  ROSTER_RECORD_CHARS_MAX,
  ROSTER_ROWS_MAX,
  type RosterImportResult,
  rosterImportAttributes,
} from '../operator/roster-import.ts';
import { ROSTER_COLUMNS } from '../operator/roster-row.ts';
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

const COLUMNS_HELP = Object.entries(ROSTER_COLUMNS).map(
  ([name, column]) =>
    `  ${name.padEnd(20)} ${column.required ? 'required ' : 'optional '} ${column.description}`,
);

async function readableFile(path: string): Promise<number> {
  try {
    const stats = await stat(path);
    if (!stats.isFile()) throw new UsageError(`${path} is not a file.`);
    return stats.size;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
}

const importCommand: Command = {
  name: 'people import',
  summary: "Import an employer's roster of workers and jobs from a CSV file",
  help: [
    'Usage: ewa people import ROSTER.csv [--organization ORGANIZATION_ID] [--json]',
    '',
    'Creates or updates a person and a job per line. A job is known by the organization and its',
    'primary_identifier, and a person by email, so importing the same file again changes nothing. A wrong line is',
    'reported with its number and field and nothing of it is written; the other lines are written. Exit code 1',
    'when any line was rejected.',
    '',
    'The first line names the columns (any order, any case). Columns:',
    ...COLUMNS_HELP,
    '',
    '--organization (or its alias --org) names the organization; without it, the organization_id column does (one',
    'per file).',
    `Limits: ${ROSTER_ROWS_MAX} lines of workers, ${ROSTER_RECORD_CHARS_MAX} characters a line; at most`,
    `${ROSTER_PROBLEMS_LISTED_MAX} rejected lines are listed (all are counted). UTF-8, comma-separated, "quotes" as`,
    'in RFC 4180. Each ACTIVATED job of an organization with ODP gets its earnings balance account.',
  ].join('\n'),
  options: { ...ORGANIZATION_OPTIONS, json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    if (positionals.length !== 1) throw new UsageError('name one roster file.');
    const path = inputPath(context, positionals[0]!);
    const size = await readableFile(path);
    const organizationId = organizationFlag(flags);
    return withMigratedDatabase(context, async ({ database }) => {
      const started = performance.now();
      const progress = startProgress(context, 'Importing roster (bytes)', size);
      let result: RosterImportResult;
      try {
        result = await importRoster(database.db, {
          organizationId,
          source: createReadStream(path),
          onProgress: progress.update,
        });
      } finally {
        progress.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      const lines = result.created + result.updated + result.unchanged + result.rejected;
      if (flags.json) {
        writeLine(
          context.stdout,
          JSON.stringify({ ...rosterImportAttributes(result), seconds: Math.round(seconds * 10) / 10 }),
        );
      } else {
        for (const problem of result.problems) {
          writeLine(context.stderr, `line ${problem.line}: ${problem.detail}`);
        }
        if (result.problemsTruncated) {
          writeLine(context.stderr, `… and ${result.rejected - result.problems.length} more rejected lines.`);
        }
        writeLine(
          context.stdout,
          [
            `Roster of ${result.organizationName} (${result.organizationId}): ${lines} lines in ` +
              `${seconds.toFixed(1)} s (${Math.round(lines / Math.max(seconds, 0.001))} lines/s)`,
            `  created    ${result.created}`,
            `  updated    ${result.updated}`,
            `  unchanged  ${result.unchanged}`,
            `  rejected   ${result.rejected}`,
          ].join('\n'),
        );
      }
      return result.rejected > 0 ? 1 : 0;
    });
  },
};

export const peopleCommands: Command[] = [importCommand];
