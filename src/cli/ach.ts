import {
  ACH_RETURN_LISTING_MAX,
  listReturnFiles,
  listUnmatchedReturns,
  type ReturnFileRecord,
  type UnmatchedReturnRecord,
} from '../rails/ach/ach-return-records.ts';
import { type Command, positiveInteger, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const LIMIT_DEFAULT = 100;

function money(minor: number): string {
  return `${(minor / 100).toFixed(2)} USD`;
}

function fileLine(file: ReturnFileRecord): string {
  const what =
    file.status === 'REFUSED'
      ? `REFUSED  ${file.error}`
      : `READ     ${file.returns} return(s), ${file.unmatched} unmatched`;
  return `${file.read_at}  ${file.file_name}  sha256 ${file.sha256.slice(0, 16)}  ${what}`;
}

function unmatchedLine(r: UnmatchedReturnRecord): string {
  const reason = r.return_reason ? ` (${r.return_reason})` : '';
  const addenda = r.addenda_information ? `  "${r.addenda_information}"` : '';
  return `${r.received_at}  ${r.file_name} #${r.position}  ${r.return_code}${reason}  trace ${r.original_trace_number}  ${money(r.amount_minor)}  id ${r.individual_id || '-'}  transaction code ${r.transaction_code}${addenda}`;
}

const returns: Command = {
  name: 'ach returns',
  summary: 'The ACH return files read (refused ones with why), and the returns that matched nothing',
  help: [
    'Usage: ewa ach returns [--unmatched] [--limit N] [--json]',
    '',
    'Without a flag: the return files read from EWA_ACH_INBOUND_DIR, latest first: when, name, the first 16',
    'characters of its SHA-256, and READ with its return count and how many matched nothing, or REFUSED with the',
    'reason (a record that does not read, controls that do not add up, a file not addressed to us).',
    '--unmatched: the returns that matched no entry of ours, or not its amount (nothing was applied for them),',
    'latest first: when and in which file (#N: its Nth return), the return code, the original trace number, the',
    'amount, the individual id, the transaction code and the addenda information the bank gave.',
    `At most --limit rows (1 to ${ACH_RETURN_LISTING_MAX}; ${LIMIT_DEFAULT} by default). --json: {"data": [...]}.`,
  ].join('\n'),
  options: {
    unmatched: { type: 'boolean' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const limit =
      flags.limit === undefined
        ? LIMIT_DEFAULT
        : positiveInteger('limit', flags.limit, ACH_RETURN_LISTING_MAX);
    return withMigratedDatabase(context, async ({ database }) => {
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
