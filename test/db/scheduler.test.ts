import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import type { Db } from '../../src/db/database.ts';
import { achAttention } from '../../src/jobs/money-jobs.ts';
import { claimRun, finishRun } from '../../src/jobs/scheduled-run.ts';
import {
  dailyRunKey,
  everyMinutesRunKey,
  type ScheduledJob,
  Scheduler,
  type SchedulerLogger,
} from '../../src/jobs/scheduler.ts';
import { openTwoHandles } from '../helpers/test-database.ts';

const T0 = new Date('2025-03-03T09:00:00.000Z');
const MINUTE_MS = 60_000;

function fakeClock(start: Date) {
  let nowMs = start.getTime();
  return {
    now: () => new Date(nowMs),
    advance: (ms: number) => {
      nowMs += ms;
    },
  };
}

function silentLogger(): SchedulerLogger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, error: (_object, message) => errors.push(message ?? '') };
}

function runRow(db: Db, jobName: string, runKey: string) {
  return db
    .selectFrom('scheduled_runs')
    .selectAll()
    .where('job_name', '=', jobName)
    .where('run_key', '=', runKey)
    .executeTakeFirstOrThrow();
}

/** A job with one fixed run key that counts its runs. */
function countingJob(overrides: Partial<ScheduledJob> = {}): ScheduledJob & { runs: number } {
  const job: ScheduledJob & { runs: number } = {
    runs: 0,
    name: `job-${randomUUID()}`,
    runKeyAt: () => 'key-1',
    async run() {
      job.runs++;
      await new Promise((resolve) => setImmediate(resolve));
      return { runs: job.runs };
    },
    ...overrides,
  };
  return job;
}

test('two processes racing on the same job and key run it once', async (t) => {
  const [dbA, dbB] = await openTwoHandles(t);
  const clock = fakeClock(T0);
  const job = countingJob();
  const schedulers = [dbA, dbB, dbA, dbB].map((db) =>
    new Scheduler({ db, now: clock.now, logger: silentLogger(), tickMs: 1000 }).register(job),
  );
  const reports = await Promise.all(schedulers.map((scheduler) => scheduler.runDue()));
  assert.equal(job.runs, 1);
  assert.deepEqual(reports.flat(), [{ job: job.name, runKey: 'key-1', state: 'DONE' }]);
  const row = await runRow(dbA, job.name, 'key-1');
  assert.equal(row.state, 'DONE');
  assert.deepEqual(row.detail, { runs: 1 });
  assert.equal(row.started_at.getTime(), T0.getTime());

  // Bare claims, many at once from both handles: exactly one wins.
  const claims = await Promise.all(
    Array.from({ length: 20 }, (_, i) => claimRun(i % 2 ? dbA : dbB, job.name, 'key-2', T0, MINUTE_MS)),
  );
  assert.equal(claims.filter(Boolean).length, 1);
});

test('a RUNNING claim older than staleAfter is taken over once, and the crashed run cannot record late', async (t) => {
  const [dbA, dbB] = await openTwoHandles(t);
  const jobName = `job-${randomUUID()}`;
  const staleAfterMs = 10 * MINUTE_MS;
  assert.equal(await claimRun(dbA, jobName, 'k', T0, staleAfterMs), true);

  const fresh = new Date(T0.getTime() + staleAfterMs);
  assert.equal(await claimRun(dbB, jobName, 'k', fresh, staleAfterMs), false, 'not stale yet');

  const later = new Date(T0.getTime() + staleAfterMs + 1);
  const claims = await Promise.all(
    Array.from({ length: 20 }, (_, i) => claimRun(i % 2 ? dbA : dbB, jobName, 'k', later, staleAfterMs)),
  );
  assert.equal(claims.filter(Boolean).length, 1);
  const row = await runRow(dbA, jobName, 'k');
  assert.equal(row.state, 'RUNNING');
  assert.equal(row.started_at.getTime(), later.getTime());

  // The original process wakes up: its result is fenced out, the taker's is recorded.
  assert.equal(await finishRun(dbA, jobName, 'k', later, 'DONE', { by: 'crashed' }, T0), false);
  assert.equal(await finishRun(dbB, jobName, 'k', later, 'DONE', { by: 'taker' }, later), true);
  assert.deepEqual((await runRow(dbA, jobName, 'k')).detail, { by: 'taker' });
});

