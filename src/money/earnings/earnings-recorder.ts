import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { type Tx, withTransaction } from '../../db/transaction.ts';
import { localDateOf } from '../../domain/calendar.ts';
import { ensureOwnedLedgerAccounts, type SystemLedger } from '../../ledger/ledger-accounts.ts';
import { earningsAccrued } from '../../ledger/movements.ts';
import { type Movement, postMovements } from '../../ledger/posting.ts';
import { creditAccessibleEarnings } from './accessible-earnings.ts';
import { type JobTerms, loadJobTerms, payCalendarOf } from './job-terms.ts';
import { payPeriodContaining } from './pay-periods.ts';
import { paycheckFigures } from './paycheck-math.ts';
import { ensurePaychecks, type PaycheckRow, paycheckKey } from './paychecks.ts';

export type EarningsSource = 'SHIFT' | 'SALARY' | 'ADJUSTMENT';

/** One shift or day of salary, already checked: the job exists and the amount is in the job's currency. */
export interface EarningsInput {
  jobId: string;
  /** The employer's id of the row; a second row with the same id for the same job is a duplicate, not new pay. */
  externalId: string;
  workedOn: string;
  hoursHundredths: number | null;
  amountMinor: number;
  source: EarningsSource;
}

/**
 * RECORDED; DUPLICATE (this id was recorded before); PERIOD_CLOSED (its paycheck is past ESTIMATED); BACKDATED (its
 * pay period's deposit day is before today and the caller refuses such pay; see RecordOptions).
 */
export type EarningsOutcome = 'RECORDED' | 'DUPLICATE' | 'PERIOD_CLOSED' | 'BACKDATED' | 'UNKNOWN_JOB';

export interface RecordOptions {
  /**
   * Pay of a pay period whose deposit day is before today (both in the employer's time zone): REFUSE answers
   * BACKDATED and writes nothing of it, not even its paycheck; RECORD records it as any other: on its paycheck while
   * that is ESTIMATED (made if new), the accessible share credited at once, the rest paid by the next payroll run,
   * after the deposit day it has missed. Each caller says which: an operator's file refuses it unless the operator
   * allows it; salary accrual catches up the previous period's last days, whose deposit day may be past.
   */
  backdated: 'REFUSE' | 'RECORD';
}

export interface RecordedEarnings {
  outcomes: EarningsOutcome[];
  recordedMinor: number;
  /** What became accessible in earnings balances as a result. */
  creditedMinor: number;
}

/**
 * Records earnings in one transaction: each lands on the paycheck of its job and pay period (created ESTIMATED
 * when new; pay of a period whose deposit day has passed only as RecordOptions says), raises the paycheck's gross,
 * estimated withholdings and net, posts the net to the paycheck's clearing account against the employer's payroll
 * clearing, and credits the newly accessible share to the earnings balance.
 */
export class EarningsRecorder {
  readonly #db: Db;
  readonly #ledger: SystemLedger;

  constructor(db: Db, ledger: SystemLedger) {
    this.#db = db;
    this.#ledger = ledger;
  }

  async record(
    inputs: readonly EarningsInput[],
    now: Date,
    options: RecordOptions,
  ): Promise<RecordedEarnings> {
    const terms = await loadJobTerms(
      this.#db,
      inputs.map((input) => input.jobId),
    );
    const system = await this.#ledger.accountsForMany(
      [...terms.values()].map((t) => ({ organizationId: t.organizationId, currency: t.policy.currency })),
    );
    return withTransaction(this.#db, (tx) => recordIn(tx, inputs, terms, system, now, options));
  }
}

async function recordedBefore(tx: Tx, inputs: readonly EarningsInput[]): Promise<Set<string>> {
  if (inputs.length === 0) return new Set();
  const { rows } = await sql<{ job_id: string; external_id: string }>`select e.job_id, e.external_id
    from earnings e join unnest(${inputs.map((i) => i.jobId)}::uuid[], ${inputs.map((i) => i.externalId)}::text[])
      as w(job_id, external_id) on e.job_id = w.job_id and e.external_id = w.external_id`.execute(tx);
  return new Set(rows.map((row) => `${row.job_id}/${row.external_id}`));
}

/** The keys (paycheckKey) of these paychecks that exist and are past ESTIMATED; none is created. */
async function closedPaychecks(
  tx: Tx,
  wanted: readonly { jobId: string; startsAt: Date }[],
): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const { rows } = await sql<{ job_id: string; pay_period_starts_at: Date }>`select p.job_id,
      p.pay_period_starts_at
    from paychecks p join unnest(${wanted.map((w) => w.jobId)}::uuid[],
        ${wanted.map((w) => w.startsAt.toISOString())}::timestamptz[]) as w(job_id, starts_at)
      on p.job_id = w.job_id and p.pay_period_starts_at = w.starts_at
    where p.status <> 'ESTIMATED'`.execute(tx);
  return new Set(rows.map((row) => paycheckKey(row.job_id, new Date(row.pay_period_starts_at))));
}

