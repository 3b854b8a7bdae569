import { type AchReturnListing, decodeAchReturnCursor } from '../rails/ach/ach-return-cursor.ts';
import {
  ACH_RETURN_LISTING_MAX,
  type AchReturnPage,
  type ChangeNotificationRecord,
  listChangeNotifications,
  listReturnFiles,
  listUnmatchedReturns,
  type ReturnFileRecord,
  type UnmatchedReturnRecord,
} from '../rails/ach/ach-return-records.ts';
import { type CliContext, type Command, positiveInteger, UsageError, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const LIMIT_DEFAULT = 100;

function money(minor: number): string {
  return `${(minor / 100).toFixed(2)} USD`;
}

/**
 * A file's name as a line of text shows it: names come from whoever writes to the inbound folder, and one with a
 * line break or a terminal's escape sequences could otherwise forge lines of the listing (a refused file shown as
 * read) or clear the screen. A name of printable ASCII only is shown as it is, any other quoted with escapes.
 */
function shownName(name: string): string {
  return /^[\x20-\x7e]*$/.test(name)
    ? name
    : JSON.stringify(name).replace(
        /[^\x20-\x7e]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
}

function fileLine(file: ReturnFileRecord): string {
  const what =
    file.status === 'REFUSED'
      ? `REFUSED  ${file.error}`
      : `READ     ${file.returns} return(s): ${file.applied} applied, ${file.already_returned} already returned, ` +
        `${file.unmatched} unmatched; ${file.notifications} notification(s) of change`;
  return `${file.read_at}  ${shownName(file.file_name)}  sha256 ${file.sha256.slice(0, 16)}  ${what}`;
}

function unmatchedLine(r: UnmatchedReturnRecord): string {
  const reason = r.return_reason ? ` (${r.return_reason})` : '';
  const addenda = r.addenda_information ? `  "${r.addenda_information}"` : '';
  return `${r.received_at}  ${shownName(r.file_name)} #${r.position}  ${r.return_code}${reason}  trace ${r.original_trace_number}  ${money(r.amount_minor)}  id ${r.individual_id || '-'}  transaction code ${r.transaction_code}${addenda}`;
}

function changeLine(n: ChangeNotificationRecord): string {
  const reason = n.change_reason ? ` (${n.change_reason})` : '';
  const entry = n.entry
    ? `${n.entry.purpose} ${n.entry.reference} of ${n.entry.effective_date}, account ${n.entry.account_id} (routing number now ${n.entry.account_routing_number ?? '-'}), person ${n.entry.person_id ?? '-'}`
    : 'no entry of ours';
  return `${n.received_at}  ${shownName(n.file_name)} #${n.position}  ${n.change_code}${reason}  corrected data "${n.corrected_data}"  trace ${n.original_trace_number}  ${entry}`;
}

/**
 * A page as the operator reads it: --json `{"data": [...], "next": cursor | null}`, or a line a row and, when more
 * follow, a last line with the command that gives the next page (as `ewa overpayments list` does).
 */
function writePage<R>(
  context: CliContext,
  json: boolean,
  page: AchReturnPage<R>,
  text: { empty: string; line: (row: R) => string; command: string },
): number {
  if (json) writeLine(context.stdout, JSON.stringify({ data: page.items, next: page.next }));
  else {
    if (page.items.length === 0) writeLine(context.stdout, text.empty);
    for (const row of page.items) writeLine(context.stdout, text.line(row));
    if (page.next) writeLine(context.stdout, `next: ${text.command} --after ${page.next}`);
  }
  return 0;
}

const returns: Command = {
  name: 'ach returns',
  summary:
    'The ACH return files read (refused ones with why), the returns that matched nothing, the notifications of change',
  help: [
    'Usage: ewa ach returns [--unmatched | --changes] [--limit N] [--after CURSOR] [--json]',
    '',
    'Without a flag: the return files read from EWA_ACH_INBOUND_DIR, latest first: when, name, the first 16',
    'characters of its SHA-256, and READ with its return count and how many matched nothing, or REFUSED with the',
    'reason (a record that does not read, controls that do not add up, a file not addressed to us).',
    '--unmatched: the returns that matched no entry of ours, or not its amount (nothing was applied for them),',
    'latest first: when and in which file (#N: its Nth return), the return code, the original trace number, the',
    'amount, the individual id, the transaction code and the addenda information the bank gave.',
    '--changes: the notifications of change (COR entries: the bank says how to correct a bank account), latest',
    'first: the change code in words, the corrected data as the bank gave it (addenda columns 36-64), the original',
    'trace number, and the entry it is about: payment, account (with its routing number now) and person. Nothing',
    "applies them: the bank details are the worker's; update them through the worker (or by hand) and the next",
    'entries go out corrected.',
    `At most --limit rows a page (1 to ${ACH_RETURN_LISTING_MAX}; ${LIMIT_DEFAULT} by default); when more follow, the last`,
    "line is the command of the next page (next: ... --after CURSOR), which starts after this page's last row:",
    'files read in between neither repeat a row nor skip one. --json: {"data": [...], "next": CURSOR or null}.',
  ].join('\n'),
  options: {
    unmatched: { type: 'boolean' },
    changes: { type: 'boolean' },
    limit: { type: 'string' },
    after: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const size =
      flags.limit === undefined
        ? LIMIT_DEFAULT
        : positiveInteger('limit', flags.limit, ACH_RETURN_LISTING_MAX);
    if (flags.unmatched && flags.changes) throw new UsageError('give one of --unmatched and --changes.');
    const which = flags.changes ? '--changes' : flags.unmatched ? '--unmatched' : undefined;
    const listing: AchReturnListing = flags.changes
      ? 'ach-change-notifications'
      : flags.unmatched
        ? 'ach-unmatched-returns'
        : 'ach-return-files';
    const after = flags.after === undefined ? undefined : decodeAchReturnCursor(listing, String(flags.after));
    if (flags.after !== undefined && !after)
      throw new UsageError(
        `--after is not a cursor of this listing${which ? ` (${which})` : ''}: take it, unchanged, from the "next" line (or "next" of --json) of the page before.`,
      );
    const command = [
      'ewa ach returns',
      ...(which ? [which] : []),
      ...(flags.limit === undefined ? [] : [`--limit ${size}`]),
    ].join(' ');
    const json = flags.json === true;
    return withMigratedDatabase(context, async ({ database }) => {
      const page = { size, after };
      if (listing === 'ach-change-notifications')
        return writePage(context, json, await listChangeNotifications(database.db, page), {
          empty: 'No notifications of change.',
          line: changeLine,
          command,
        });
      if (listing === 'ach-unmatched-returns')
        return writePage(context, json, await listUnmatchedReturns(database.db, page), {
          empty: 'No unmatched returns.',
          line: unmatchedLine,
          command,
        });
      return writePage(context, json, await listReturnFiles(database.db, page), {
        empty: 'No return files read.',
        line: fileLine,
        command,
      });
    });
  },
};

export const achCommands: readonly Command[] = [returns];
