import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataDirBusyError, DataDirUnusableError } from './data-dir-lock.ts';
import { DatabaseUnavailableError } from './database-unavailable.ts';
import { NotAClusterError } from './not-a-cluster-error.ts';
import type { ChildMessage, ErrorShape, Order, ParentMessage } from './pglite-process-messages.ts';
import type { PGliteSession, SessionOutcome, SessionResult, SessionStatement } from './pglite-session.ts';

const CHILD = fileURLToPath(new URL('./pglite-process-child.ts', import.meta.url));

/** Flags of this process that are not for a database process: the test runner's, the debugger's, a script's. */
const NOT_FOR_THE_CHILD = /^--(test|inspect|watch|experimental-test|input-type|eval=|print=)/;
/** Flags whose value is the next argument: a script given on the command line, which the child must not run. */
const WITH_A_SCRIPT = new Set(['-e', '--eval', '-p', '--print', '-pe']);

interface Pending {
  resolve: (answer: ChildMessage) => void;
  reject: (error: Error) => void;
}

/**
 * Opens an on-disk embedded database in a process of its own and resolves once it is ready, or rejects with the
 * error that kept it from opening. WebAssembly memory is never given back while its module lives, and PGlite's
 * (its heap, shared buffers, compiled code) was about half of a serving process's peak
 * (docs/design/performance.md#memory); here it is the child's. The child is started with this process's Node and
 * flags (heap sizes; --liftoff-only as configured), and the two talk over the IPC channel with V8's serialization, which keeps
 * Dates and byte arrays as they are.
 */
export function openPGliteProcess(order: Order, flags: { liftoffOnly: boolean }): Promise<PGliteSession> {
  const child = fork(CHILD, [JSON.stringify(order)], {
    execArgv: childFlags(process.execArgv, flags.liftoffOnly),
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise<PGliteSession>((resolve, reject) => {
    const starting = (message: ChildMessage) => {
      if (!('type' in message)) return;
      child.off('message', starting);
      child.off('exit', died);
      if (message.type === 'ready') resolve(new PGliteProcess(child));
      else reject(rebuilt(message.error));
    };
    const died = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(
        new Error(
          `the embedded database's process ended before it was ready (${signal ?? `exit code ${code}`})`,
        ),
      );
    child.on('message', starting);
    child.on('exit', died);
    child.on('error', reject);
  });
}

/** The parent's side of a child holding the embedded database: statements go as messages, answers come back. */
class PGliteProcess implements PGliteSession {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  /** Why no statement can be sent any more, once the child has ended or is closing. */
  #gone: Error | undefined;
  readonly #exited: Promise<number | null>;
  #closing = false;

  constructor(child: ChildProcess) {
    this.#child = child;
    child.on('message', (message: ChildMessage) => {
      if (!('id' in message)) return;
      const pending = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) this.#idle();
      if ('error' in message) pending?.reject(rebuilt(message.error));
      else pending?.resolve(message);
    });
    this.#exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.#gone ??= new DatabaseUnavailableError(
          `the embedded database's process ended (${signal ?? `exit code ${code}`})`,
        );
        for (const pending of this.#pending.values()) pending.reject(this.#gone);
        this.#pending.clear();
        resolve(code);
      });
    });
    // A channel with nothing waiting on it must not keep this process alive; one with a statement under way must.
    child.on('error', () => {}); // a send to a child that has just died: its exit rejects what waits
    this.#idle();
  }

  async query(sql: string, parameters: unknown[]): Promise<SessionResult> {
    const answer = await this.#send({ id: this.#nextId++, op: 'query', sql, parameters });
    if (!('result' in answer)) throw new Error('the embedded database answered a query without a result');
    return answer.result;
  }

  async exec(sql: string): Promise<SessionResult[]> {
    const answer = await this.#send({ id: this.#nextId++, op: 'exec', sql });
    if (!('results' in answer)) throw new Error('the embedded database answered a script without results');
    return answer.results;
  }

  /** The statements of a batch in one message there and one back, each run by the child once the one before it has answered. */
  async batch(statements: readonly SessionStatement[]): Promise<SessionOutcome[]> {
    const answer = await this.#send({ id: this.#nextId++, op: 'batch', statements });
    if (!('outcomes' in answer)) throw new Error('the embedded database answered a batch without outcomes');
    return answer.outcomes.map((outcome) =>
      outcome.ok ? outcome : { ok: false, error: rebuilt(outcome.error) },
    );
  }

  /** Closes the database in the child and waits for it to exit; a child that had already ended has nothing to close. */
  async close(): Promise<void> {
    if (this.#gone !== undefined && !this.#closing) return;
    if (!this.#closing) {
      this.#closing = true;
      this.#gone = new DatabaseUnavailableError('the embedded database is closed');
      this.#child.ref();
      this.#child.send({ op: 'close' } satisfies ParentMessage);
    }
    const code = await this.#exited;
    if (code !== 0)
      throw new Error(`the embedded database's process did not close cleanly (exit code ${code})`);
  }

  #send(message: Extract<ParentMessage, { id: number }>): Promise<ChildMessage> {
    if (this.#gone) return Promise.reject(this.#gone);
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#busy();
      this.#pending.set(message.id, { resolve, reject });
      this.#child.send(message, (error) => {
        if (!error) return;
        this.#pending.delete(message.id);
        reject(
          this.#gone ?? new DatabaseUnavailableError(`the embedded database's process: ${error.message}`),
        );
      });
    });
  }

  #busy(): void {
    this.#child.ref();
    this.#child.channel?.ref();
  }

  #idle(): void {
    this.#child.unref();
    this.#child.channel?.unref();
  }
}

/**
 * This process's flags that the database's process takes too (heap sizes), and --liftoff-only where `liftoffOnly`
 * (EWA_V8_WASM_LIFTOFF_ONLY) asks for it: V8's optimizing compiler took hundreds of MB over the database's module,
 * and its background compilation held the process's exit back by seconds (docs/design/performance.md#memory). A
 * --liftoff-only or --no-liftoff-only this process was given, in either spelling (V8 reads `_` as `-`), wins.
 */
export function childFlags(execArgv: readonly string[], liftoffOnly: boolean): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] as string;
    if (WITH_A_SCRIPT.has(flag)) i++;
    else if (!NOT_FOR_THE_CHILD.test(flag)) kept.push(flag);
  }
  const given = kept.some((flag) => /^--(no-)?liftoff-only$/.test(flag.replaceAll('_', '-')));
  if (liftoffOnly && !given) kept.push('--liftoff-only');
  return kept;
}

const KNOWN_ERRORS: Record<string, { prototype: Error }> = {
  NotAClusterError,
  DataDirBusyError,
  DataDirUnusableError,
};

/** The error the child sent, as an Error of the same name, message and fields (code, constraint, detail…). */
function rebuilt(shape: ErrorShape): Error {
  // Errors the callers tell apart by class (the CLI's exit code and message): rebuilt as their class.
  const known = KNOWN_ERRORS[shape.name];
  const error: Error = known ? Object.create(known.prototype) : new Error(shape.message);
  if (known)
    Object.defineProperty(error, 'message', { value: shape.message, writable: true, configurable: true });
  Object.assign(error, shape.fields);
  if (error.name !== shape.name) error.name = shape.name;
  if (shape.stack !== undefined) error.stack = shape.stack;
  return error;
}
