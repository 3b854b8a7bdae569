import { ComplianceFileError } from '../compliance/state-rules.ts';
import { ConfigError } from '../config.ts';
import { DataDirBusyError, DataDirUnusableError } from '../db/data-dir-lock.ts';
import { DatabaseUnavailableError } from '../db/database-unavailable.ts';
import { MigrationError } from '../db/migrate.ts';
import { NotAClusterError } from '../db/not-a-cluster-error.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { achCommands } from './ach.ts';
import { clientCommands } from './clients.ts';
import { type CliContext, type Command, parseFlags, UsageError, writeLine } from './command.ts';
import { complaintCommands } from './complaints.ts';
import { complianceCommands } from './compliance.ts';
import { disclosureCommands } from './disclosures.ts';
import { earningsCommands } from './earnings.ts';
import { jobCommands } from './jobs.ts';
import { keysRotateCommand } from './keys.ts';
import { ledgerCheckCommand } from './ledger.ts';
import { migrateCommand } from './migrate.ts';
import { organizationCommands } from './orgs.ts';
import { overpaymentCommands } from './overpayments.ts';
import { payrollCommands } from './payroll.ts';
import { peopleCommands } from './people.ts';
import { reportCommands } from './reports.ts';
import { returnsCommands } from './returns.ts';
import { sandboxCommands } from './sandbox.ts';
import { seedCommand } from './seed.ts';
import { serveCommand } from './serve.ts';
import { tokensIssueCommand } from './tokens.ts';
import { webhookCommands } from './webhooks.ts';

export const COMMANDS: readonly Command[] = [
  serveCommand,
  migrateCommand,
  seedCommand,
  ...clientCommands,
  ...organizationCommands,
  ...peopleCommands,
  ...jobCommands,
  ...earningsCommands,
  ...payrollCommands,
  ...achCommands,
  ...sandboxCommands,
  ...webhookCommands,
  ...complianceCommands,
  ...disclosureCommands,
  ...complaintCommands,
  ...reportCommands,
  ...returnsCommands,
  ...overpaymentCommands,
  ledgerCheckCommand,
  keysRotateCommand,
  tokensIssueCommand,
];

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const lines = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return [
    'ewa — earned-wage access server and operator tools',
    '',
    'Usage: ewa <command> [flags]     (ewa <command> --help for its flags)',
    '',
    'Commands:',
    ...lines,
    '',
    'Exit codes, the same for every command:',
    '  0  done',
    '  1  the command ran and failed: a record it names does not exist, the records refuse the change (a disabled',
    '     endpoint, minting tokens in production), rejected lines of an import, the database unreachable',
    '  2  wrong usage: an unknown command or flag, a missing value, or a value refused on its face (a malformed',
    '     date or id, a rate out of range, a file with a wrong header); nothing is written',
    '',
    'Configuration comes from environment variables; docs/operators/configuration.md lists each with its default.',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return `ewa ${command.name} — ${command.summary}\n\n${command.help}`;
}

/** Wrong usage in three lines: what is wrong, the command's first usage line, where the rest is. */
function shortUsage(command: Command, problem: string): string {
  const usage =
    command.help.split('\n').find((line) => line.startsWith('Usage: ')) ?? `Usage: ewa ${command.name}`;
  return [`ewa ${command.name}: ${problem}`, usage, `Run \`ewa ${command.name} --help\` for more.`].join(
    '\n',
  );
}

/** Runs one CLI invocation and returns its exit code: 0 done, 1 failed, 2 wrong usage (mainHelp says which is which). */
export async function runCli(argv: string[], context: CliContext): Promise<number> {
  const [name, subcommand] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    writeLine(context.stdout, mainHelp());
    return name === undefined ? 2 : 0;
  }
  // Two-word commands (`clients create`) first, then one-word ones.
  const command =
    COMMANDS.find((candidate) => candidate.name === `${name} ${subcommand}`) ??
    COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    const members = COMMANDS.filter((candidate) => candidate.name.startsWith(`${name} `));
    const family = members.map((c) => `ewa ${c.name}`);
    // `ewa webhooks --help`: the family's commands, each with what it does.
    if (members.length > 0 && (subcommand === '--help' || subcommand === '-h')) {
      const width = Math.max(...members.map((c) => c.name.length));
      writeLine(
        context.stdout,
        [
          `ewa ${name} — its commands (ewa ${name} <command> --help for each one's flags):`,
          '',
          ...members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
        ].join('\n'),
      );
      return 0;
    }
    writeLine(
      context.stderr,
      family.length > 0
        ? `ewa ${name}: ${subcommand === undefined ? 'which one?' : `unknown command "${subcommand}".`} Commands: ${family.join(', ')}.`
        : `ewa: unknown command "${name}". Run \`ewa --help\` for the list.`,
    );
    return 2;
  }
  const rest = argv.slice(command.name.split(' ').length);
  try {
    const { flags, positionals } = parseFlags(command, rest);
    if (flags.help) {
      writeLine(context.stdout, commandHelp(command));
      return 0;
    }
    return await command.run(flags, positionals, { ...context, runCommand: runCli });
  } catch (error) {
    // Input the records refuse (no such record, a state that forbids it): the command ran and failed.
    if (error instanceof InputRefusedError) {
      writeLine(context.stderr, `ewa ${command.name}: ${error.message}`);
      return 1;
    }
    if (error instanceof UsageError || error instanceof InputError) {
      writeLine(context.stderr, shortUsage(command, error.message));
      return 2;
    }
    // The services' own errors (no such record, a refusal): the command ran and failed, whatever the status.
    if (error instanceof AppError) {
      writeLine(context.stderr, `ewa ${command.name}: ${error.detail}`);
      return 1;
    }
    if (
      error instanceof ConfigError ||
      error instanceof ComplianceFileError ||
      error instanceof DataDirBusyError ||
      error instanceof DataDirUnusableError ||
      error instanceof NotAClusterError ||
      error instanceof MigrationError
    ) {
      writeLine(context.stderr, `ewa ${command.name}: ${error.message}`);
      return 1;
    }
    if (error instanceof DatabaseUnavailableError) {
      writeLine(
        context.stderr,
        `ewa ${command.name}: ${error.message}. Check DATABASE_URL (host, port, user, database name) and that PostgreSQL is running.`,
      );
      return 1;
    }
    writeLine(context.stderr, `ewa ${command.name}: failed: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}
