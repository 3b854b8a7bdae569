import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMAND_PATH, type CommandSocketFile } from '../../src/cli/command-socket.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { eventually } from '../helpers/eventually.ts';
import { startApiProcess } from '../helpers/ew-processes.ts';
import { freePort } from '../helpers/free-port.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'src', 'main.ts');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `ewa <argv>` as a user types it: its own process, in the directory given. */
function ewaIn(cwd: string, env: Record<string, string>, ...argv: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...argv], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function postToSocket(socketPath: string, authorization: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = request(
      { socketPath, path: COMMAND_PATH, method: 'POST', headers: { authorization } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

const ROSTER_HEADER =
  'primary_identifier,employee_id,first_name,last_name,email,state_of_residence,title,wage_amount,wage_frequency';

test('on the embedded database, ewa runs its commands through the running server, with the same answers and exit codes', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-beside-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { EWA_DATA_DIR: dataDir };
  const server = await startApiProcess({ ...env, EWA_SEED_DEMO: 'true' });
  t.after(() => server.kill());
  const file = join(dataDir, 'cli.json');
  await eventually(async () => existsSync(file));
  const description = JSON.parse(readFileSync(file, 'utf8')) as CommandSocketFile;
  assert.equal(description.pid, server.child.pid);
  // Only the server's owner may read the credential or reach the socket.
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(description.socket).mode & 0o777, 0o600);

  const list = await ewaIn(ROOT, env, 'clients', 'list');
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(DEMO.clients.confidential.clientId));
  const missing = await ewaIn(ROOT, env, 'clients', 'show', 'nope');
  assert.deepEqual([missing.code, missing.stderr], [1, 'ewa clients show: No client nope.\n']);
  const usage = await ewaIn(ROOT, env, 'clients', 'show');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^ewa clients show: name one client id\.\nUsage: ewa clients show/);
  const unknown = await ewaIn(ROOT, env, 'nonsense');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "nonsense"/);

  // A file named relative to the caller's directory is read from there, not from the server's; progress on stderr.
  const work = mkdtempSync(join(tmpdir(), 'ewa-caller-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  writeFileSync(
    join(work, 'roster.csv'),
    `${ROSTER_HEADER}\nB-1,E-901,Robin,Beside,robin.beside@example.com,NY,,20.00,HOURLY\n`,
  );
  const imported = await ewaIn(
    work,
    env,
    'people',
    'import',
    'roster.csv',
    '--organization',
    DEMO.organizations.acme.id,
  );
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stdout, /created\s+1\n/);
  assert.match(imported.stderr, /Importing roster \(bytes\): \d+\/\d+ \(100%\)/);
  const noFile = await ewaIn(
    work,
    env,
    'people',
    'import',
    'nothing.csv',
    '--organization',
    DEMO.organizations.acme.id,
  );
  assert.equal(noFile.code, 2);
  assert.ok(noFile.stderr.includes(`cannot read ${join(work, 'nothing.csv')}: ENOENT`), noFile.stderr);

  // A command run inside the server leaves the server's database open: migrate too, twice (it once closed it).
  for (const argv of [['migrate'], ['migrate', '--json']]) {
    const migrated = await ewaIn(ROOT, env, ...argv);
    assert.equal(migrated.code, 0, migrated.stderr);
  }
  const still = await ewaIn(ROOT, env, 'clients', 'list');
  assert.equal(still.code, 0, still.stderr);

  // Another credential, or none, runs nothing; `serve` is not run twice.
  assert.equal(await postToSocket(description.socket, 'Bearer wrong', '{"argv":["migrate"],"cwd":"/"}'), 401);
  assert.equal(await postToSocket(description.socket, '', '{"argv":["migrate"],"cwd":"/"}'), 401);
  const auth = `Bearer ${description.token}`;
  assert.equal(await postToSocket(description.socket, auth, '{"argv":["serve"],"cwd":"/"}'), 400);
  assert.equal(await postToSocket(description.socket, auth, '{"argv":[1],"cwd":"/"}'), 400);
  assert.equal(await postToSocket(description.socket, auth, '{"argv":[],"cwd":"relative"}'), 400);
  assert.equal(await postToSocket(description.socket, auth, 'not json'), 400);

  // Stopped, the server removes its socket and file, and commands open the database themselves again.
  assert.equal(await server.stop(), 0, server.output());
  assert.equal(existsSync(file), false);
  assert.equal(existsSync(description.socket), false);
  const alone = await ewaIn(ROOT, env, 'clients', 'list');
  assert.equal(alone.code, 0, alone.stderr);
  assert.match(alone.stdout, new RegExp(DEMO.clients.confidential.clientId));
});

test('a server killed with its socket file left behind: the next command opens the database itself', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-beside-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { EWA_DATA_DIR: dataDir };
  const server = await startApiProcess(env);
  t.after(() => server.kill());
  await eventually(async () => existsSync(join(dataDir, 'cli.json')));
  await server.kill();
  assert.equal(existsSync(join(dataDir, 'cli.json')), true, 'kill -9 runs no clean-up');
  const after = await ewaIn(ROOT, env, 'clients', 'list');
  assert.equal(after.code, 0, after.stderr);
});

test('npm start stopped by Ctrl+C (SIGINT to its process group) exits 0', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ewa-npm-start-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const api = await freePort();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: true, // a process group of its own, as a terminal gives it
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      EWA_DATA_DIR: dataDir,
      EWA_SEED_DEMO: 'false',
      EWA_HOST: '127.0.0.1',
      EWA_API_PORT: String(api),
      EWA_AUTH_PORT: String(await freePort()),
      EWA_PAYMENTS_PORT: String(await freePort()),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    return output.includes('Press Ctrl+C to stop.');
  }, 60_000);
  // A terminal's Ctrl+C reaches every process of the group, and npm passes it on to node again: two signals, the
  // second one while the first is being handled.
  process.kill(-child.pid!, 'SIGINT');
  await new Promise((resolve) => setTimeout(resolve, 20));
  if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
  assert.equal(await exited, 0, output);
  assert.match(output, /Received SIGINT/);
  for (const left of ['owner.pid', 'cli.json', 'cli.sock'])
    assert.equal(existsSync(join(dataDir, left)), false, `${left} is removed`);
});
