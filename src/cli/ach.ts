import {
  ACH_RETURN_LISTING_MAX,
  type ChangeNotificationRecord,
  listChangeNotifications,
  listReturnFiles,
  listUnmatchedReturns,
  type ReturnFileRecord,
  type UnmatchedReturnRecord,
} from '../rails/ach/ach-return-records.ts';
import { type Command, positiveInteger, UsageError, writeLine } from './command.ts';
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

const returns: Command = {
  name: 'ach returns',
  summary:
    'The ACH return files read (refused ones with why), the returns that matched nothing, the notifications of change',
  help: [
    'Usage: ewa ach returns [--unmatched | --changes] [--limit N] [--json]',
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
    `At most --limit rows (1 to ${ACH_RETURN_LISTING_MAX}; ${LIMIT_DEFAULT} by default). --json: {"data": [...]}.`,
  ].join('\n'),
  options: {
    unmatched: { type: 'boolean' },
    changes: { type: 'boolean' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const limit =
      flags.limit === undefined
        ? LIMIT_DEFAULT
        : positiveInteger('limit', flags.limit, ACH_RETURN_LISTING_MAX);
    if (flags.unmatched && flags.changes) throw new UsageError('give one of --unmatched and --changes.');
    return withMigratedDatabase(context, async ({ database }) => {
      if (flags.changes) {
        const rows = await listChangeNotifications(database.db, limit);
        if (flags.json) writeLine(context.stdout, JSON.stringify({ data: rows }));
        else if (rows.length === 0) writeLine(context.stdout, 'No notifications of change.');
        else for (const row of rows) writeLine(context.stdout, changeLine(row));
        return 0;
      }
      if (flags.unmatched) {
        const rows = await listUnmatchedReturns(database.db, limit);
        if (flags.json) writeLine(context.stdout, JSON.stringify({ data: rows }));
        else if (rows.length === 0) writeLine(context.stdout, 'No unmatched returns.');
        else for (const row of rows) writeLine(context.stdout, unmatchedLine(row));
        return 0;
      }
      const rows = await listReturnFiles(database.db, limit);
      if (flags.json) writeLine(context.stdout, JSON.stringify({ data: rows }));
      else if (rows.length === 0) writeLine(context.stdout, 'No return files read.');
      else for (const row of rows) writeLine(context.stdout, fileLine(row));
      return 0;
    });
  },
};

export const achCommands: readonly Command[] = [returns];
