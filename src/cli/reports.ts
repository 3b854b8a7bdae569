import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { namedOrganization } from '../operator/organizations.ts';
import { remittanceReport } from '../reports/remittance-report.ts';
import { csvCell, remittanceCsv, stateReportCsv } from '../reports/report-csv.ts';
import { readFormat, readRemittanceInput, readStateReportInput } from '../reports/report-input.ts';
import {
  eachReturnsPayablePage,
  RETURNS_PAYABLE_COLUMNS,
  RETURNS_TOTALS_MAX,
  returnsPayableTotals,
} from '../reports/returns-report.ts';
import { stateReport } from '../reports/state-report.ts';
import {
  type Command,
  type Flags,
  ORGANIZATION_OPTIONS,
  organizationFlag,
  UsageError,
  writeLine,
} from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const text = (flags: Flags, name: string) => {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
};

/** The report inputs' names as flags: `pay_date` is `--pay-date`, `organization` is `--org`. */
const FLAG_OF: Record<string, string> = { pay_date: '--pay-date', organization: '--org' };

/** Input refused on its face is wrong usage (exit 2), worded with the flag's name. */
function asUsage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof InputError) || error instanceof InputRefusedError) throw error;
    const field = error.field ?? '';
    const flag = FLAG_OF[field] ?? `--${field}`;
    // The message starts with the field's name: "year must be …" reads "--year must be …".
    throw new UsageError(
      error.message.startsWith(field) ? flag + error.message.slice(field.length) : error.message,
    );
  }
}

const state: Command = {
  name: 'reports state',
  summary: 'A state regulator’s report: advances, users, amounts, fees and complaints of a period',
  help: [
    'Usage: ewa reports state --state XX (--year YYYY [--quarter N | --half N] | --from YYYY-MM-DD --to YYYY-MM-DD)',
    '                         [--format json|csv]',
    '',
    'Days are UTC days. Advances count in the state the person lived in when each was made; failed and returned',
    'advances are counted apart. Amounts are minor units (cents). JSON by default; --format csv: one line per currency.',
    'Example: ewa reports state --state WI --year 2026',
  ].join('\n'),
  options: {
    state: { type: 'string' },
    year: { type: 'string' },
    quarter: { type: 'string' },
    half: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    format: { type: 'string' },
  },
  async run(flags, _positionals, context) {
    const format = asUsage(() => readFormat(text(flags, 'format')));
    const input = asUsage(() =>
      readStateReportInput({
        state: text(flags, 'state'),
        year: text(flags, 'year'),
        quarter: text(flags, 'quarter'),
        half: text(flags, 'half'),
        from: text(flags, 'from'),
        to: text(flags, 'to'),
      }),
    );
    return withMigratedDatabase(context, async ({ database }) => {
      const report = await stateReport(database.db, input.state, input.period);
      if (format === 'csv') context.stdout.write(stateReportCsv(report));
      else writeLine(context.stdout, JSON.stringify(report));
      return 0;
    });
  },
};

const remittance: Command = {
  name: 'reports remittance',
  summary: 'What an employer running its own payroll deducts from each paycheck on payday',
  help: [
    'Usage: ewa reports remittance --org ORGANIZATION_ID (--pay-date YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD)',
    '                              [--format json|csv]',
    '',
    'One line per paycheck paid on those days (in the employer’s time zone) that carries a deduction: the advances',
    'it funded (its total_debited). Amounts are minor units. An ESTIMATED paycheck’s period is still open: its',
    'deduction may grow until the period closes. Only for an employer whose payday_payout is EMPLOYER (it runs',
    'payroll itself); another is refused with exit code 1.',
  ].join('\n'),
  options: {
    org: { type: 'string' },
    organization: { type: 'string' },
    'pay-date': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    format: { type: 'string' },
  },
  async run(flags, _positionals, context) {
    const format = asUsage(() => readFormat(text(flags, 'format')));
    if (flags.org !== undefined && flags.organization !== undefined && flags.org !== flags.organization)
      throw new UsageError('--org is another name for --organization: give one of them.');
    const input = asUsage(() =>
      readRemittanceInput({
        organization: text(flags, 'org') ?? text(flags, 'organization'),
        pay_date: text(flags, 'pay-date'),
        from: text(flags, 'from'),
        to: text(flags, 'to'),
      }),
    );
    return withMigratedDatabase(context, async ({ database }) => {
      const report = await remittanceReport(database.db, input.organizationId, input.from, input.to);
      if (format === 'csv') context.stdout.write(remittanceCsv(report));
      else writeLine(context.stdout, JSON.stringify(report));
      return 0;
    });
  },
};

