import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/database.ts';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrate.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { SystemLedger } from '../../src/ledger/ledger-accounts.ts';
import { postMovements } from '../../src/ledger/posting.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

const KEPT = 'a kept balance equals the sum of its entries';
const OWNED_KEEP = 'the ledger accounts of accounts and paychecks keep a balance (reads take it as it is)';

/** The migrations before the kept balances, as a database made by an earlier version has them. */
function migrationsBefore(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-migrations-'));
  for (const file of readdirSync(MIGRATIONS_DIR))
    if (file < name) symlinkSync(join(MIGRATIONS_DIR, file), join(dir, file));
  return dir;
}

async function person(db: Db): Promise<{ personId: string; accountId: string }> {
  const personId = randomUUID();
  const accountId = randomUUID();
  await db
    .insertInto('people')
    .values({ id: personId, email: `${personId}@example.com`, first_name: 'Kept', last_name: 'Balance' })
    .execute();
  await db
    .insertInto('accounts')
    .values({
      id: accountId,
      person_id: personId,
      account_type: 'EARNINGS_BALANCE',
      subtype: 'ODP',
      name: 'Earnings balance',
      details: '{}',
    })
    .execute();
  return { personId, accountId };
}

async function keptViolations(db: Db) {
  return (await checkLedgerInvariants(db)).filter((v) => v.rule === KEPT || v.rule === OWNED_KEEP);
}

test('migration 0020 backfills the balances of a database that already has entries', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  const earlier = migrationsBefore('0020');
  t.after(() => rmSync(earlier, { recursive: true, force: true }));
  await migrate(database.db, { dir: earlier });
  const { db } = database;
  const organization = randomUUID();
  await db.insertInto('organizations').values({ id: organization, name: 'Backfill' }).execute();
  const [alice, bob] = [await person(db), await person(db)];
  const ledger = { fees: randomUUID(), alice: randomUUID(), bob: randomUUID() };
  await sql`insert into ledger_accounts (id, kind, currency, organization_id, account_id) values
    (${ledger.fees}::uuid, 'FEE_REVENUE', 'USD', ${organization}::uuid, null),
    (${ledger.alice}::uuid, 'EARNINGS_BALANCE', 'USD', null, ${alice.accountId}::uuid),
    (${ledger.bob}::uuid, 'EARNINGS_BALANCE', 'USD', null, ${bob.accountId}::uuid)`.execute(db);
  // Entries as the old code wrote them: 500 and 70 to Alice, 120 of it taken back; nothing for Bob.
  for (const [amount, from, to] of [
    [500, ledger.fees, ledger.alice],
    [70, ledger.fees, ledger.alice],
    [120, ledger.alice, ledger.fees],
  ] as const) {
    const posting = randomUUID();
    await sql`insert into ledger_postings (id, kind, posted_at) values (${posting}::uuid, 'TEST', now())`.execute(
      db,
    );
    await sql`insert into ledger_entries (posting_id, ledger_account_id, direction, amount_minor, currency) values
      (${posting}::uuid, ${from}::uuid, 'DEBIT', ${amount}, 'USD'),
      (${posting}::uuid, ${to}::uuid, 'CREDIT', ${amount}, 'USD')`.execute(db);
  }

  // 0020 is applied first, then whatever came after it.
  assert.equal((await migrate(database.db))[0], '0020_kept_balances');
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['id', 'balance_minor'])
    .where('id', 'in', Object.values(ledger))
    .execute();
  const kept = Object.fromEntries(
    rows.map((row) => [row.id, row.balance_minor === null ? null : Number(row.balance_minor)]),
  );
  assert.deepEqual(kept, { [ledger.alice]: 450, [ledger.bob]: 0, [ledger.fees]: null });
  assert.deepEqual(await keptViolations(db), []);
  const balances = await accountBalancesMinor(db, [alice.accountId, bob.accountId]);
  assert.deepEqual(Object.fromEntries(balances), { [alice.accountId]: 450, [bob.accountId]: 0 });
});

