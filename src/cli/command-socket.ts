import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Writable } from 'node:stream';

/**
 * The embedded database is open in one process only, so while `ewa serve` runs, `ewa` commands run inside it. The
 * server listens on a Unix socket of its own (never on a network port, so no proxy can reach it) and writes where
 * it is, with a fresh random credential, to `<dataDir>/cli.json`, readable by its owner only. The `ewa` command
 * finds that file (forward-to-server.ts), sends its arguments, and prints what the command prints, as it prints it.
 */
export const COMMAND_SOCKET_FILE = 'cli.json';
export const COMMAND_PATH = '/admin/cli';

export interface CommandSocketFile {
  readonly pid: number;
  readonly socket: string;
  readonly token: string;
}

export interface CommandRequest {
  readonly argv: string[];
  /** The caller's directory, where the files it names are. */
  readonly cwd: string;
}

export type RunCommand = (request: CommandRequest, stdout: Writable, stderr: Writable) => Promise<number>;

export interface CommandSocket {
  readonly file: string;
  /** Stops taking commands, waits for those running, and removes the socket and its file. */
  close(): Promise<void>;
}

/** One answer line: what the command printed on one of its streams, or its exit code (always the last line). */
export type CommandOutput = { stdout: string } | { stderr: string } | { exit: number };

const MAX_BODY_BYTES = 64 * 1024;
const MAX_ARGS = 256;
const MAX_ARG_LENGTH = 4096;
const MAX_RUNNING = 4;
// Sockets paths are limited to about 100 bytes; a longer data directory puts the socket in the temporary one.
const MAX_SOCKET_PATH = 100;

export async function startCommandSocket(dataDir: string, run: RunCommand): Promise<CommandSocket> {
  const token = randomBytes(32).toString('base64url');
  const inDataDir = join(dataDir, 'cli.sock');
  const socket =
    inDataDir.length <= MAX_SOCKET_PATH
      ? inDataDir
      : join(tmpdir(), `ewa-${randomBytes(8).toString('hex')}.sock`);
  const file = join(dataDir, COMMAND_SOCKET_FILE);
  const running = new Set<Promise<unknown>>();

  const server = createServer((request, response) => {
    const work = answer(request, response, token, running.size, run);
    running.add(work);
    void work.finally(() => running.delete(work));
  });
  // A command may run for minutes (an import, a payday); the caller's own connection bounds it.
  server.requestTimeout = 0;
  rmSync(socket, { force: true }); // left by a server that was killed
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  chmodSync(socket, 0o600);
  rmSync(file, { force: true });
  const description: CommandSocketFile = { pid: process.pid, socket, token };
  writeFileSync(file, `${JSON.stringify(description)}\n`, { mode: 0o600 });

  return {
    file,
    async close() {
      rmSync(file, { force: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...running]);
      rmSync(socket, { force: true });
    },
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
  alreadyRunning: number,
  run: RunCommand,
): Promise<void> {
  const refuse = (status: number, message: string) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(`${JSON.stringify({ error: message })}\n`);
  };
  if (request.method !== 'POST' || request.url !== COMMAND_PATH) return refuse(404, 'not found');
  if (!sameSecret(request.headers.authorization, `Bearer ${token}`)) return refuse(401, 'wrong credential');
  if (alreadyRunning >= MAX_RUNNING) {
    return refuse(503, `${MAX_RUNNING} commands are running in the server already: try again when one ends.`);
  }
  let body: CommandRequest;
  try {
    body = commandRequest(await readBody(request));
  } catch (error) {
    return refuse(400, (error as Error).message);
  }
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  // Sent now, not with the first line of output: the caller waits for an answer a short while only, and a command
  // may be silent for longer (loading its module, its first batch) while it runs on.
  response.flushHeaders();
  const send = (line: CommandOutput) => {
    if (!response.destroyed) response.write(`${JSON.stringify(line)}\n`);
  };
  const stream = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        send(name === 'stdout' ? { stdout: String(chunk) } : { stderr: String(chunk) });
        done();
      },
    });
  let exit: number;
  try {
    exit = await run(body, stream('stdout'), stream('stderr'));
  } catch (error) {
    send({ stderr: `ewa: failed inside the server: ${(error as Error)?.message ?? String(error)}\n` });
    exit = 1;
  }
  send({ exit });
  response.end();
}

function sameSecret(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`the command is over ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function commandRequest(text: string): CommandRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('the body is not JSON.');
  }
  const { argv, cwd } = (value ?? {}) as Partial<CommandRequest>;
  if (
    !Array.isArray(argv) ||
    argv.length > MAX_ARGS ||
    !argv.every((arg) => typeof arg === 'string' && arg.length <= MAX_ARG_LENGTH)
  ) {
    throw new Error(`argv must be at most ${MAX_ARGS} strings of at most ${MAX_ARG_LENGTH} characters.`);
  }
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) throw new Error('cwd must be an absolute path.');
  if (argv[0] === 'serve') throw new Error('the server is running already.');
  return { argv, cwd };
}