const returns: Command = {
  name: 'reports returns',
  summary: 'What is owed back to workers: returned payday payouts and advances returned after payday',
  help: [
    'Usage: ewa reports returns [--organization ORGANIZATION_ID] [--format json|csv]',
    '',
    'One line per item the ledger holds in RETURNS_PAYABLE, owed to the worker again, oldest return first: kind',
    'PAYOUT (a payday payout the bank returned: the paycheck) or ADVANCE (an advance returned after the paycheck that',
    'funded it was paid: the transfer, fee included), its id, the person and email, the organization, the amount in',
    "minor units and as a decimal, the currency, the return code (or the rail's reason) and when it came back. Totals",
    "per organization and currency are set beside the balance of the ledger's RETURNS_PAYABLE account: the exit",
    'code is 1 when one differs. Nothing here pays the money: pay it by other means.',
    '',
    'JSON by default: one document, the totals first, then the lines, read and written a thousand at a time.',
    `--format csv: the lines (the columns ${RETURNS_PAYABLE_COLUMNS.join(',')}), the totals on standard error.`,
    `Totals list at most ${RETURNS_TOTALS_MAX.toLocaleString('en')} organization/currency pairs, those differing first.`,
  ].join('\n'),
  options: { ...ORGANIZATION_OPTIONS, format: { type: 'string' } },
  async run(flags, _positionals, context) {
    const format = asUsage(() => readFormat(text(flags, 'format')));
    const organizationId = organizationFlag(flags);
    return withMigratedDatabase(context, async ({ database }) => {
      const organization =
        organizationId === undefined ? undefined : await namedOrganization(database.db, organizationId);
      // One snapshot: the lines, their totals and the ledger's balance as of one moment.
      const totals = await database.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (tx) => {
          const found = await returnsPayableTotals(tx, organization?.id);
          let first = true;
          if (format === 'csv') writeLine(context.stdout, RETURNS_PAYABLE_COLUMNS.join(','));
          else {
            const head = JSON.stringify({
              organization_id: organization?.id ?? null,
              organization_name: organization?.name ?? null,
              ...found,
            });
            writeLine(context.stdout, `${head.slice(0, -1)},"lines":[`);
          }
          await eachReturnsPayablePage(tx, organization?.id, (lines) => {
            if (format === 'csv')
              writeLine(
                context.stdout,
                lines
                  .map((line) => RETURNS_PAYABLE_COLUMNS.map((column) => csvCell(line[column])).join(','))
                  .join('\n'),
              );
            else
              writeLine(
                context.stdout,
                `${first ? '' : ','}${lines.map((line) => JSON.stringify(line)).join(',\n')}`,
              );
            first = false;
          });
          if (format === 'json') writeLine(context.stdout, ']}');
          return found;
        });
      for (const total of totals.totals)
        writeLine(
          context.stderr,
          `${total.organization_id} ${total.currency}: ${total.items} owed, ${total.amount} ${total.currency}; ` +
            `ledger RETURNS_PAYABLE ${total.ledger} ${total.currency}${total.differs ? ': DIFFERS' : ''}`,
        );
      if (totals.totals.length === 0)
        writeLine(context.stderr, `Nothing is owed back${organization ? ` by ${organization.name}` : ''}.`);
      if (totals.totals_truncated)
        writeLine(
          context.stderr,
          `More than ${RETURNS_TOTALS_MAX} organization/currency pairs hold money: name one with --organization.`,
        );
      if (totals.reconciled) return 0;
      writeLine(
        context.stderr,
        "ewa reports returns: the items owed differ from the ledger's RETURNS_PAYABLE balance (DIFFERS above): " +
          'run ewa ledger check.',
      );
      return 1;
    });
  },
};

export const reportCommands: readonly Command[] = [state, remittance, returns];
