import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { isAlive } from '../db/data-dir-lock.ts';
import {
  COMMAND_PATH,
  COMMAND_SOCKET_FILE,
  type CommandOutput,
  type CommandSocketFile,
} from './command-socket.ts';

export interface ForwardIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
}

const CONNECT_TIMEOUT_MS = 2_000;

/**
 * Runs the command in the server that holds the embedded database, when one is running (command-socket.ts), and
 * resolves with its exit code; resolves undefined when there is none to run it, and the command runs here.
 * Only light modules are loaded on this path, so that a forwarded command answers fast.
 */
export async function forwardToServer(argv: string[], io: ForwardIo): Promise<number | undefined> {
  if (argv[0] === 'serve') return undefined;
  const server = runningServer(io.env);
  if (!server) return undefined;
  const body = JSON.stringify({ argv, cwd: io.cwd });
  return new Promise<number | undefined>((resolve) => {
    let answered = false;
    const call = request(
      {
        socketPath: server.socket,
        path: COMMAND_PATH,
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: CONNECT_TIMEOUT_MS,
      },
      (response) => {
        answered = true;
        call.setTimeout(0);
        response.setEncoding('utf8');
        if (response.statusCode !== 200) {
          let text = '';
          response.on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => {
            io.stderr.write(`ewa: the running server refused the command: ${refusal(text)}\n`);
            resolve(1);
          });
          return;
        }
        let pending = '';
        let exit: number | undefined;
        response.on('data', (chunk: string) => {
          pending += chunk;
          let end = pending.indexOf('\n');
          while (end >= 0) {
            const line = outputLine(pending.slice(0, end));
            pending = pending.slice(end + 1);
            if ('stdout' in line) io.stdout.write(line.stdout);
            else if ('stderr' in line) io.stderr.write(line.stderr);
            else exit = line.exit;
            end = pending.indexOf('\n');
          }
        });
        const finish = () => {
          if (exit === undefined) {
            io.stderr.write(
              'ewa: the server stopped before the command finished; what it had done is committed or not as ' +
                'the command wrote it: check before running it again.\n',
            );
          }
          resolve(exit ?? 1);
        };
        response.on('end', finish);
        response.on('error', finish);
      },
    );
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return;
      // A server killed without removing its file: nobody is there, and the command runs here.
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') return resolve(undefined);
      io.stderr.write(`ewa: the running server (process ${server.pid}) did not answer: ${error.message}\n`);
      resolve(1);
    });
    call.end(body);
  });
}

/** The running server's socket and credential, when this configuration's embedded database has one. */
function runningServer(env: ForwardIo['env']): CommandSocketFile | undefined {
  let dataDir: string;
  try {
    const { database } = loadConfig(env);
    if (database.kind !== 'pglite' || database.dataDir === ':memory:') return undefined;
    dataDir = database.dataDir;
  } catch {
    return undefined; // the command itself reports the configuration error
  }
  let description: CommandSocketFile;
  try {
    description = JSON.parse(readFileSync(join(dataDir, COMMAND_SOCKET_FILE), 'utf8')) as CommandSocketFile;
  } catch {
    return undefined;
  }
  const { pid, socket, token } = description;
  if (!Number.isInteger(pid) || typeof socket !== 'string' || typeof token !== 'string') return undefined;
  return isAlive(pid) ? description : undefined;
}

function refusal(text: string): string {
  try {
    return String((JSON.parse(text) as { error?: unknown }).error ?? text);
  } catch {
    return text.trim();
  }
}

function outputLine(text: string): CommandOutput {
  try {
    return JSON.parse(text) as CommandOutput;
  } catch {
    return { stderr: `${text}\n` };
  }
}