async function recordIn(
  tx: Tx,
  inputs: readonly EarningsInput[],
  terms: ReadonlyMap<string, JobTerms>,
  system: ReadonlyMap<string, { EMPLOYER_PAYROLL_CLEARING: string }>,
  now: Date,
  options: RecordOptions,
): Promise<RecordedEarnings> {
  await lockPeople(
    tx,
    [...terms.values()].map((t) => t.personId),
  );
  const todayIn = new Map<string, string>();
  const today = (timeZone: string) => {
    let day = todayIn.get(timeZone);
    if (day === undefined) {
      day = localDateOf(now, timeZone);
      todayIn.set(timeZone, day);
    }
    return day;
  };
  const placed = inputs.map((input) => {
    const job = terms.get(input.jobId);
    if (!job) return undefined;
    const period = payPeriodContaining(payCalendarOf(job.policy), input.workedOn);
    const late = period.depositDay < today(job.policy.timeZone);
    return { input, job, period, late, key: paycheckKey(job.jobId, period.startsAt) };
  });
  // A row recorded before is a duplicate even when its period has closed since: sending a file again is safe.
  const known = await recordedBefore(
    tx,
    placed.flatMap((p) => (p ? [p.input] : [])),
  );
  const isKnown = (input: EarningsInput) => known.has(`${input.jobId}/${input.externalId}`);
  const refused = (p: (typeof placed)[number]) =>
    p?.late === true && options.backdated === 'REFUSE' && !isKnown(p.input);
  // Refused pay makes no paycheck. A paycheck that payroll has closed refuses it as it would with backdating allowed.
  const closed = await closedPaychecks(
    tx,
    placed.flatMap((p) => (p && refused(p) ? [{ jobId: p.job.jobId, startsAt: p.period.startsAt }] : [])),
  );
  const paychecks = await ensurePaychecks(
    tx,
    placed.flatMap((p) =>
      p && !refused(p)
        ? [
            {
              jobId: p.job.jobId,
              personId: p.job.personId,
              currency: p.job.policy.currency,
              period: p.period,
            },
          ]
        : [],
    ),
  );
  const outcomes: EarningsOutcome[] = placed.map((p) => {
    if (!p) return 'UNKNOWN_JOB';
    if (isKnown(p.input)) return 'DUPLICATE';
    if (refused(p)) return closed.has(p.key) ? 'PERIOD_CLOSED' : 'BACKDATED';
    return paychecks.get(p.key)?.status === 'ESTIMATED' ? 'RECORDED' : 'PERIOD_CLOSED';
  });
  const candidates = placed.flatMap((p, index) =>
    p && outcomes[index] === 'RECORDED' ? [{ ...p, index, id: randomUUID() }] : [],
  );
  const inserted = new Set<string>();
  if (candidates.length > 0) {
    const { rows } = await sql<{
      job_id: string;
      external_id: string;
      id: string;
    }>`insert into earnings (id, job_id,
        paycheck_id, external_id, worked_on, hours_hundredths, amount_minor, currency, source)
      select * from unnest(${candidates.map((c) => c.id)}::uuid[], ${candidates.map((c) => c.job.jobId)}::uuid[],
        ${candidates.map((c) => paychecks.get(c.key)?.id ?? null)}::uuid[],
        ${candidates.map((c) => c.input.externalId)}::text[], ${candidates.map((c) => c.input.workedOn)}::date[],
        ${candidates.map((c) => c.input.hoursHundredths)}::integer[],
        ${candidates.map((c) => c.input.amountMinor)}::bigint[],
        ${candidates.map((c) => c.job.policy.currency)}::char(3)[], ${candidates.map((c) => c.input.source)}::text[])
      on conflict (job_id, external_id) do nothing
      returning id`.execute(tx);
    for (const row of rows) inserted.add(row.id);
  }
  const grossDelta = new Map<string, number>();
  let recordedMinor = 0;
  for (const c of candidates) {
    if (!inserted.has(c.id)) {
      outcomes[c.index] = 'DUPLICATE';
      continue;
    }
    recordedMinor += c.input.amountMinor;
    grossDelta.set(c.key, (grossDelta.get(c.key) ?? 0) + c.input.amountMinor);
  }
  const changed: PaycheckRow[] = [];
  const movements: Movement[] = [];
  const clearing = await ensureOwnedLedgerAccounts(
    tx,
    'paycheck',
    [...grossDelta.keys()].map((key) => {
      const row = paychecks.get(key) as PaycheckRow;
      return { id: row.id, currency: row.currency };
    }),
  );
  for (const [key, delta] of grossDelta) {
    const row = paychecks.get(key) as PaycheckRow;
    const job = terms.get(row.job_id) as JobTerms;
    const figures = paycheckFigures(
      { grossMinor: row.gross_earnings_minor, withholdingsMinor: row.employer_withholdings_minor },
      delta,
      job.policy.withholdingEstimateBp,
    );
    const netDelta = figures.netMinor - row.net_earnings_minor;
    changed.push({
      ...row,
      gross_earnings_minor: figures.grossMinor,
      employer_withholdings_minor: figures.withholdingsMinor,
      net_earnings_minor: figures.netMinor,
    });
    const employer = system.get(`${job.organizationId}/${row.currency}`)?.EMPLOYER_PAYROLL_CLEARING ?? '';
    movements.push(
      earningsAccrued({
        paycheckId: row.id,
        employerClearing: employer,
        paycheckClearing: clearing.get(row.id) ?? '',
        netDeltaMinor: netDelta,
        currency: row.currency,
        at: now,
      }),
    );
  }
  if (changed.length > 0) {
    await sql`update paychecks p set gross_earnings_minor = c.gross, employer_withholdings_minor = c.withheld,
        net_earnings_minor = c.net, updated_at = ${now.toISOString()}::timestamptz
      from unnest(${changed.map((c) => c.id)}::uuid[], ${changed.map((c) => c.gross_earnings_minor)}::bigint[],
        ${changed.map((c) => c.employer_withholdings_minor)}::bigint[],
        ${changed.map((c) => c.net_earnings_minor)}::bigint[]) as c(id, gross, withheld, net)
      where p.id = c.id`.execute(tx);
    await postMovements(tx, movements);
  }
  const creditedMinor = await creditAccessibleEarnings(tx, changed, terms, now);
  return { outcomes, recordedMinor, creditedMinor };
}
