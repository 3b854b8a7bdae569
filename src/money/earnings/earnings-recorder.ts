import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { lockPeople } from '../../db/lock-order.ts';
import { type Tx, withTransaction } from '../../db/transaction.ts';
import { localDateOf } from '../../domain/calendar.ts';
import { ensureOwnedLedgerAccounts, type SystemLedger } from '../../ledger/ledger-accounts.ts';
import { earningsAccrued } from '../../ledger/movements.ts';
import { type Movement, postMovements } from '../../ledger/posting.ts';
import { creditAccessibleEarnings, withdrawInaccessibleEarnings } from './accessible-earnings.ts';
import { type JobTerms, loadJobTerms, payCalendarOf } from './job-terms.ts';
import { type PayPeriod, payPeriodContaining } from './pay-periods.ts';
import { paycheckFigures } from './paycheck-math.ts';
import { ensurePaychecks, type PaycheckRow, paycheckKey } from './paychecks.ts';

export type EarningsSource = 'SHIFT' | 'SALARY' | 'ADJUSTMENT';

/**
 * One shift or day of salary, already checked: the job exists and the amount is in the job's currency. A negative
 * amount is a correction that lowers pay; `reverses` names an earlier row of the job whose pay is taken back whole
 * (then `workedOn` and `amountMinor` are the reversed row's, whatever the input says).
 */
export interface EarningsInput {
  jobId: string;
  /** The employer's id of the row; a second row with the same id for the same job is a duplicate, not new pay. */
  externalId: string;
  workedOn: string | null;
  hoursHundredths: number | null;
  amountMinor: number;
  source: EarningsSource;
  reverses?: string | null;
}

/** The hours one job may have on one day, in hundredths, across all its rows: a day has 24. */
export const HOURS_OF_DAY_HUNDREDTHS_MAX = 2_400;

/**
 * RECORDED; DUPLICATE (this id was recorded before); PERIOD_CLOSED (its paycheck is past ESTIMATED); BACKDATED (its
 * pay period's deposit day is before today and the caller refuses such pay; see RecordOptions); HOURS_EXCEEDED (its
 * hours would take its job's day past 24); PAY_BELOW_ZERO (a negative amount larger than its job's pay of that
 * pay period); for a reversal, UNKNOWN_REVERSED_ROW (the job has no such row), ALREADY_REVERSED (another row reversed it),
 * NOT_REVERSIBLE (it is a reversal itself).
 */
export type EarningsOutcome =
  | 'RECORDED'
  | 'DUPLICATE'
  | 'PERIOD_CLOSED'
  | 'BACKDATED'
  | 'HOURS_EXCEEDED'
  | 'PAY_BELOW_ZERO'
  | 'UNKNOWN_JOB'
  | 'UNKNOWN_REVERSED_ROW'
  | 'ALREADY_REVERSED'
  | 'NOT_REVERSIBLE';

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
  /** What corrections took back from earnings balances (never more than advances had left there). */
  withdrawnMinor: number;
  /**
   * For each HOURS_EXCEEDED outcome, by its index: the hours (hundredths) its job had on that day before it, what was
   * recorded before and the earlier inputs of this call.
   */
  hoursBefore: ReadonlyMap<number, number>;
  /** For each PAY_BELOW_ZERO outcome, by its index: its job's pay of that period before it (minor units), as above. */
  payBefore: ReadonlyMap<number, number>;
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

interface ReversedRow {
  id: string;
  worked_on: string;
  amount_minor: number;
  hours_hundredths: number | null;
  is_reversal: boolean;
  reversed: boolean;
}

