import { ComplianceFileError } from '../compliance/state-rules.ts';
import { ConfigError } from '../config.ts';
import { DataDirBusyError, DataDirUnusableError } from '../db/data-dir-lock.ts';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { MigrationError } from '../db/migrate.ts';
import { NotAClusterError } from '../db/not-a-cluster-error.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError, InputRefusedError } from '../errors/input-error.ts';
import { type CliContext, type Command, parseFlags, UsageError, writeLine } from './command.ts';

/**
 * Where each command is, by its first word: a command's module, and everything it imports, is loaded only when one
 * of its commands runs or the list of all is shown. A process runs the code of its own command alone: `ewa serve`
 * loads none of the operator tools (nor oidc-provider, which `tokens issue` imports) until a command forwarded to it
 * needs one. In the order `ewa --help` lists them.
 */
const COMMAND_MODULES: readonly { words: readonly string[]; load: () => Promise<readonly Command[]> }[] = [
  { words: ['serve'], load: async () => [(await import('./serve.ts')).serveCommand] },
  { words: ['migrate'], load: async () => [(await import('./migrate.ts')).migrateCommand] },
  { words: ['seed'], load: async () => [(await import('./seed.ts')).seedCommand] },
  { words: ['clients'], load: async () => (await import('./clients.ts')).clientCommands },
  { words: ['orgs'], load: async () => (await import('./orgs.ts')).organizationCommands },
  { words: ['people'], load: async () => (await import('./people.ts')).peopleCommands },
  { words: ['jobs'], load: async () => (await import('./jobs.ts')).jobCommands },
  { words: ['earnings'], load: async () => (await import('./earnings.ts')).earningsCommands },
  { words: ['payroll', 'settle'], load: async () => (await import('./payroll.ts')).payrollCommands },
  { words: ['ach'], load: async () => (await import('./ach.ts')).achCommands },
  { words: ['sandbox'], load: async () => (await import('./sandbox.ts')).sandboxCommands },
  { words: ['webhooks'], load: async () => (await import('./webhooks.ts')).webhookCommands },
  { words: ['compliance'], load: async () => (await import('./compliance.ts')).complianceCommands },
  {
    words: ['disclosures', 'transfers'],
    load: async () => (await import('./disclosures.ts')).disclosureCommands,
  },
  { words: ['complaints'], load: async () => (await import('./complaints.ts')).complaintCommands },
  { words: ['reports'], load: async () => (await import('./reports.ts')).reportCommands },
  { words: ['returns'], load: async () => (await import('./returns.ts')).returnsCommands },
  { words: ['overpayments'], load: async () => (await import('./overpayments.ts')).overpaymentCommands },
  { words: ['ledger'], load: async () => [(await import('./ledger.ts')).ledgerCheckCommand] },
  { words: ['keys'], load: async () => [(await import('./keys.ts')).keysRotateCommand] },
  { words: ['tokens'], load: async () => [(await import('./tokens.ts')).tokensIssueCommand] },
];

/** Every command, in the order `ewa --help` lists them (every command module is loaded). */
export async function allCommands(): Promise<readonly Command[]> {
  return (await Promise.all(COMMAND_MODULES.map((module) => module.load()))).flat();
}

/** The commands whose first word is `word` (`ewa people …`, or `ewa seed`): only their module is loaded. */
export async function commandsOf(word: string): Promise<readonly Command[]> {
  const module = COMMAND_MODULES.find((candidate) => candidate.words.includes(word));
  if (!module) return [];
  return (await module.load()).filter((command) => command.name.split(' ')[0] === word);
}

function mainHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
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
    writeLine(context.stdout, mainHelp(await allCommands()));
    return name === undefined ? 2 : 0;
  }
  // Two-word commands (`clients create`) first, then one-word ones.
  const family = await commandsOf(name);
  const command =
    family.find((candidate) => candidate.name === `${name} ${subcommand}`) ??
    family.find((candidate) => candidate.name === name);
  if (!command) {
    const members = family.filter((candidate) => candidate.name.startsWith(`${name} `));
    const listed = members.map((c) => `ewa ${c.name}`);
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
      listed.length > 0
        ? `ewa ${name}: ${subcommand === undefined ? 'which one?' : `unknown command "${subcommand}".`} Commands: ${listed.join(', ')}.`
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
    // A restart, a lost connection or a timeout mid-command: one line, not a stack, as the server logs it (503).
    if (isDatabaseUnavailable(error)) {
      writeLine(
        context.stderr,
        `ewa ${command.name}: the database did not complete it (${(error as Error)?.message}): a restart, a lost ` +
          'connection, or a statement past EWA_DB_STATEMENT_TIMEOUT_MS. What the command committed before stays; ' +
          'run it again.',
      );
      return 1;
    }
    writeLine(context.stderr, `ewa ${command.name}: failed: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}