test('a DONE run key is never run again, however late', async (t) => {
  const [db] = await openTwoHandles(t);
  const clock = fakeClock(T0);
  const job = countingJob({ staleAfterMs: MINUTE_MS });
  const scheduler = new Scheduler({ db, now: clock.now, logger: silentLogger(), tickMs: 1000 }).register(job);
  assert.equal((await scheduler.runDue()).length, 1);
  clock.advance(365 * 86_400_000);
  assert.deepEqual(await scheduler.runDue(), []);
  assert.equal(await claimRun(db, job.name, 'key-1', clock.now(), MINUTE_MS), false);
  assert.equal(job.runs, 1);
  assert.equal((await runRow(db, job.name, 'key-1')).state, 'DONE');
});

test('a throwing job is recorded FAILED with its message and retried on a later tick', async (t) => {
  const [db] = await openTwoHandles(t);
  const clock = fakeClock(T0);
  const logger = silentLogger();
  let attempts = 0;
  const job = countingJob({
    async run() {
      attempts++;
      if (attempts === 1) throw new Error('rail unavailable');
      return { attempts };
    },
  });
  const scheduler = new Scheduler({ db, now: clock.now, logger, tickMs: 1000 }).register(job);

  assert.deepEqual(await scheduler.runDue(), [{ job: job.name, runKey: 'key-1', state: 'FAILED' }]);
  const failed = await runRow(db, job.name, 'key-1');
  assert.equal(failed.state, 'FAILED');
  assert.deepEqual(failed.detail, { error: 'rail unavailable' });
  assert.equal(failed.finished_at?.getTime(), T0.getTime());
  assert.deepEqual(logger.errors, ['scheduled job failed']);

  clock.advance(1000);
  assert.deepEqual(await scheduler.runDue(), [{ job: job.name, runKey: 'key-1', state: 'DONE' }]);
  const done = await runRow(db, job.name, 'key-1');
  assert.equal(done.state, 'DONE');
  assert.deepEqual(done.detail, { attempts: 2 });
  assert.equal(done.started_at.getTime(), T0.getTime() + 1000);
});

test('a job done with something to look at (an ACH return file refused) is logged as an error, once', async (t) => {
  const [db] = await openTwoHandles(t);
  const logger = silentLogger();
  const report = { composed: 0, written: 0, returnFiles: 2, returns: 0, unmatched: 1, refused: 1 };
  const job = countingJob({
    async run() {
      const attention = achAttention(report);
      return attention ? { ...report, attention } : report;
    },
  });
  const scheduler = new Scheduler({ db, now: fakeClock(T0).now, logger, tickMs: 1000 }).register(job);
  assert.deepEqual(await scheduler.runDue(), [{ job: job.name, runKey: 'key-1', state: 'DONE' }]);
  assert.deepEqual(logger.errors, [
    'scheduled job needs attention: 1 return file(s) refused (see `ewa ach returns`); 1 return(s) matching no entry of ours and amount (not applied; see `ewa ach returns --unmatched`)',
  ]);
  assert.equal(
    achAttention({ composed: 1, written: 1, returnFiles: 1, returns: 1, unmatched: 0, refused: 0 }),
    undefined,
  );
});