/** The rows reversals name, read under the people's locks (so a reversal recorded meanwhile is seen). */
async function reversedRows(tx: Tx, inputs: readonly EarningsInput[]): Promise<Map<string, ReversedRow>> {
  const wanted = inputs.filter((input) => input.reverses);
  if (wanted.length === 0) return new Map();
  const { rows } = await sql<ReversedRow & { job_id: string; external_id: string }>`select e.id, e.job_id,
      e.external_id, e.worked_on::text as worked_on, e.amount_minor, e.hours_hundredths,
      e.reverses_earning_id is not null as is_reversal,
      exists (select 1 from earnings r where r.reverses_earning_id = e.id) as reversed
    from earnings e join unnest(${wanted.map((i) => i.jobId)}::uuid[], ${wanted.map((i) => i.reverses)}::text[])
      as w(job_id, external_id) on e.job_id = w.job_id and e.external_id = w.external_id`.execute(tx);
  return new Map(
    rows.map((row) => [
      `${row.job_id}/${row.external_id}`,
      {
        ...row,
        amount_minor: Number(row.amount_minor),
        hours_hundredths: row.hours_hundredths === null ? null : Number(row.hours_hundredths),
      },
    ]),
  );
}

/**
 * Each reversal as the correction it records (the reversed row's day, its pay negated), or why it cannot be one.
 * Two rows of one batch reversing the same row: the first wins.
 */
function resolveReversals(
  inputs: readonly EarningsInput[],
  reversed: ReadonlyMap<string, ReversedRow>,
  isKnown: (input: EarningsInput) => boolean,
): {
  input: EarningsInput;
  reversesId: string | null;
  /** The hours of the row a reversal takes back, which leave its day's total. */
  reversedHours?: number | null;
  problem?: EarningsOutcome;
}[] {
  const taken = new Set<string>();
  return inputs.map((input) => {
    if (!input.reverses || isKnown(input)) return { input, reversesId: null };
    const row = reversed.get(`${input.jobId}/${input.reverses}`);
    if (!row) return { input, reversesId: null, problem: 'UNKNOWN_REVERSED_ROW' };
    if (row.is_reversal) return { input, reversesId: null, problem: 'NOT_REVERSIBLE' };
    if (row.reversed || taken.has(row.id)) return { input, reversesId: null, problem: 'ALREADY_REVERSED' };
    taken.add(row.id);
    return {
      input: { ...input, workedOn: row.worked_on, hoursHundredths: null, amountMinor: -row.amount_minor },
      reversesId: row.id,
      reversedHours: row.hours_hundredths,
    };
  });
}

/**
 * The hours (hundredths) each of these jobs has on each of these days: its rows with hours that no reversal has
 * taken back. A negative amount lowers pay, not hours (it names no hours): hours are corrected by reversing the row.
 * Read under the people's locks, which every writer of a job's earnings takes first, so two imports of one job and
 * day count each other's rows.
 */
async function hoursOfDays(
  tx: Tx,
  days: readonly { jobId: string; workedOn: string }[],
): Promise<Map<string, number>> {
  const keys = [...new Map(days.map((d) => [`${d.jobId}/${d.workedOn}`, d])).values()];
  if (keys.length === 0) return new Map();
  const { rows } = await hoursOfDaysQuery(keys).execute(tx);
  return new Map(rows.map((row) => [`${row.job_id}/${row.worked_on}`, Number(row.hours)]));
}

/** The statement of `hoursOfDays`, for its test to EXPLAIN: it must find a job's day by earnings_job_worked_on_idx. */
export function hoursOfDaysQuery(keys: readonly { jobId: string; workedOn: string }[]) {
  return sql<{ job_id: string; worked_on: string; hours: number | string }>`select e.job_id,
      e.worked_on::text as worked_on, sum(e.hours_hundredths) as hours
    from earnings e join unnest(${keys.map((k) => k.jobId)}::uuid[], ${keys.map((k) => k.workedOn)}::date[])
      as w(job_id, worked_on) on e.job_id = w.job_id and e.worked_on = w.worked_on
    where e.hours_hundredths is not null
      and not exists (select 1 from earnings r where r.reverses_earning_id = e.id)
    group by e.job_id, e.worked_on`;
}

/**
 * Refuses (HOURS_EXCEEDED) each input whose hours would take its job's day past 24, in input order: what is
 * recorded already, less what this call's reversals take back, plus this call's earlier inputs. Returns the hours
 * each refused input met.
 */
