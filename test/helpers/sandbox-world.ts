import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/database.ts';
import type { MoneyCore } from '../../src/money/money-core.ts';
import { DEMO, demoWorkerIds, seedDemoDataOnce } from '../../src/seed/demo.ts';
import { demoAdvanceRequest } from '../../src/seed/demo-history.ts';

/** The sandbox configuration the demo is seeded with (demo data on, the sandbox rail). */
export const sandboxConfig = loadConfig({});

/** A Wednesday in the demo's pay period of 2 to 15 March 2026, paid 20 March: a payday falls within a month. */
export const SEEDED_AT = new Date('2026-03-11T15:30:00.000Z');

/** The demo workers by first name, with the ids of their job and accounts. */
export const demoWorker = (first: string) => {
  const person = DEMO.people.find((candidate) => candidate.first === first);
  if (!person) throw new Error(`no demo worker ${first}`);
  return { personId: person.id, ...demoWorkerIds(person.id) };
};

/** Seeds the demo data as a first start at `at` does. */
export async function seedDemo(db: Db, at: Date = SEEDED_AT): Promise<void> {
  const outcome = await seedDemoDataOnce(db, at, sandboxConfig, { soleProcess: true });
  if (outcome !== 'SEEDED') throw new Error(`demo data not seeded: ${outcome}`);
}

/** A NEXT_BUSINESS_DAY advance of a demo worker to their checking account, with a fixed id. */
export async function demoAdvance(
  core: MoneyCore,
  first: string,
  id: string,
  amountMinor: number,
  at: Date,
): Promise<void> {
  const worker = demoWorker(first);
  await core.transfers.create(worker.personId, demoAdvanceRequest(worker, id, amountMinor), at);
}

/**
 * The books of a database without the ids drawn at random (ledger accounts, postings, paychecks, paycheck-origin
 * transfers): each ledger account named by what it belongs to, its entries per posting kind and its balance; every
 * transfer and paycheck with its figures, status and times; the earnings. Two databases that lived through the
 * same things have equal books.
 */
export async function booksOf(db: Db): Promise<Record<string, string[]>> {
  const accountKey = sql`la.kind || ':' || coalesce(la.account_id::text, la.organization_id::text, '') ||
    coalesce(':' || pc.job_id::text || '@' || to_char(pc.pay_period_starts_at at time zone 'UTC', 'YYYY-MM-DD'), '')`;
  const rows = async (query: ReturnType<typeof sql<{ row: string }>>) =>
    (await query.execute(db)).rows.map((row) => row.row).sort();
  return {
    entries: await rows(sql<{
      row: string;
    }>`select ${accountKey} || ' ' || p.kind || ' ' || e.direction || ' ' ||
        count(*) || ' ' || sum(e.amount_minor) as row
      from ledger_entries e join ledger_postings p on p.id = e.posting_id
        join ledger_accounts la on la.id = e.ledger_account_id left join paychecks pc on pc.id = la.paycheck_id
      group by la.kind, la.account_id, la.organization_id, pc.job_id, pc.pay_period_starts_at, p.kind, e.direction`),
    balances: await rows(sql<{ row: string }>`select ${accountKey} || ' ' ||
        sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end) as row
      from ledger_entries e join ledger_accounts la on la.id = e.ledger_account_id
        left join paychecks pc on pc.id = la.paycheck_id
      group by la.kind, la.account_id, la.organization_id, pc.job_id, pc.pay_period_starts_at`),
    postings: await rows(sql<{ row: string }>`select p.kind || ' ' || to_char(p.posted_at at time zone 'UTC',
        'YYYY-MM-DD"T"HH24:MI:SS.MS') || ' ' || count(*) as row
      from ledger_postings p group by p.kind, p.posted_at`),
    transfers: await rows(sql<{ row: string }>`select concat_ws(' ',
        coalesce(case when t.origin_account_id is not null then t.id::text end,
          'paycheck:' || pc.job_id || '@' || to_char(pc.pay_period_starts_at at time zone 'UTC', 'YYYY-MM-DD')),
        t.amount_minor, t.fee_minor, t.schedule, t.status, t.failure_reason, t.returned_to,
        t.submitted_at, t.resolved_at, t.returned_at) as row
      from transfers t left join paychecks pc on pc.id = t.origin_paycheck_id`),
    paychecks: await rows(sql<{ row: string }>`select concat_ws(' ', job_id,
        to_char(pay_period_starts_at at time zone 'UTC', 'YYYY-MM-DD'), status, gross_earnings_minor,
        net_earnings_minor, total_debited_minor, accessible_minor, payout_minor, payout_held_reason, deposited_at,
        payout_returned_at) as row
      from paychecks`),
    earnings: await rows(sql<{
      row: string;
    }>`select concat_ws(' ', job_id, external_id, worked_on, amount_minor,
        source) as row from earnings`),
  };
}