test('stop() aborts the signal and waits for the job in flight', async (t) => {
  const [db] = await openTwoHandles(t);
  const clock = fakeClock(T0);
  const events: string[] = [];
  let started!: () => void;
  const jobStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const job = countingJob({
    async run({ signal }) {
      started();
      await released;
      events.push(`job ended, aborted=${signal.aborted}`);
      return {};
    },
  });
  const scheduler = new Scheduler({ db, now: clock.now, logger: silentLogger(), tickMs: 3_600_000 }).register(
    job,
  );
  scheduler.start();
  await jobStarted;
  const stopped = scheduler.stop().then(() => events.push('stopped'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, [], 'stop() must not resolve while the job runs');
  release();
  await stopped;
  assert.deepEqual(events, ['job ended, aborted=true', 'stopped']);
  assert.equal((await runRow(db, job.name, 'key-1')).state, 'DONE');
  assert.deepEqual(await scheduler.runDue(), [], 'a stopped scheduler runs nothing');
});

test('ticks of one scheduler never overlap, and a failing claim is logged, not thrown', async (t) => {
  const [db] = await openTwoHandles(t);
  const clock = fakeClock(T0);
  const logger = silentLogger();
  let running = 0;
  let overlapped = false;
  const job = countingJob({
    runKeyAt: (now) => everyMinutesRunKey(now, 1),
    async run() {
      running++;
      overlapped ||= running > 1;
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      clock.advance(MINUTE_MS);
    },
  });
  const broken = countingJob({ staleAfterMs: -1 });
  const scheduler = new Scheduler({ db, now: clock.now, logger, tickMs: 1000 })
    .register(broken)
    .register(job);
  // Both asked for at once: the second starts after the first, so it sees the minute the first job moved on to.
  const reports = await Promise.all([scheduler.runDue(), scheduler.runDue()]);
  assert.equal(overlapped, false);
  assert.deepEqual(
    reports.map((report) => report.map((run) => run.runKey)),
    [['2025-03-03T09:00Z'], ['2025-03-03T09:01Z']],
  );
  assert.deepEqual(logger.errors, [
    'scheduled job could not be claimed',
    'scheduled job could not be claimed',
  ]);
});

test('run keys: daily at a local time (latest occurrence, DST-safe) and minute buckets', () => {
  const zone = 'America/New_York';
  assert.equal(dailyRunKey(new Date('2025-03-03T06:59:00Z'), zone, '02:00'), '2025-03-02'); // 01:59 local
  assert.equal(dailyRunKey(new Date('2025-03-03T07:00:00Z'), zone, '02:00'), '2025-03-03'); // 02:00 local
  assert.equal(dailyRunKey(new Date('2025-03-04T04:59:00Z'), zone, '02:00'), '2025-03-03'); // 23:59 local
  // 2025-03-09 02:00 does not exist in New York: 03:00 EDT counts as past it.
  assert.equal(dailyRunKey(new Date('2025-03-09T06:59:00Z'), zone, '02:30'), '2025-03-08'); // 01:59 EST
  assert.equal(dailyRunKey(new Date('2025-03-09T07:00:00Z'), zone, '02:30'), '2025-03-09'); // 03:00 EDT
  // 2025-11-02 01:30 happens twice: both give the same key.
  assert.equal(dailyRunKey(new Date('2025-11-02T05:30:00Z'), zone, '01:30'), '2025-11-02');
  assert.equal(dailyRunKey(new Date('2025-11-02T06:30:00Z'), zone, '01:30'), '2025-11-02');
  assert.throws(() => dailyRunKey(T0, zone, '2:00'), RangeError);

  assert.equal(everyMinutesRunKey(new Date('2025-03-03T10:04:59.999Z'), 5), '2025-03-03T10:00Z');
  assert.equal(everyMinutesRunKey(new Date('2025-03-03T10:05:00Z'), 5), '2025-03-03T10:05Z');
  assert.equal(everyMinutesRunKey(new Date('2025-03-03T10:05:30Z'), 1), '2025-03-03T10:05Z');
  assert.throws(() => everyMinutesRunKey(T0, 0), RangeError);
});
