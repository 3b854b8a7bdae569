import { SystemLedger } from '../ledger/ledger-accounts.ts';
import { REPAID_REFERENCE_MAX, recordReturnRepaid, repaidReferenceProblem } from '../money/returns-repaid.ts';
import { decimalAmount } from '../operator/decimal-amount.ts';
import { type Command, UsageError, uuidValue, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const repaid: Command = {
  name: 'returns repaid',
  summary: 'Record that an item owed back (ewa reports returns) was paid to its worker by other means',
  help: [
    'Usage: ewa returns repaid ID --reference TEXT [--json]',
    '',
    'ID: the id of a line of `ewa reports returns` (the paycheck of a returned payout, the transfer of a returned',
    `advance). --reference: your record of the payment (a wire or check number), 1 to ${REPAID_REFERENCE_MAX} characters.`,
    'The whole item leaves RETURNS_PAYABLE (a RETURN_REPAID ledger movement against provider funding) and the',
    'report; an item is recorded once. Nothing is sent to the worker or their bank.',
  ].join('\n'),
  options: { reference: { type: 'string' }, json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    if (positionals.length !== 1) throw new UsageError('name one item id (a line of ewa reports returns).');
    const id = uuidValue('the item id', positionals[0]!).toLowerCase();
    if (typeof flags.reference !== 'string') throw new UsageError('--reference is required.');
    const problem = repaidReferenceProblem(flags.reference);
    if (problem) throw new UsageError(`--reference ${problem}.`);
    const reference = flags.reference;
    return withMigratedDatabase(context, async ({ database }) => {
      const row = await recordReturnRepaid(database.db, new SystemLedger(database.db), {
        id,
        reference,
        now: (context.now ?? (() => new Date()))(),
      });
      const amount = decimalAmount(row.amount_minor, row.currency);
      writeLine(
        context.stdout,
        flags.json
          ? JSON.stringify({ ...row, amount })
          : `${row.kind} ${row.id} repaid: ${amount} ${row.currency} to person ${row.person_id}, reference ${JSON.stringify(row.reference)}`,
      );
      return 0;
    });
  },
};

export const returnsCommands: readonly Command[] = [repaid];
