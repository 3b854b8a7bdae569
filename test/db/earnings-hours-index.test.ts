import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { addDays } from '../../src/domain/calendar.ts';
import { hoursOfDaysQuery } from '../../src/money/earnings/earnings-recorder.ts';
import { createWorkerRows, openMoneyWorld } from '../helpers/money-world.ts';
import { onPostgres } from '../helpers/test-database.ts';

const DAYS = 400;
const SHIFTS_PER_DAY = 8;

test("the 24-hours-a-day cap reads a job's day through (job_id, worked_on), not the job's whole history", async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: EXPLAIN of the plans PostgreSQL makes');
    return;
  }
  const world = await openMoneyWorld(t);
  const { jobId } = await createWorkerRows(world);
  const days = Array.from({ length: DAYS }, (_, index) => addDays('2025-01-01', index));
  await world.earnings.record(
    days.flatMap((day) =>
      Array.from({ length: SHIFTS_PER_DAY }, (_, shift) => ({
        jobId,
        externalId: `shift-${day}-${shift}`,
        workedOn: day,
        hoursHundredths: 100,
        amountMinor: 2_000,
        source: 'SHIFT' as const,
      })),
    ),
    new Date('2026-03-01T12:00:00Z'),
    { backdated: 'RECORD' },
  );
  await sql`analyze earnings`.execute(world.db);
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (analyze, costs off) ${hoursOfDaysQuery([
    { jobId, workedOn: days[200]! },
  ])}`.execute(world.db);
  const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
  t.diagnostic(plan);
  assert.match(plan, /Index Cond: \(\(job_id = w\.job_id\) AND \(worked_on = w\.worked_on\)\)/, plan);
  assert.doesNotMatch(plan, /Rows Removed by Filter/, `only the day's rows are read:\n${plan}`);
});
