import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { listRosterSignUps, rosterSignUpAttributes } from '../operator/invitation-states.ts';
import {
  INVITATION_EMAILS_MAX,
  INVITATION_VALID_DAYS_DEFAULT,
  INVITATION_VALID_DAYS_MAX,
  invitationAttributes,
  issueInvitations,
} from '../operator/invitations.ts';
import {
  importRoster,
  ROSTER_PROBLEMS_LISTED_MAX,
  ROSTER_RECORD_CHARS_MAX,
  ROSTER_ROWS_MAX,
  type RosterImportResult,
  rosterImportAttributes,
} from '../operator/roster-import.ts';
import { ROSTER_COLUMNS } from '../operator/roster-row.ts';
import { csvCell } from '../reports/report-csv.ts';
import {
  type Command,
  inputPath,
  ORGANIZATION_OPTIONS,
  organizationFlag,
  positiveInteger,
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
    'when any line was rejected, and at once, writing nothing, when another import of the organization is running',
    '(here or through the API, in any process): one import of an organization at a time.',
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
        result = await importRoster(database, {
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

const INVITATION_COLUMNS = [
  'email',
  'first_name',
  'last_name',
  'invitation_code',
  'expires_at',
  'replaces_password',
] as const;

const inviteCommand: Command = {
  name: 'people invite',
  summary: 'Issue one-time codes with which workers set their password (or replace a lost one)',
  help: [
    'Usage: ewa people invite --organization ORGANIZATION_ID [--email EMAIL ... [--reset] | --reissue]',
    '                         [--valid-for-days DAYS] [--json]',
    '',
    'Without --email: a code for everyone with a job at the organization who has an email on the roster, no',
    'password and no code still valid, so running it again after each roster import invites the newcomers only.',
    '--reissue: everyone without a password gets a new code, which revokes any they hold; for codes printed but',
    'lost before they were sent on (output cut short by a full disk or `| head`: compare the count on standard error).',
    `With --email (repeat it, up to ${INVITATION_EMAILS_MAX}): a new code for each person named, which replaces any code`,
    'they hold. --reset also gives one to a person who has a password: using it replaces that password.',
    '',
    'A worker types the code on the sign-up page ("Create your password") with their email and a new password.',
    `Each code works once, until it expires (--valid-for-days, default ${INVITATION_VALID_DAYS_DEFAULT}, at most ${INVITATION_VALID_DAYS_MAX}). Only a hash is`,
    'kept: the codes are printed here once, for you to send to each worker (by mail merge, say), and never again.',
    '',
    `Output: CSV with the columns ${INVITATION_COLUMNS.join(',')}; with --json, one JSON object a line, with person_id too.`,
    'The count goes to standard error. Exit code 1 when a named email got no code (each is said, with why).',
  ].join('\n'),
  options: {
    ...ORGANIZATION_OPTIONS,
    email: { type: 'string', multiple: true },
    reset: { type: 'boolean' },
    reissue: { type: 'boolean' },
    'valid-for-days': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const organizationId = organizationFlag(flags);
    if (!organizationId) throw new UsageError('name the organization with --organization.');
    const emails = flags.email as string[] | undefined;
    if (flags.reset && !emails)
      throw new UsageError('--reset needs the people it is for, named with --email.');
    if (flags.reissue && emails)
      throw new UsageError(
        '--email replaces the codes of the people named already: --reissue is for everyone.',
      );
    if (emails && emails.length > INVITATION_EMAILS_MAX)
      throw new UsageError(`name at most ${INVITATION_EMAILS_MAX} people with --email.`);
    const validForDays =
      flags['valid-for-days'] === undefined
        ? INVITATION_VALID_DAYS_DEFAULT
        : positiveInteger('valid-for-days', flags['valid-for-days'], INVITATION_VALID_DAYS_MAX);
    return withMigratedDatabase(context, async ({ database }) => {
      // The header once there is something to head, or at the end: a refused run leaves no file that looks made.
      let headed = flags.json === true;
      const head = () => {
        if (!headed) writeLine(context.stdout, INVITATION_COLUMNS.join(','));
        headed = true;
      };
      const result = await issueInvitations(database.db, {
        organizationId,
        emails,
        reset: flags.reset === true,
        reissue: flags.reissue === true,
        validForDays,
        now: context.now?.() ?? new Date(),
        onIssued(batch) {
          const lines = batch.map((invitation) => {
            const record = invitationAttributes(invitation);
            return flags.json
              ? JSON.stringify(record)
              : INVITATION_COLUMNS.map((column) => csvCell(String(record[column]))).join(',');
          });
          head();
          writeLine(context.stdout, lines.join('\n'));
        },
      });
      head();
      for (const problem of result.problems) writeLine(context.stderr, `${problem.email}: ${problem.detail}`);
      writeLine(
        context.stderr,
        `Invited ${result.issued} ${result.issued === 1 ? 'person' : 'people'} of ${result.organizationName} (${result.organizationId}).`,
      );
      return result.problems.length > 0 ? 1 : 0;
    });
  },
};

const SIGN_UP_COLUMNS = [
  'email',
  'first_name',
  'last_name',
  'has_password',
  'invitation',
  'invited_at',
  'expires_at',
  'used_at',
  'replaces_password',
] as const;

const invitationsCommand: Command = {
  name: 'people invitations',
  summary: "List who of an organization's roster has signed up, and the state of each one's latest code",
  help: [
    'Usage: ewa people invitations --organization ORGANIZATION_ID [--pending] [--json]',
    '',
    'Everyone with a job at the organization and an email on the roster (the people `ewa people invite` is for),',
    'one line each: whether they have a password, and their latest code: NONE (never given one), OPEN (valid,',
    'not used), EXPIRED, USED or REVOKED (replaced by a later code), with when it was issued, expires and was used.',
    'The codes themselves are not kept and never shown. --pending: only the people without a password.',
    '',
    `Output: CSV with the columns ${SIGN_UP_COLUMNS.join(',')}; with --json, one JSON object a line, with`,
    'person_id too. Times are UTC (ISO 8601); a cell with no value is empty (null in JSON). The count goes to',
    'standard error.',
  ].join('\n'),
  options: { ...ORGANIZATION_OPTIONS, pending: { type: 'boolean' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const organizationId = organizationFlag(flags);
    if (!organizationId) throw new UsageError('name the organization with --organization.');
    return withMigratedDatabase(context, async ({ database }) => {
      // The header once the organization is found: a refused run prints nothing that looks like a list.
      let headed = flags.json === true;
      const head = () => {
        if (!headed) writeLine(context.stdout, SIGN_UP_COLUMNS.join(','));
        headed = true;
      };
      const result = await listRosterSignUps(database.db, {
        organizationId,
        pendingOnly: flags.pending === true,
        now: context.now?.() ?? new Date(),
        onPage(page) {
          const lines = page.map((person) => {
            const record = rosterSignUpAttributes(person);
            return flags.json
              ? JSON.stringify(record)
              : SIGN_UP_COLUMNS.map((column) => csvCell(String(record[column] ?? ''))).join(',');
          });
          head();
          writeLine(context.stdout, lines.join('\n'));
        },
      });
      head();
      writeLine(
        context.stderr,
        `Listed ${result.listed} ${result.listed === 1 ? 'person' : 'people'} of ${result.organizationName} (${result.organizationId}).`,
      );
      return 0;
    });
  },
};

export const peopleCommands: Command[] = [importCommand, inviteCommand, invitationsCommand];
