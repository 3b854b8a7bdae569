import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { TransferService } from '../../src/money/advances/advance-service.ts';
import { railDispatcher } from '../../src/money/money-core.ts';
import { settleDue } from '../../src/money/settlement.ts';
import { createSandboxRail } from '../../src/rails/sandbox-rail.ts';
import { type EwaProcess, spawnEwa } from './ew-processes.ts';
import type { MoneyWorld } from './money-world.ts';

export interface PayrollRoster {
  organizationId: string;
  /** Jobs whose paycheck payday should pay. */
  payableJobIds: string[];
  /** Jobs without a default account: payday holds their paychecks (NO_DEFAULT_ACCOUNT). */
  heldJobIds: string[];
  /** Jobs that took a settled advance during the period. */
  advancedJobIds: string[];
}

const CHUNK = 1000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * An employer with `size` workers, each with an earnings balance and (but for `held` of them) a default bank
 * account; one shift each on `workedOn` through the earnings recorder, recorded at `recordedAt`; every tenth
 * worker takes an advance the next day, which the rail settles before payday. Rows are inserted in bulk, as the
 * roster import makes them; the money moves only through the real services.
 */
export async function createPayrollRoster(
  world: MoneyWorld,
  options: { size: number; held: number; workedOn: string; recordedAt: Date },
): Promise<PayrollRoster> {
  const { db } = world;
  const organizationId = randomUUID();
  await db.insertInto('organizations').values({ id: organizationId, name: 'Payroll e2e employer' }).execute();
  await db.insertInto('organization_policies').values({ organization_id: organizationId }).execute();
  const workers = Array.from({ length: options.size }, (_, i) => ({
    index: i,
    personId: randomUUID(),
    jobId: randomUUID(),
    balanceId: randomUUID(),
    depositoryId: i < options.held ? null : randomUUID(),
  }));
  for (const part of chunks(workers)) {
    await db
      .insertInto('people')
      .values(
        part.map((w) => ({
          id: w.personId,
          email: `${w.personId}@people.example`,
          first_name: 'Robin',
          last_name: 'Lee',
          state_of_residence: 'NY',
        })),
      )
      .execute();
    await db
      .insertInto('accounts')
      .values(
        part.flatMap((w) => [
          {
            id: w.balanceId,
            person_id: w.personId,
            account_type: 'EARNINGS_BALANCE',
            subtype: 'ODP',
            name: 'Earnings balance',
            details: '{}',
          },
          ...(w.depositoryId
            ? [
                {
                  id: w.depositoryId,
                  person_id: w.personId,
                  account_type: 'DEPOSITORY',
                  subtype: 'CHECKING',
                  name: 'Checking',
                  details: JSON.stringify({
                    first_name: 'Robin',
                    last_name: 'Lee',
                    account_number_last4: '7777',
                  }),
                  routing_number: '110000000',
                },
              ]
            : []),
        ]),
      )
      .execute();
    await db
      .insertInto('jobs')
      .values(
        part.map((w) => ({
          id: w.jobId,
          person_id: w.personId,
          organization_id: organizationId,
          external_primary_identifier: `P-${w.index}`,
          external_employee_id: `E-${w.index}`,
          first_name: 'Robin',
          last_name: 'Lee',
          activation_status: 'ACTIVATED',
          wage_rate_minor: 2000,
          wage_frequency: 'HOURLY',
          earnings_balance_account_id: w.balanceId,
          direct_deposit_default_depository_id: w.depositoryId,
          direct_deposit_status: w.depositoryId ? 'SETUP_COMPLETE' : 'SETUP_REQUIRED',
        })),
      )
      .execute();
    const recorded = await world.earnings.record(
      part.map((w) => ({
        jobId: w.jobId,
        externalId: `shift-${w.index}`,
        workedOn: options.workedOn,
        hoursHundredths: 800,
        amountMinor: 10_000 + (w.index % 50) * 137,
        source: 'SHIFT' as const,
      })),
      options.recordedAt,
      { backdated: 'RECORD' },
    );
    if (recorded.outcomes.some((outcome) => outcome !== 'RECORDED'))
      throw new Error(`earnings not recorded: ${[...new Set(recorded.outcomes)].join(', ')}`);
  }
  const rail = createSandboxRail();
  const transfers = new TransferService({ db, ledger: world.ledger, duplicateWindowMs: 0 });
  const advanceAt = new Date(options.recordedAt.getTime() + 86_400_000);
  const advanced = workers.filter((w) => w.depositoryId && w.index % 10 === 0);
  // Different people never wait on each other: ten at a time, as many as the pool has connections.
  for (let i = 0; i < advanced.length; i += 10)
    await Promise.all(
      advanced.slice(i, i + 10).map((w) =>
        transfers.create(
          w.personId,
          {
            id: undefined,
            amountMinor: 1000 + (w.index % 1000),
            currency: 'USD',
            schedule: 'NEXT_BUSINESS_DAY',
            preview: false,
            originId: w.balanceId,
            destinationId: w.depositoryId!,
            personId: undefined,
          },
          advanceAt,
        ),
      ),
    );
  // Settled well before payday: a PENDING advance would hold its paycheck instead.
  const settleAt = new Date(advanceAt.getTime() + 5 * 86_400_000);
  await railDispatcher(db, world.ledger, rail, loadConfig({}).money.outbox).dispatchDue(settleAt);
  const settled = await settleDue(db, world.ledger, rail, settleAt);
  if (settled.settled !== advanced.length)
    throw new Error(`settled ${settled.settled} of ${advanced.length}`);
  return {
    organizationId,
    payableJobIds: workers.filter((w) => w.depositoryId).map((w) => w.jobId),
    heldJobIds: workers.filter((w) => !w.depositoryId).map((w) => w.jobId),
    advancedJobIds: advanced.map((w) => w.jobId),
  };
}

/** Payday as an operator runs it: `ewa payroll run --date YYYY-MM-DD --json`, a process a test may kill. */
export function startPayrollRun(env: Record<string, string>, day: string): EwaProcess {
  return spawnEwa(['payroll', 'run', '--date', day, '--json'], env);
}

/** The report a finished `ewa payroll run --json` printed. */
export function payrollReportOf(run: EwaProcess): { closed: number; paid: number; held: number } {
  const line = run
    .output()
    .split('\n')
    .find((candidate) => candidate.startsWith('{"as_of"'));
  if (!line) throw new Error(`no report from ewa payroll run:\n${run.output()}`);
  return JSON.parse(line);
}
