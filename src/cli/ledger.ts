import { sql } from 'kysely';
import { checkLedgerInvariants, LEDGER_RULE_COUNT } from '../ledger/invariants.ts';
import { type Command, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';
import { startProgress } from './progress.ts';

/** One rule's queries scan whole tables: each may take this long on a large database, then the check stops. */
const RULE_TIMEOUT_MS = 600_000;

/** Row values as JSON: sums of bigint columns come back as BigInt from some drivers. */
const plain = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

export const ledgerCheckCommand: Command = {
  name: 'ledger check',
  summary: 'Check the books: every money invariant over the whole database; exit 1 when one does not hold',
  help: [
    'Usage: ewa ledger check [--json]',
    '',
    'Checks every rule the ledger keeps (postings balance, kept balances equal their entries, no earnings',
    'balance below zero, paychecks and advances agree with their funding, …) as of one moment: the rules are read',
    'in one read-only transaction, so the server may go on serving meanwhile. Each broken rule is printed with up',
    'to 20 of the rows that break it. Exit 0 when the books hold, 1 when a rule does not. Each rule scans whole',
    `tables and may take up to ${RULE_TIMEOUT_MS / 60_000} minutes on a large database before the check gives up.`,
  ].join('\n'),
  options: { json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    return withMigratedDatabase(context, async ({ database }) => {
      const started = performance.now();
      const progress = startProgress(context, 'Checking the ledger rules', LEDGER_RULE_COUNT);
      const violations = await database.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (tx) => {
          await sql`select set_config('statement_timeout', ${String(RULE_TIMEOUT_MS)}, true)`.execute(tx);
          return checkLedgerInvariants(tx, (done) => progress.update(done));
        })
        .finally(() => progress.stop());
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (flags.json)
        writeLine(
          context.stdout,
          JSON.stringify({ holds: violations.length === 0, rules: LEDGER_RULE_COUNT, violations }, plain),
        );
      else if (violations.length === 0)
        writeLine(context.stdout, `The books hold: all ${LEDGER_RULE_COUNT} rules checked in ${seconds} s.`);
      else {
        writeLine(
          context.stdout,
          `${violations.length} of ${LEDGER_RULE_COUNT} rules do not hold (checked in ${seconds} s):`,
        );
        for (const { rule, rows } of violations) {
          writeLine(
            context.stdout,
            `- ${rule}: ${rows.length === 20 ? '20 or more' : rows.length} rows, such as`,
          );
          for (const row of rows.slice(0, 5)) writeLine(context.stdout, `    ${JSON.stringify(row, plain)}`);
        }
      }
      return violations.length === 0 ? 0 : 1;
    });
  },
};
