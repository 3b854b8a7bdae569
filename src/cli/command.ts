import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';

export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** The clock of commands that read "now" (payroll, settle, earnings import); the system clock unless a test sets it. */
  readonly now?: () => Date;
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

/** Wrong use of a command: the CLI prints the message and the command's usage, and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function parseFlags(command: Command, argv: string[]): { flags: Flags; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
    return { flags: values as Flags, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
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
