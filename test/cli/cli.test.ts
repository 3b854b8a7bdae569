import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allCommands, commandsOf, runCli } from '../../src/cli/run.ts';
import { capture } from '../helpers/cli.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

test('help: ewa --help lists every command, each command has --help', async () => {
  const main = capture();
  assert.equal(await runCli(['--help'], main.context), 0);
  for (const name of ['serve', 'migrate', 'seed']) assert.match(main.stdout(), new RegExp(`\\n  ${name} `));
  // Each command is listed, and found by its first word, the only module loaded when it runs.
  for (const command of await allCommands()) {
    assert.ok(main.stdout().includes(`\n  ${command.name} `), command.name);
    assert.ok((await commandsOf(command.name.split(' ')[0]!)).includes(command), command.name);
  }
  for (const name of ['serve', 'migrate', 'seed']) {
    const one = capture();
    assert.equal(await runCli([name, '--help'], one.context), 0);
    assert.match(one.stdout(), new RegExp(`^ewa ${name} — `));
    assert.match(one.stdout(), /Usage: ewa /);
  }
});

test('unknown commands, unknown flags and bad values exit 2 with a clear message', async () => {
  const cases: [string[], RegExp][] = [
    [['bogus'], /unknown command "bogus"/],
    [['migrate', '--force'], /^ewa migrate: unknown flag --force\.\n/],
    // A negative value is the flag's value, checked by its own rule, not a flag parseArgs calls ambiguous.
    [
      ['orgs', 'list', '--offset', '-1'],
      /^ewa orgs list: --offset must be a whole number from 0 \(got "-1"\)/,
    ],
    [
      ['orgs', 'list', '--limit', '0'],
      /^ewa orgs list: --limit must be a whole number from 1 to 1000 \(got "0"\)/,
    ],
    [['seed', '--people', '-5'], /^ewa seed: --people must be a whole number from 1 to 1000000 \(got "-5"\)/],
    // A fee not offered is `none` on the command line (null in the API), and the message says so.
    [
      ['orgs', 'set-policy', '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001', '--fee-card-instant-minor', 'null'],
      /^ewa orgs set-policy: --fee-card-instant-minor must be none \(not offered\) or a whole number of minor units from 0 to \d+ \(got "null"\)/,
    ],
    [['seed', '--people', '0'], /--people must be a whole number from 1 to 1000000 \(got "0"\)/],
    [['seed', '--people', 'many'], /--people must be a whole number/],
    [['seed', 'extra'], /ewa seed: Unexpected argument 'extra'/],
  ];
  for (const [argv, message] of cases) {
    const run = capture();
    assert.equal(await runCli(argv, run.context), 2, argv.join(' '));
    assert.match(run.stderr(), message);
  }
  const bare = capture();
  assert.equal(await runCli([], bare.context), 2);
});

test('a bad environment variable stops a command with exit 1 and names the variable', async () => {
  const run = capture({ EWA_ENV: 'staging' });
  assert.equal(await runCli(['migrate'], run.context), 1);
  assert.match(run.stderr(), /EWA_ENV must be one of uat, production/);
});

test('migrate, seed and seed --people print JSON for scripts', async (t) => {
  const target = await createTestDatabase(t);
  const migrate = capture(target.env);
  assert.equal(await runCli(['migrate', '--json'], migrate.context), 0);
  const applied = JSON.parse(migrate.stdout()).applied;
  assert.ok(Array.isArray(applied));
  if (target.config.kind === 'postgres') {
    assert.ok(applied.includes('0001_domain_model'));
    const again = capture(target.env);
    assert.equal(await runCli(['migrate', '--json'], again.context), 0);
    assert.deepEqual(JSON.parse(again.stdout()), { applied: [] });
    const demo = capture(target.env);
    assert.equal(await runCli(['seed', '--json'], demo.context), 0);
    assert.deepEqual(JSON.parse(demo.stdout()), { demo: 'seeded' });
    const demoAgain = capture(target.env);
    assert.equal(await runCli(['seed', '--json'], demoAgain.context), 0);
    assert.deepEqual(JSON.parse(demoAgain.stdout()), { demo: 'already-present' });
  }
  const generated = capture(target.env);
  assert.equal(await runCli(['seed', '--people', '120', '--json'], generated.context), 0);
  const result = JSON.parse(generated.stdout());
  assert.equal(result.people, 120);
  assert.equal(result.paychecks, 240);
  assert.match(result.organizationId, /^[\da-f-]{36}$/);
  assert.match(generated.stderr(), /Generating workers: 120\/120 \(100%\)/);
});

test('production refuses to load demo data, before touching any database', async () => {
  const run = capture({
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    EWA_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
    ...PRODUCTION_RAIL_ENV,
  });
  assert.equal(await runCli(['seed'], run.context), 1);
  assert.match(run.stderr(), /EWA_ENV=production refuses it/);
});

test('a database that cannot be reached is one line saying what to check, exit code 1, no stack trace', async () => {
  const run = capture({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
    EWA_DB_CONNECT_TIMEOUT_MS: '2000',
  });
  assert.equal(await runCli(['migrate'], run.context), 1);
  assert.match(run.stderr(), /^ewa migrate: no database connection: .*Check DATABASE_URL/);
  assert.doesNotMatch(run.stderr(), /\n\s+at /);
});