test('migration 0031 keeps the balance of RETURNS_PAYABLE, made from its entries; new ones keep it from 0', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  const earlier = migrationsBefore('0031');
  t.after(() => rmSync(earlier, { recursive: true, force: true }));
  await migrate(database.db, { dir: earlier });
  const { db } = database;
  const organization = randomUUID();
  await db.insertInto('organizations').values({ id: organization, name: 'Owed back' }).execute();
  const ledger = { funding: randomUUID(), returns: randomUUID() };
  await sql`insert into ledger_accounts (id, kind, currency, organization_id, balance_minor) values
    (${ledger.funding}::uuid, 'PROVIDER_FUNDING', 'USD', ${organization}::uuid, null),
    (${ledger.returns}::uuid, 'RETURNS_PAYABLE', 'USD', ${organization}::uuid, null)`.execute(db);
  // Two payouts came back (700 and 300), as the code before kept no balance of them.
  for (const amount of [700, 300]) {
    const posting = randomUUID();
    await sql`insert into ledger_postings (id, kind, posted_at) values (${posting}::uuid, 'TEST', now())`.execute(
      db,
    );
    await sql`insert into ledger_entries (posting_id, ledger_account_id, direction, amount_minor, currency) values
      (${posting}::uuid, ${ledger.funding}::uuid, 'DEBIT', ${amount}, 'USD'),
      (${posting}::uuid, ${ledger.returns}::uuid, 'CREDIT', ${amount}, 'USD')`.execute(db);
  }

  assert.equal((await migrate(database.db))[0], '0031_returns_payable_kept');
  const kept = async (ids: string[]) =>
    Object.fromEntries(
      (
        await db
          .selectFrom('ledger_accounts')
          .select(['id', 'balance_minor'])
          .where('id', 'in', ids)
          .execute()
      ).map((row) => [row.id, row.balance_minor === null ? null : Number(row.balance_minor)]),
    );
  assert.deepEqual(await kept(Object.values(ledger)), { [ledger.funding]: null, [ledger.returns]: 1000 });
  assert.deepEqual(await keptViolations(db), []);
  // An organization's system accounts made now: RETURNS_PAYABLE alone keeps a balance.
  const other = randomUUID();
  await db.insertInto('organizations').values({ id: other, name: 'Owed nothing yet' }).execute();
  const system = await new SystemLedger(db).accountsFor(other, 'USD');
  assert.deepEqual(await kept([system.RETURNS_PAYABLE, system.PROVIDER_FUNDING, system.FEE_REVENUE]), {
    [system.RETURNS_PAYABLE]: 0,
    [system.PROVIDER_FUNDING]: null,
    [system.FEE_REVENUE]: null,
  });
});

test('every posting keeps the balances of the accounts it touches, and the invariant finds one that drifts', async (t) => {
  const target = await createTestDatabase(t);
  const database = await openDatabase(target.config);
  t.after(() => database.close());
  await migrate(database.db);
  const { db } = database;
  const organization = randomUUID();
  await db.insertInto('organizations').values({ id: organization, name: 'Kept' }).execute();
  const system = await new SystemLedger(db).accountsFor(organization, 'USD');
  const alice = await person(db);
  const aliceLedger = randomUUID();
  await sql`insert into ledger_accounts (id, kind, currency, account_id)
    values (${aliceLedger}::uuid, 'EARNINGS_BALANCE', 'USD', ${alice.accountId}::uuid)`.execute(db);
  const at = new Date();
  await withTransaction(db, (tx) =>
    postMovements(tx, [
      // Any kind: the posting keeps balances whatever the movement.
      {
        kind: 'PAYDAY',
        postedAt: at,
        lines: [
          { ledgerAccountId: system.PROVIDER_FUNDING, direction: 'DEBIT', amountMinor: 900, currency: 'USD' },
          { ledgerAccountId: aliceLedger, direction: 'CREDIT', amountMinor: 900, currency: 'USD' },
        ],
      },
      {
        kind: 'ADVANCE_SUBMITTED',
        postedAt: at,
        lines: [
          { ledgerAccountId: aliceLedger, direction: 'DEBIT', amountMinor: 300, currency: 'USD' },
          { ledgerAccountId: system.EXTERNAL_BANK, direction: 'CREDIT', amountMinor: 290, currency: 'USD' },
          { ledgerAccountId: system.FEE_REVENUE, direction: 'CREDIT', amountMinor: 10, currency: 'USD' },
        ],
      },
    ]),
  );
  // A posting that rolls back leaves the balance as it was.
  await assert.rejects(
    withTransaction(db, async (tx) => {
      await postMovements(tx, [
        {
          kind: 'PAYDAY',
          postedAt: at,
          lines: [
            { ledgerAccountId: system.PROVIDER_FUNDING, direction: 'DEBIT', amountMinor: 5, currency: 'USD' },
            { ledgerAccountId: aliceLedger, direction: 'CREDIT', amountMinor: 5, currency: 'USD' },
          ],
        },
      ]);
      throw new Error('rolled back');
    }),
    /rolled back/,
  );
  assert.deepEqual(Object.fromEntries(await accountBalancesMinor(db, [alice.accountId])), {
    [alice.accountId]: 600,
  });
  const systemKept = await db
    .selectFrom('ledger_accounts')
    .select(['kind', 'balance_minor'])
    .where('id', 'in', Object.values(system))
    .execute();
  assert.ok(
    systemKept.every((row) => (row.kind === 'RETURNS_PAYABLE') === (row.balance_minor !== null)),
    'the shared system accounts keep no balance, but RETURNS_PAYABLE, which only returns post to',
  );
  assert.deepEqual(await keptViolations(db), []);

  await sql`update ledger_accounts set balance_minor = balance_minor + 1 where id = ${aliceLedger}::uuid`.execute(
    db,
  );
  const drifted = await keptViolations(db);
  assert.equal(drifted.length, 1);
  assert.equal(drifted[0]!.rule, KEPT);
  assert.equal(drifted[0]!.rows[0]!.id, aliceLedger);
  await sql`update ledger_accounts set balance_minor = null where id = ${aliceLedger}::uuid`.execute(db);
  assert.deepEqual(
    (await keptViolations(db)).map((v) => v.rule),
    [OWNED_KEEP],
  );
});
