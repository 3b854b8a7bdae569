import { PAGE_KEY } from '../db/keyset-page.ts';
import { AppError } from '../errors/app-error.ts';
import { InputRefusedError } from '../errors/input-error.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import {
  OVERPAYMENT_INSTALLMENTS_MAX,
  OVERPAYMENT_STATUSES,
  type OverpaymentRow,
  overpaymentAttributes,
  type Resolution,
} from '../money/overpayments/overpayment.ts';
import { resolveOverpaymentById, writeOffOverpayment } from '../money/overpayments/overpayment-service.ts';
import {
  findOverpayment,
  listOverpayments,
  OVERPAYMENT_LIST_ORDER,
} from '../money/overpayments/overpayment-store.ts';
import { encodeCursor, PAGE_SIZE_MAX, readPage } from '../platform/pagination.ts';
import {
  type Command,
  ORGANIZATION_OPTIONS,
  organizationFlag,
  positiveInteger,
  UsageError,
  uuidValue,
  writeLine,
} from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

function json(row: OverpaymentRow) {
  return { id: row.id, ...overpaymentAttributes(row) };
}

function line(row: OverpaymentRow): string {
  const a = overpaymentAttributes(row);
  return `${row.id}  ${a.status.padEnd(19)} ${String(a.remaining_minor).padStart(9)} of ${String(a.amount_minor).padStart(9)} ${a.currency}  person ${a.person_id}  ${a.resolution ?? '-'}`;
}

function oneId(positionals: readonly string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one overpayment id.');
  return uuidValue('the overpayment id', positionals[0]!).toLowerCase();
}

function nowOf(context: { now?: () => Date }): Date {
  return (context.now ?? (() => new Date()))();
}

const list: Command = {
  name: 'overpayments list',
  summary: 'List overpayments, oldest found first',
  help: [
    'Usage: ewa overpayments list [--status STATUS] [--person ID] [--organization ID] [--limit N] [--after CURSOR] [--json]',
    '',
    `--status: one of ${OVERPAYMENT_STATUSES.join(', ')}. At most --limit (1 to ${PAGE_SIZE_MAX}, the default);`,
    'when more follow, the last line (or "next" of --json) is the --after cursor of the next page.',
  ].join('\n'),
  options: {
    status: { type: 'string' },
    person: { type: 'string' },
    ...ORGANIZATION_OPTIONS,
    limit: { type: 'string' },
    after: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const status = flags.status;
    if (status !== undefined && !(OVERPAYMENT_STATUSES as readonly unknown[]).includes(status))
      throw new UsageError(
        `--status must be one of ${OVERPAYMENT_STATUSES.join(', ')} (got "${String(status)}").`,
      );
    const personId = typeof flags.person === 'string' ? uuidValue('--person', flags.person) : undefined;
    const organizationId = organizationFlag(flags);
    const size =
      flags.limit === undefined ? PAGE_SIZE_MAX : positiveInteger('limit', flags.limit, PAGE_SIZE_MAX);
    let page: ReturnType<typeof readPage>;
    try {
      page = readPage(
        { 'page[size]': String(size), ...(flags.after === undefined ? {} : { 'page[after]': flags.after }) },
        OVERPAYMENT_LIST_ORDER,
      );
    } catch (error) {
      if (error instanceof AppError) throw new UsageError(`--after: ${error.detail}`);
      throw error;
    }
    return withMigratedDatabase(context, async ({ database }) => {
      const rows = await listOverpayments(
        database.db,
        { status: status as string | undefined, personId, organizationId },
        page,
      );
      const items = rows.slice(0, size);
      const last = items[items.length - 1];
      const next =
        rows.length > size && last
          ? encodeCursor(OVERPAYMENT_LIST_ORDER, last[PAGE_KEY], last.id)
          : undefined;
      if (flags.json)
        writeLine(context.stdout, JSON.stringify({ data: items.map(json), next: next ?? null }));
      else {
        if (items.length === 0) writeLine(context.stdout, 'No overpayments.');
        for (const row of items) writeLine(context.stdout, line(row));
        if (next) writeLine(context.stdout, `next: ewa overpayments list --after ${next}`);
      }
      return 0;
    });
  },
};

const show: Command = {
  name: 'overpayments show',
  summary: 'One overpayment: amount, recovered, written off, status, resolution, periods seen',
  help: 'Usage: ewa overpayments show OVERPAYMENT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = oneId(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      const row = await findOverpayment(database.db, id);
      if (!row) throw new InputRefusedError(`No overpayment ${id}.`);
      if (flags.json) writeLine(context.stdout, JSON.stringify(json(row)));
      else
        for (const [key, value] of Object.entries(json(row)))
          writeLine(context.stdout, `${key.padEnd(20)} ${value ?? '-'}`);
      return 0;
    });
  },
};

const resolve: Command = {
  name: 'overpayments resolve',
  summary: 'Choose (or change) how an open overpayment is recovered from later paychecks of its job',
  help: [
    'Usage: ewa overpayments resolve OVERPAYMENT_ID (--next-paycheck | --installments N) [--json]',
    '',
    `--installments: spread over the next N paychecks (2 to ${OVERPAYMENT_INSTALLMENTS_MAX}). Never from a bank account or`,
    'card; no fee, no interest.',
  ].join('\n'),
  options: {
    'next-paycheck': { type: 'boolean' },
    installments: { type: 'string' },
    json: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = oneId(positionals);
    if ((flags['next-paycheck'] === true) === (flags.installments !== undefined))
      throw new UsageError('give --next-paycheck or --installments N, one of them.');
    let resolution: Resolution = { kind: 'NEXT_PAYCHECK' };
    if (flags.installments !== undefined) {
      const text = String(flags.installments);
      const installments = Number(text);
      if (!/^\d{1,2}$/.test(text) || installments < 2 || installments > OVERPAYMENT_INSTALLMENTS_MAX)
        throw new UsageError(
          `--installments must be a whole number from 2 to ${OVERPAYMENT_INSTALLMENTS_MAX} (got "${text}"); one paycheck is --next-paycheck.`,
        );
      resolution = { kind: 'INSTALLMENTS', installments };
    }
    return withMigratedDatabase(context, async ({ database }) => {
      const row = await resolveOverpaymentById(database.db, {
        overpaymentId: id,
        resolution,
        now: nowOf(context),
      });
      writeLine(context.stdout, flags.json ? JSON.stringify(json(row)) : line(row));
      return 0;
    });
  },
};

const writeOff: Command = {
  name: 'overpayments write-off',
  summary:
    'Write off what is left of an open overpayment now (the person becomes DELINQUENT if the policy says so)',
  help: 'Usage: ewa overpayments write-off OVERPAYMENT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = oneId(positionals);
    return withMigratedDatabase(context, async ({ database }) => {
      const row = await writeOffOverpayment(database.db, new SystemLedger(database.db), {
        overpaymentId: id,
        now: nowOf(context),
      });
      writeLine(context.stdout, flags.json ? JSON.stringify(json(row)) : line(row));
      return 0;
    });
  },
};

export const overpaymentCommands: readonly Command[] = [list, show, resolve, writeOff];