async function capHoursOfDay(
  tx: Tx,
  inputs: readonly { input: EarningsInput; reversedHours?: number | null }[],
  outcomes: EarningsOutcome[],
): Promise<Map<number, number>> {
  const hourly = inputs.flatMap(({ input }, index) =>
    outcomes[index] === 'RECORDED' && input.hoursHundredths !== null && input.workedOn !== null
      ? [{ jobId: input.jobId, workedOn: input.workedOn }]
      : [],
  );
  const refused = new Map<number, number>();
  if (hourly.length === 0) return refused;
  const totals = await hoursOfDays(tx, hourly);
  const counted = new Set<string>();
  inputs.forEach(({ input, reversedHours }, index) => {
    if (outcomes[index] !== 'RECORDED' || input.workedOn === null) return;
    const day = `${input.jobId}/${input.workedOn}`;
    if (reversedHours) {
      totals.set(day, (totals.get(day) ?? 0) - reversedHours);
      return;
    }
    if (input.hoursHundredths === null) return;
    // A row repeated in this call is recorded once (the insert keeps the first): its hours count once.
    const row = `${input.jobId}/${input.externalId}`;
    if (counted.has(row)) return;
    const before = totals.get(day) ?? 0;
    if (before + input.hoursHundredths > HOURS_OF_DAY_HUNDREDTHS_MAX) {
      outcomes[index] = 'HOURS_EXCEEDED';
      refused.set(index, before);
      return;
    }
    counted.add(row);
    totals.set(day, before + input.hoursHundredths);
  });
  return refused;
}

/**
 * Refuses (PAY_BELOW_ZERO) each negative amount that would take its job's pay of its pay period below zero, in input
 * order: what is recorded for the period's days (corrections and reversals included), plus this call's earlier
 * inputs of those days. A correction lowers pay recorded for its period; one larger than that pay is a mistake (a
 * digit too many), and recorded it would become an overpayment of pay the worker never had. A reversal takes back
 * one row whole and is not refused here, but counts. Read under the people's locks, as the hours are. Returns the
 * pay each refused input met.
 */
