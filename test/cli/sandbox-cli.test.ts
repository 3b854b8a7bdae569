import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSandboxOffsetMs } from '../../src/sandbox/sandbox-clock.ts';
import { cliDatabaseEnv, ewa, ewaAt, inDatabase } from '../helpers/cli.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';
import { demoWorker, SEEDED_AT, seedDemo } from '../helpers/sandbox-world.ts';

const REAL_NOW = new Date(SEEDED_AT.getTime() + 60 * 60_000);

test('ewa sandbox clock, advance and reset on the demo data', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'migrate')).code, 0);
  await inDatabase(env, (db) => seedDemo(db));

  const clock = await ewaAt(REAL_NOW, env, 'sandbox', 'clock', '--json');
  assert.equal(clock.code, 0, clock.stderr);
  assert.deepEqual(clock.json(), {
    now: REAL_NOW.toISOString(),
    real_now: REAL_NOW.toISOString(),
    offset_ms: 0,
  });

  const advanced = await ewaAt(REAL_NOW, env, 'sandbox', 'advance', '--days', '2');
  assert.equal(advanced.code, 0, advanced.stderr);
  assert.match(
    advanced.stdout,
    /^Advanced the sandbox from 2026-03-11T16:30:00.000Z to 2026-03-13T16:30:00.000Z in 192 steps\.\n/,
  );
  // The hour of 16:30 runs at 16:45, then 48 hours: 49 runs of each hourly job.
  assert.match(advanced.stdout, /\n {2}settle-due +192 runs: settled 5, sent 5\n/);
  assert.match(advanced.stdout, /\n {2}demo-shifts +49 runs: jobs 4, shifts 4, creditedMinor 25350\n/);
  assert.match(advanced.stdout, /\n {2}payroll +49 runs\n/);
  assert.match(
    advanced.stdout,
    /Sandbox time: 2026-03-13T16:30:00.000Z \(2.00 days ahead of real time; offset 172800000 ms\)$/m,
  );
  assert.match(advanced.stderr, /Advancing the sandbox: 192\/192 \(100%\)/, 'progress on standard error');
  const pending = await inDatabase(env, (db) =>
    db
      .selectFrom('transfers')
      .select('status')
      .where('id', '=', demoWorker('Devon').advanceIds.pending)
      .executeTakeFirstOrThrow(),
  );
  assert.equal(pending.status, 'SETTLED');

  const moved = await ewaAt(REAL_NOW, env, 'sandbox', 'advance', '--to', '2026-03-14T09:30-04:00', '--json');
  assert.equal(moved.code, 0, moved.stderr);
  assert.equal(moved.json().now, '2026-03-14T13:30:00.000Z');
  assert.equal(moved.json().from, '2026-03-13T16:30:00.000Z');

  const reset = await ewaAt(REAL_NOW, env, 'sandbox', 'reset');
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(reset.stdout, /^Reset the sandbox\.\nSeeded the sandbox demo data\./);
  assert.match(reset.stdout, /Sandbox time: 2026-03-11T16:30:00.000Z \(real time; offset 0 ms\)$/m);
  assert.equal(await inDatabase(env, readSandboxOffsetMs), 0);
});

test('bad flags are refused naming the flag (exit 2), with nothing done and no stack trace', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'migrate')).code, 0);
  await inDatabase(env, (db) => seedDemo(db));
  for (const [flags, message] of [
    [['--days', '0'], /--days must be a whole number of days from 1 to 366 \(got "0"\)/],
    [['--days=-3'], /--days must be a whole number of days from 1 to 366 \(got "-3"\)/],
    [['--days', '-3'], /--days/],
    [['--days', '367'], /--days must be a whole number of days from 1 to 366 \(got "367"\)/],
    [['--days', '3.5'], /--days must be a whole number of days/],
    [['--days', 'abc'], /--days must be a whole number of days from 1 to 366 \(got "abc"\)/],
    [['--days', '99999999999999999999'], /--days must be a whole number of days/],
    [['--days', '3', '--to', '2026-12-01'], /Give --days or --to, not both/],
    [[], /Give --days N \(1 to 366\) or --to DATE/],
    [
      ['--to', '2026-03-01'],
      /--to 2026-03-01T00:00:00.000Z is not later than the sandbox's time, 2026-03-11T16:30:00.000Z/,
    ],
    [['--to', '2026-02-30'], /--to must be a date, YYYY-MM-DD, or a time/],
    [['--to', 'next friday'], /--to must be a date/],
    [['--to', '2027-06-01'], /--to 2027-06-01T00:00:00.000Z is more than 366 days after the sandbox's time/],
  ] as const) {
    const run = await ewaAt(REAL_NOW, env, 'sandbox', 'advance', ...flags);
    assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, flags.join(' '));
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  }
  assert.equal(await inDatabase(env, readSandboxOffsetMs), 0);
  const lease = await inDatabase(env, (db) =>
    db.selectFrom('app_settings').select('key').where('key', '=', 'sandbox_clock_lease').execute(),
  );
  assert.deepEqual(lease, []);
});

test('production refuses every sandbox command in one line, exit code 1, before touching any database', async () => {
  const env = {
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    EWA_ENV: 'production',
    EWA_SEED_DEMO: 'false',
    EWA_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
    ...PRODUCTION_RAIL_ENV,
  };
  for (const command of [['clock'], ['advance', '--days', '3'], ['reset']]) {
    const run = await ewaAt(REAL_NOW, env, 'sandbox', ...command);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stderr,
      `ewa sandbox ${command[0]}: the sandbox clock is for UAT only (EWA_ENV=production).\n`,
    );
    assert.equal(run.stdout, '');
  }
});
