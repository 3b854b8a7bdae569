import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { allCommands, runCli } from '../../src/cli/run.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { capture, cliDatabaseEnv, csvFile, ewa } from '../helpers/cli.ts';

/**
 * One rule for every command: 0 done; 1 the command ran and failed (a record named does not exist, the records
 * refuse); 2 wrong usage (unknown flag, missing or malformed value), told in three lines, not the whole help.
 */

test('an unknown flag exits 2 with three lines: what is wrong, the usage line, where the help is', async () => {
  for (const command of await allCommands()) {
    const run = capture();
    const code = await runCli([...command.name.split(' '), '--no-such-flag'], run.context);
    assert.equal(code, 2, command.name);
    const lines = run.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 3, `${command.name}: ${run.stderr()}`);
    assert.equal(lines[0], `ewa ${command.name}: unknown flag --no-such-flag.`);
    assert.match(lines[1]!, new RegExp(`^Usage: ewa ${command.name}\\b`));
    assert.equal(lines[2], `Run \`ewa ${command.name} --help\` for more.`);
    assert.equal(run.stdout(), '');
  }
});

test('a value naming a record that does not exist exits 1; a value malformed on its face exits 2', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'seed', '--json')).code, 0);
  const ghost = randomUUID();
  const person = DEMO.people[0].id;
  const client = DEMO.clients.public.clientId;
  const earnings = csvFile(t, 'earnings.csv', ['row_id,primary_identifier,date,hours,amount']);
  const roster = csvFile(t, 'roster.csv', [
    'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency',
  ]);
  const cases: [string[], 1 | 2, RegExp][] = [
    [['clients', 'show', 'ghost'], 1, /No client ghost/],
    [['clients', 'rotate-secret', 'ghost'], 1, /No client ghost/],
    [['clients', 'delete', 'ghost'], 1, /No client ghost/],
    [
      ['tokens', 'issue', '--person', person, '--client', 'ghost', '--scopes', 'user:read'],
      1,
      /No client ghost/,
    ],
    [['tokens', 'issue', '--person', ghost, '--client', client, '--scopes', 'user:read'], 1, /No person/],
    [
      ['tokens', 'issue', '--person', 'ghost', '--client', client, '--scopes', 'user:read'],
      2,
      /--person must be a UUID/,
    ],
    [['orgs', 'show', ghost], 1, /No organization/],
    [['orgs', 'show', 'ghost'], 2, /ORGANIZATION_ID must be a UUID/],
    [['orgs', 'set-policy', ghost, '--fee-card-instant-minor', 'none'], 1, /No organization/],
    [['jobs', 'activate', ghost], 1, /No job/],
    [['jobs', 'deactivate', 'ghost'], 2, /JOB_ID must be a UUID/],
    [['earnings', 'import', '--organization', ghost, earnings], 1, /No organization/],
    [['earnings', 'import', '--org', 'ghost', earnings], 2, /--organization must be a UUID/],
    [['people', 'import', roster, '--organization', ghost], 1, /No organization/],
    [['people', 'import', roster, '--org', 'ghost'], 2, /--organization must be a UUID/],
    [['webhooks', 'add', '--client', 'ghost', '--url', 'https://hooks.example/ewa'], 1, /No client ghost/],
    [['webhooks', 'remove', ghost], 1, /No webhook endpoint/],
    [['webhooks', 'remove', 'ghost'], 2, /ENDPOINT_ID must be a UUID/],
  ];
  for (const [argv, code, message] of cases) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, argv.join(' '));
    if (code === 2) assert.match(run.stderr, /\nRun `ewa [a-z -]+ --help` for more\.\n$/, argv.join(' '));
    else assert.equal(run.stderr.split('\n').length, 2, `one line: ${run.stderr}`);
  }
});

test('a family of commands lists its members on --help, exit 0', async () => {
  for (const family of ['webhooks', 'sandbox', 'clients']) {
    const run = await ewa({}, family, '--help');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^ewa ${family} — its commands`));
    assert.match(run.stdout, new RegExp(`\\n  ${family} \\S+ +\\S`));
  }
});

test('a command whose statement the database cancels exits 1 with one line saying so, not a stack', async (t) => {
  const env = await cliDatabaseEnv(t);
  if (env.DATABASE_URL === undefined) {
    t.skip('needs PostgreSQL: the embedded database has no statement timeout to cancel a statement with');
    return;
  }
  // Migrated first, with the usual limits: a new schema's note would come before the line this test reads.
  assert.equal((await ewa(env, 'migrate')).code, 0);
  const run = await ewa({ ...env, EWA_DB_STATEMENT_TIMEOUT_MS: '1' }, 'seed', '--people', '2000');
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    /^ewa seed: the database did not complete it \(canceling statement due to [a-z ]+\): a restart, a lost connection, or a statement past EWA_DB_STATEMENT_TIMEOUT_MS\. What the command committed before stays; run it again\.\n$/,
  );
});