async function capPayOfPeriod(
  tx: Tx,
  inputs: readonly ({ input: EarningsInput; period: PayPeriod; reversesId: string | null } | undefined)[],
  outcomes: EarningsOutcome[],
): Promise<Map<number, number>> {
  const lowering = (index: number) => {
    const p = inputs[index];
    return (
      p !== undefined && outcomes[index] === 'RECORDED' && p.reversesId === null && p.input.amountMinor < 0
    );
  };
  const refused = new Map<number, number>();
  if (!inputs.some((_, index) => lowering(index))) return refused;
  const periodOf = (p: { input: EarningsInput; period: PayPeriod }) =>
    `${p.input.jobId}/${p.period.firstDay}`;
  const keys = [
    ...new Map(
      inputs.flatMap((p, index) => (p && lowering(index) ? [[periodOf(p), p] as const] : [])),
    ).values(),
  ];
  const { rows } = await sql<{ job_id: string; first_day: string; pay: number | string }>`select w.job_id,
      w.first_day::text as first_day, sum(e.amount_minor) as pay
    from unnest(${keys.map((k) => k.input.jobId)}::uuid[], ${keys.map((k) => k.period.firstDay)}::date[],
        ${keys.map((k) => k.period.lastDay)}::date[]) as w(job_id, first_day, last_day)
      join earnings e on e.job_id = w.job_id and e.worked_on between w.first_day and w.last_day
    group by w.job_id, w.first_day`.execute(tx);
  const totals = new Map(rows.map((row) => [`${row.job_id}/${row.first_day}`, Number(row.pay)]));
  const counted = new Set<string>();
  inputs.forEach((p, index) => {
    if (!p || outcomes[index] !== 'RECORDED') return;
    // A row repeated in this call is recorded once (the insert keeps the first): its pay counts once.
    const row = `${p.input.jobId}/${p.input.externalId}`;
    if (counted.has(row)) return;
    const period = periodOf(p);
    const before = totals.get(period) ?? 0;
    if (lowering(index) && before + p.input.amountMinor < 0) {
      outcomes[index] = 'PAY_BELOW_ZERO';
      refused.set(index, before);
      return;
    }
    counted.add(row);
    totals.set(period, before + p.input.amountMinor);
  });
  return refused;
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
  // A row recorded before is a duplicate even when its period has closed since: sending a file again is safe.
  const known = await recordedBefore(
    tx,
    inputs.filter((input) => terms.has(input.jobId)),
  );
  const isKnown = (input: EarningsInput) => known.has(`${input.jobId}/${input.externalId}`);
  const resolved = resolveReversals(inputs, await reversedRows(tx, inputs), isKnown);
  const origin = resolved.map(({ input, reversesId, problem }) => {
    const job = terms.get(input.jobId);
    if (!job || problem || input.workedOn === null) return undefined;
    const period = payPeriodContaining(payCalendarOf(job.policy), input.workedOn);
    const late = period.depositDay < today(job.policy.timeZone);
    return { input, job, period, late, reversesId, key: paycheckKey(job.jobId, period.startsAt) };
  });
  // A correction (pay lowered, or a row reversed, whatever its sign) of a period that is closed, or whose deposit day is past, lands on
  // the job's current paycheck: a correction is never refused for being late, and every overpayment it makes is
  // found when a paycheck closes (docs/design/ledger.md).
  const isCorrection = (p: NonNullable<(typeof origin)[number]>) =>
    p.input.amountMinor < 0 || p.reversesId !== null;
  const closedOrigins = await closedPaychecks(
    tx,
    origin.flatMap((p) =>
      p && isCorrection(p) ? [{ jobId: p.job.jobId, startsAt: p.period.startsAt }] : [],
    ),
  );
  const placed = origin.map((p) => {
    if (!p || !isCorrection(p) || (!p.late && !closedOrigins.has(p.key))) return p;
    const period = payPeriodContaining(payCalendarOf(p.job.policy), today(p.job.policy.timeZone));
    return { ...p, period, late: false, key: paycheckKey(p.job.jobId, period.startsAt) };
  });
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
  const outcomes: EarningsOutcome[] = placed.map((p, index) => {
    const { input, problem } = resolved[index]!;
    if (!terms.has(input.jobId)) return 'UNKNOWN_JOB';
    if (isKnown(input)) return 'DUPLICATE';
    if (problem) return problem;
    if (!p) return 'UNKNOWN_JOB';
    if (refused(p)) return closed.has(p.key) ? 'PERIOD_CLOSED' : 'BACKDATED';
    return paychecks.get(p.key)?.status === 'ESTIMATED' ? 'RECORDED' : 'PERIOD_CLOSED';
  });
  const hoursBefore = await capHoursOfDay(tx, resolved, outcomes);
  const payBefore = await capPayOfPeriod(tx, origin, outcomes);
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
        paycheck_id, external_id, worked_on, hours_hundredths, amount_minor, currency, source, reverses_earning_id)
      select * from unnest(${candidates.map((c) => c.id)}::uuid[], ${candidates.map((c) => c.job.jobId)}::uuid[],
        ${candidates.map((c) => paychecks.get(c.key)?.id ?? null)}::uuid[],
        ${candidates.map((c) => c.input.externalId)}::text[], ${candidates.map((c) => c.input.workedOn)}::date[],
        ${candidates.map((c) => c.input.hoursHundredths)}::integer[],
        ${candidates.map((c) => c.input.amountMinor)}::bigint[],
        ${candidates.map((c) => c.job.policy.currency)}::char(3)[], ${candidates.map((c) => c.input.source)}::text[],
        ${candidates.map((c) => c.reversesId)}::uuid[])
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
    const before = {
      grossMinor: row.gross_earnings_minor,
      withholdingsMinor: row.employer_withholdings_minor,
    };
    const figures = paycheckFigures(before, delta, job.policy.withholdingEstimateBp);
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
  const withdrawn = await withdrawInaccessibleEarnings(tx, changed, terms, now);
  const creditedMinor = await creditAccessibleEarnings(tx, withdrawn.paychecks, terms, now);
  return {
    outcomes,
    recordedMinor,
    creditedMinor,
    withdrawnMinor: withdrawn.withdrawnMinor,
    hoursBefore,
    payBefore,
  };
}
