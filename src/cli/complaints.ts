import {
  COMPLAINT_CHANNELS,
  COMPLAINT_STATUSES,
  type Complaint,
  checkComplaintText,
  checkOpening,
  isComplaintStatus,
} from '../complaints/complaint.ts';
import {
  type ComplaintTransition,
  findComplaint,
  listComplaints,
  moveComplaint,
  openComplaint,
} from '../complaints/complaint-store.ts';
import { isUsState } from '../domain/us-states.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import {
  type CliContext,
  type Command,
  type Flags,
  ORGANIZATION_OPTIONS,
  organizationFlag,
  UsageError,
  uuidValue,
  writeLine,
} from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

const clock = (context: CliContext) => (context.now ?? (() => new Date()))();

function complaintLine(complaint: Complaint): string {
  return `${complaint.id}  ${complaint.status.padEnd(8)} ${complaint.state}  ${complaint.opened_at}  ${complaint.channel.padEnd(9)} ${complaint.summary}`;
}

function printComplaint(context: CliContext, flags: Flags, complaint: Complaint): void {
  if (flags.json) writeLine(context.stdout, JSON.stringify(complaint));
  else
    for (const [key, value] of Object.entries(complaint))
      writeLine(context.stdout, `${key.padEnd(16)} ${value ?? '-'}`);
}

/** A field's InputError as wrong usage naming the flag (`--summary`), a refusal of the records as it is. */
function asFlags<T>(flagOf: Record<string, string>, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof InputError) || error instanceof InputRefusedError) throw error;
    const flag = flagOf[error.field ?? ''];
    throw new UsageError(flag ? error.message.replace(/^\S+/, flag) : error.message);
  }
}

const open: Command = {
  name: 'complaints open',
  summary: 'Record a complaint received (counted by the states’ reports)',
  help: [
    'Usage: ewa complaints open --org ORGANIZATION_ID [--person PERSON_ID] [--state XX] --channel CHANNEL',
    '                           --summary TEXT [--json]',
    '',
    `--channel: ${COMPLAINT_CHANNELS.join(', ')}.`,
    'The complaint counts in the state the person lives in now (kept if they move later); --state is needed only',
    'when no person is named or the person has no state on record, and must agree with the record otherwise.',
  ].join('\n'),
  options: {
    ...ORGANIZATION_OPTIONS,
    person: { type: 'string' },
    state: { type: 'string' },
    channel: { type: 'string' },
    summary: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const organization = organizationFlag(flags);
    if (organization === undefined) throw new UsageError('--org names the employer the complaint concerns.');
    const opening = asFlags(
      { person_id: '--person', state: '--state', channel: '--channel', summary: '--summary' },
      () =>
        checkOpening({
          organization_id: organization,
          person_id: flags.person === undefined ? undefined : uuidValue('--person', String(flags.person)),
          state: flags.state,
          channel: flags.channel,
          summary: flags.summary,
        }),
    );
    return withMigratedDatabase(context, async ({ database }) => {
      // A state that disagrees with the person's record is an InputError: wrong usage (2), nothing written.
      const complaint = await openComplaint(database.db, opening, clock(context));
      printComplaint(context, flags, complaint);
      return 0;
    });
  },
};

function transitionCommand(transition: ComplaintTransition): Command {
  const flag = transition === 'answer' ? 'answer' : 'resolution';
  return {
    name: `complaints ${transition}`,
    summary:
      transition === 'answer'
        ? 'Record the answer given to an OPEN complaint (it becomes ANSWERED)'
        : 'Close an OPEN or ANSWERED complaint with its resolution (it becomes CLOSED)',
    help: [
      `Usage: ewa complaints ${transition} COMPLAINT_ID --${flag} TEXT [--json]`,
      '',
      transition === 'answer'
        ? 'Refused (exit 1) unless the complaint is OPEN; of two answers sent at once, one is recorded.'
        : 'Refused (exit 1) when it is CLOSED already. Closed straight from OPEN (withdrawn, resolved at once), it has no answer.',
    ].join('\n'),
    options: { [flag]: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    async run(flags, positionals, context) {
      if (positionals.length !== 1) throw new UsageError('name one complaint id.');
      const id = uuidValue('the complaint id', positionals[0]!).toLowerCase();
      const text = asFlags({ [flag]: `--${flag}` }, () => checkComplaintText(flag, flags[flag]));
      return withMigratedDatabase(context, async ({ database }) => {
        printComplaint(
          context,
          flags,
          await moveComplaint(database.db, id, transition, text, clock(context)),
        );
        return 0;
      });
    },
  };
}

const list: Command = {
  name: 'complaints list',
  summary: 'List the complaints, newest first',
  help: [
    'Usage: ewa complaints list [--state XX] [--status OPEN|ANSWERED|CLOSED] [--org ORGANIZATION_ID] [--json]',
    '',
    'Each line: id, status, state, opened at, channel, summary.',
  ].join('\n'),
  options: {
    ...ORGANIZATION_OPTIONS,
    state: { type: 'string' },
    status: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(flags, _positionals, context) {
    const { state, status } = flags;
    if (state !== undefined && (typeof state !== 'string' || !isUsState(state)))
      throw new UsageError(
        `--state must be the two-letter code of a US state or DC, such as WI (got "${state}").`,
      );
    if (status !== undefined && (typeof status !== 'string' || !isComplaintStatus(status)))
      throw new UsageError(`--status must be one of ${COMPLAINT_STATUSES.join(', ')} (got "${status}").`);
    const organizationId = organizationFlag(flags);
    return withMigratedDatabase(context, async ({ database }) => {
      const complaints = await listComplaints(database.db, {
        state: state as string | undefined,
        status: status as Complaint['status'] | undefined,
        organizationId,
      });
      if (flags.json)
        writeLine(
          context.stdout,
          JSON.stringify(complaints.map(({ page_key: _key, ...complaint }) => complaint)),
        );
      else for (const complaint of complaints) writeLine(context.stdout, complaintLine(complaint));
      return 0;
    });
  },
};

const show: Command = {
  name: 'complaints show',
  summary: 'One complaint: its record, answer and resolution',
  help: 'Usage: ewa complaints show COMPLAINT_ID [--json]',
  options: { json: { type: 'boolean' } },
  allowPositionals: true,
  async run(flags, positionals, context) {
    if (positionals.length !== 1) throw new UsageError('name one complaint id.');
    const id = uuidValue('the complaint id', positionals[0]!).toLowerCase();
    return withMigratedDatabase(context, async ({ database }) => {
      printComplaint(context, flags, await findComplaint(database.db, id));
      return 0;
    });
  },
};

export const complaintCommands: readonly Command[] = [
  open,
  transitionCommand('answer'),
  transitionCommand('close'),
  list,
  show,
];
