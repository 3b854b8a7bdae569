import { resolve } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { isUuid } from '../domain/uuid.ts';

export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** The clock of commands that read "now" (payroll, settle, earnings import); the system clock unless a test sets it. */
  readonly now?: () => Date;
  /** Where relative file names are read from: the caller's directory when a running server runs the command. */
  readonly cwd?: string;
  /** The database already open in this process (the running server's), used instead of opening another. */
  readonly database?: { readonly config: Config; readonly database: Database };
  /** Runs another command line in this process (run.ts's runCli), for the server to run `ewa` commands in it. */
  readonly runCommand?: (argv: string[], context: CliContext) => Promise<number>;
}

export type Flags = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Lines of help after the summary: usage, flags, examples. */
  readonly help: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  readonly allowPositionals?: boolean;
  run(flags: Flags, positionals: string[], context: CliContext): Promise<number>;
}

/** Wrong use of a command: the CLI prints the message and the command's first usage line, and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function parseFlags(command: Command, argv: string[]): { flags: Flags; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: withNegativeValues(command, argv),
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    // parseArgs' own text goes on to quote a `--` form, for positionals, that no command here takes.
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown)
      throw new UsageError(`unknown flag ${unknown[1]}.`);
    throw new UsageError(message);
  }
  // parseArgs keeps the last of a flag given twice: `--org A --org B` would act on B alone, without a word.
  const given = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || command.options[token.name]?.multiple) continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} is given more than once: give it once.`);
    given.add(token.name);
  }
  return { flags: parsed.values as Flags, positionals: parsed.positionals };
}

/**
 * `--flag -500` as `--flag=-500`: parseArgs takes a value that starts with a dash for a flag and refuses it as
 * ambiguous, and its message names no rule. Given its value, the flag's own check says what it takes.
 */
function withNegativeValues(command: Command, argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name && command.options[name]?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      args.push(`${arg}=${next}`);
      index++;
    } else args.push(arg);
  }
  return args;
}

/**
 * An id the records know by a UUID: anything else is malformed on its face, wrong usage (2), where a UUID that
 * names nothing is a failure of the command (1).
 */
export function uuidValue(what: string, value: string): string {
  if (!isUuid(value)) throw new UsageError(`${what} must be a UUID (got "${value.slice(0, 40)}").`);
  return value;
}

/** The organization flag: `--organization`, with `--org` as its alias. */
export const ORGANIZATION_OPTIONS = {
  organization: { type: 'string' },
  org: { type: 'string' },
} as const satisfies Command['options'];

/** The organization (a UUID, else wrong usage) named by `--organization` or its alias `--org`; undefined when neither. */
export function organizationFlag(flags: Flags): string | undefined {
  const { organization, org } = flags;
  if (typeof organization === 'string' && typeof org === 'string' && organization !== org) {
    throw new UsageError('--org is another name for --organization: give one of them.');
  }
  const value = organization ?? org;
  return typeof value === 'string' ? uuidValue('--organization', value) : undefined;
}

/** A file named on the command line, as an absolute path from the caller's directory. */
export function inputPath(context: CliContext, path: string): string {
  return resolve(context.cwd ?? process.cwd(), path);
}

export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}

export function positiveInteger(flag: string, value: unknown, max: number): number {
  const text = String(value);
  const number = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1 || number > max) {
    throw new UsageError(`--${flag} must be a whole number from 1 to ${max} (got "${text}").`);
  }
  return number;
}
