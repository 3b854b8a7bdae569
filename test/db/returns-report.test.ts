/**
 * `ewa reports returns` and GET /admin/reports/returns on money that really came back: on the ACH rail (EWA_RAIL=ach,
 * as test/db/ach-rail.test.ts), an advance settled and returned after its paycheck was paid, and two payday payouts
 * returned (one of another employer), each by a return file the bank drops. The report's lines and totals are
 * checked against the figures of the flow and against the ledger's RETURNS_PAYABLE balance, read apart; then items
 * are recorded repaid (`ewa returns repaid`, POST /admin/reports/returns/{id}/repayment), at once from two callers
 * too. On PGlite, and PostgreSQL with DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { runCli } from '../../src/cli/run.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { SystemLedger } from '../../src/ledger/ledger-accounts.ts';
import { recordReturnRepaid } from '../../src/money/returns-repaid.ts';
import { buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { capture } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { SHARED_PUBLIC_URLS, spawnEwa } from '../helpers/ew-processes.ts';
import { createOrganization, linkedClientToken, restClient } from '../helpers/factories.ts';
import { advanceBody, createPaidWorker, type PaidWorker, postTransfer } from '../helpers/money.ts';
import { entryRecordsOf, type ReturnedEntry, returnFile } from '../helpers/nacha.ts';
import { operatorClient } from '../helpers/operator.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres, openTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { userToken } from '../helpers/tokens.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const FEE_MINOR = 150;
const RETURNED_AT = '2026-03-16T15:00:00.000Z';
const LATER_AT = '2026-03-16T16:00:00.000Z';

interface World {
  app: TestApp;
  database: TestDatabase;
  clock: { now: Date };
  outbound: string;
  inbound: string;
}

async function achWorld(t: TestContext): Promise<World> {
  const folder = await mkdtemp(join(tmpdir(), 'ewa-returns-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const outbound = join(folder, 'outbound');
  const inbound = join(folder, 'inbound');
  const clock = { now: new Date('2026-03-09T12:00:00Z') }; // Monday 08:00 in New York
  const database = await openTestDatabase(t);
  const app = await buildTestAppOn(
    t,
    database,
    {
      EWA_RAIL: 'ach',
      EWA_ACH_OUTBOUND_DIR: outbound,
      EWA_ACH_INBOUND_DIR: inbound,
      EWA_ACH_ODFI: '09100001',
      // The webhook receiver of returnsFlow's partner is on this host.
      EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
    { now: () => clock.now },
  );
  return { app, database, clock, outbound, inbound };
}

async function booksAreSound(world: World) {
  assert.deepEqual(await checkLedgerInvariants(world.database.db), []);
}

async function exchange(world: World, at: string) {
  world.clock.now = new Date(at);
  const report = await world.app.money.exchangeAchFiles(world.clock.now);
  await booksAreSound(world);
  return report;
}

/** The entry record of a payment (advance or paycheck) as the bank received it in our files. */
async function sentRecord(world: World, reference: string): Promise<string> {
  const { rows } = await sql<{ trace_number: string }>`select trace_number from ach_entries
    where reference = ${reference}::uuid`.execute(world.database.db);
  const trace = rows[0]!.trace_number;
  for (const name of (await readdir(world.outbound)).sort()) {
    const record = entryRecordsOf(await readFile(join(world.outbound, name), 'utf8')).get(trace);
    if (record) return record;
  }
  throw new Error(`no file holds the entry of ${reference}`);
}

async function bankReturns(
  world: World,
  name: string,
  returned: ReturnedEntry[],
  createdAt: string,
  at: string,
) {
  await writeFile(join(world.inbound, name), returnFile(returned, { createdAt }));
  const report = await exchange(world, at);
  assert.equal(report.returns, returned.length);
  assert.equal(report.unmatched, 0);
}

/** RETURNS_PAYABLE of each organization, read from the ledger's entries. */
async function ledgerReturnsPayable(world: World): Promise<Record<string, number>> {
  const { rows } = await sql<{ organization_id: string; balance: string | number }>`select a.organization_id,
      sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end) as balance
    from ledger_accounts a join ledger_entries e on e.ledger_account_id = a.id
    where a.kind = 'RETURNS_PAYABLE' group by a.organization_id`.execute(world.database.db);
  return Object.fromEntries(rows.map((row) => [row.organization_id, Number(row.balance)]));
}

/** `ewa …` run on the world's open database. */
async function ewa(world: World, ...argv: string[]) {
  const run = capture();
  const code = await runCli(argv, {
    ...run.context,
    now: () => world.clock.now,
    database: { config: world.app.config, database: world.database },
  });
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

interface Flow {
  world: World;
  acme: string;
  globex: string;
  alice: PaidWorker;
  carol: PaidWorker;
  bob: PaidWorker;
  advanceId: string;
  payoutA: string;
  payoutB: string;
  /** With `partner`: what Acme's partner app received of its workers' paychecks. */
  received: Awaited<ReturnType<typeof startReceiver>>['received'];
}

/**
 * Carol (Acme) takes 3,000 on Monday 9 March; it settles on Tuesday. Payday (Monday 16 March) pays Alice and
 * Carol of Acme and Bob of Globex. At 15:00 the bank returns Carol's advance (R03: her paycheck is paid, so it is
 * owed to her) and Alice's payout (R04); at 16:00 Bob's payout (R01).
 */
async function returnsFlow(t: TestContext, options: { partner?: boolean } = {}): Promise<Flow> {
  const world = await achWorld(t);
  const { app } = world;
  const acme = await createOrganization(app, {
    name: 'Acme',
    policy: { fee_bank_next_day_minor: FEE_MINOR },
  });
  const globex = await createOrganization(app, {
    name: 'Globex',
    policy: { fee_bank_next_day_minor: FEE_MINOR },
  });
  const now = world.clock.now;
  const alice = await createPaidWorker(app, { organizationId: acme, earnedMinor: 40_000, now });
  const carol = await createPaidWorker(app, { organizationId: acme, earnedMinor: 40_000, now });
  const bob = await createPaidWorker(app, { organizationId: globex, earnedMinor: 40_000, now });
  // Acme's partner app, which Alice and Carol signed in to, with a webhook endpoint for their paychecks.
  const receiver = options.partner ? await startReceiver(t) : undefined;
  if (receiver) {
    const { client, token } = await linkedClientToken(app, [acme], ['client:admin']);
    const created = await restClient(app, token).post('/rest/webhook_endpoints', {
      data: {
        type: 'webhook_endpoints',
        attributes: {
          url: receiver.url,
          event_types: ['paycheck.status_changed', 'paycheck.payout_returned'],
        },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    receiver.secrets.push(created.json().data.attributes.secret);
    for (const paid of [alice, carol]) await userToken(app, paid.personId, ['user:read'], client.clientId);
  }
  const answer = await postTransfer(app, carol.token, advanceBody(carol, { amount: 3_000 }));
  assert.equal(answer.statusCode, 200, answer.body);
  const advanceId = answer.json().data.id as string;
  await app.money.outbox.dispatchDue(world.clock.now);
  assert.equal((await exchange(world, '2026-03-09T14:31:00Z')).written, 1);
  assert.equal((await app.money.settle(new Date('2026-03-10T13:00:00Z'))).settled, 1);

  assert.deepEqual(await app.money.payroll(new Date('2026-03-16T13:00:00Z')), {
    closed: 3,
    paid: 3,
    held: 0,
  });
  world.clock.now = new Date('2026-03-16T13:00:00Z');
  await app.money.outbox.dispatchDue(world.clock.now);
  assert.equal((await exchange(world, '2026-03-16T14:31:00Z')).written, 1);
  const payout = async (paid: PaidWorker) => {
    const { rows } = await sql<{ id: string; payout_minor: number }>`select id, payout_minor from paychecks
      where job_id = ${paid.jobId}::uuid`.execute(world.database.db);
    return { id: rows[0]!.id, payout: Number(rows[0]!.payout_minor) };
  };
  const [payA, payC, payB] = [await payout(alice), await payout(carol), await payout(bob)];
  assert.deepEqual([payA.payout, payC.payout, payB.payout], [30_000, 27_000, 30_000]);

  await bankReturns(
    world,
    'returns-1.ach',
    [
      { entryRecord: await sentRecord(world, advanceId), returnCode: 'R03' },
      { entryRecord: await sentRecord(world, payA.id), returnCode: 'R04' },
    ],
    '2603161100',
    RETURNED_AT,
  );
  await bankReturns(
    world,
    'returns-2.ach',
    [{ entryRecord: await sentRecord(world, payB.id), returnCode: 'R01' }],
    '2603161200',
    LATER_AT,
  );
  // What the ledger holds, read apart from the report: Carol's 3,000 and Alice's 30,000; Bob's 30,000.
  assert.deepEqual(await ledgerReturnsPayable(world), { [acme]: 33_000, [globex]: 30_000 });
  await app.webhooks.dispatcher.dispatchDue(world.clock.now);
  return {
    world,
    acme,
    globex,
    alice,
    carol,
    bob,
    advanceId,
    payoutA: payA.id,
    payoutB: payB.id,
    received: receiver?.received ?? [],
  };
}

async function emailOf(world: World, paid: PaidWorker): Promise<string> {
  const { rows } = await sql<{ email: string }>`select email from people
    where id = ${paid.personId}::uuid`.execute(world.database.db);
  return rows[0]!.email;
}

async function expectedLines(flow: Flow) {
  const { world } = flow;
  const line = async (kind: string, id: string, paid: PaidWorker, organization: string, minor: number) => ({
    kind,
    id,
    person_id: paid.personId,
    email: await emailOf(world, paid),
    organization_id: organization,
    currency: 'USD',
    amount_minor: minor,
    amount: `${minor / 100}.00`,
  });
  // Carol's advance and Alice's payout came back together: in id order.
  const first = [
    { ...(await line('ADVANCE', flow.advanceId, flow.carol, flow.acme, 3_000)), return_reason: 'R03' },
    { ...(await line('PAYOUT', flow.payoutA, flow.alice, flow.acme, 30_000)), return_reason: 'R04' },
  ]
    .map((item) => ({ ...item, returned_at: RETURNED_AT }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const bob = {
    ...(await line('PAYOUT', flow.payoutB, flow.bob, flow.globex, 30_000)),
    return_reason: 'R01',
    returned_at: LATER_AT,
  };
  return [...first, bob];
}

const total = (organization: string, items: number, minor: number, ledgerMinor = minor) => ({
  organization_id: organization,
  currency: 'USD',
  items,
  amount_minor: minor,
  amount: `${minor / 100}.00`,
  ledger_minor: ledgerMinor,
  ledger: `${ledgerMinor / 100}.00`,
  differs: minor !== ledgerMinor,
});

test('ewa reports returns: each returned payout and advance owed back, with totals equal to RETURNS_PAYABLE', async (t) => {
  const flow = await returnsFlow(t);
  const { world, acme, globex } = flow;
  const lines = await expectedLines(flow);
  const byName = [acme, globex].sort();

  const all = await ewa(world, 'reports', 'returns');
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(JSON.parse(all.stdout), {
    organization_id: null,
    organization_name: null,
    reconciled: true,
    totals: byName.map((id) => (id === acme ? total(acme, 2, 33_000) : total(globex, 1, 30_000))),
    totals_truncated: false,
    lines,
  });
  assert.match(
    all.stderr,
    new RegExp(`${acme} USD: 2 owed, 330.00 USD; ledger RETURNS_PAYABLE 330.00 USD\\n`),
  );

  // One employer's: its lines and its total only.
  const ofAcme = await ewa(world, 'reports', 'returns', '--organization', acme.toUpperCase());
  assert.equal(ofAcme.code, 0, ofAcme.stderr);
  assert.deepEqual(JSON.parse(ofAcme.stdout), {
    organization_id: acme,
    organization_name: 'Acme',
    reconciled: true,
    totals: [total(acme, 2, 33_000)],
    totals_truncated: false,
    lines: lines.filter((line) => line.organization_id === acme),
  });
  const ofGlobex = await ewa(world, 'reports', 'returns', '--org', globex, '--format', 'csv');
  assert.equal(ofGlobex.code, 0, ofGlobex.stderr);
  const bob = lines.at(-1)!;
  assert.equal(
    ofGlobex.stdout,
    'kind,id,person_id,email,organization_id,currency,amount_minor,amount,return_reason,returned_at\n' +
      `PAYOUT,${flow.payoutB},${bob.person_id},${bob.email},${globex},USD,30000,300.00,R01,${LATER_AT}\n`,
  );
  assert.equal(ofGlobex.stderr, `${globex} USD: 1 owed, 300.00 USD; ledger RETURNS_PAYABLE 300.00 USD\n`);

  // Input refused on its face (exit 2, naming the flag) or by the records (exit 1): nothing on standard output.
  const unknown = await ewa(
    world,
    'reports',
    'returns',
    '--organization',
    '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009',
  );
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No organization 6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009/);
  assert.equal(unknown.stdout, '');
  const malformed = await ewa(world, 'reports', 'returns', '--organization', 'acme');
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /--organization/);
  assert.equal(malformed.stdout, '');
  const format = await ewa(world, 'reports', 'returns', '--format', 'xml');
  assert.equal(format.code, 2);
  assert.match(format.stderr, /--format must be json or csv/);

  // A line whose record no longer says it is owed (the books changed by hand): the total differs from the
  // ledger, the report says so and exits 1.
  await sql`update transfers set returned_to = 'EARNINGS_BALANCE' where id = ${flow.advanceId}::uuid`.execute(
    world.database.db,
  );
  const differs = await ewa(world, 'reports', 'returns', '--organization', acme);
  assert.equal(differs.code, 1);
  const report = JSON.parse(differs.stdout);
  assert.equal(report.reconciled, false);
  assert.deepEqual(report.totals, [total(acme, 1, 30_000, 33_000)]);
  assert.match(differs.stderr, /ledger RETURNS_PAYABLE 330.00 USD: DIFFERS\n/);
  assert.match(differs.stderr, /run ewa ledger check/);
});

test('GET /admin/reports/returns: the items owed in pages, the totals with the ledger in meta', async (t) => {
  const flow = await returnsFlow(t);
  const { world, acme, globex } = flow;
  const lines = await expectedLines(flow);
  const { call } = await operatorClient(world.app);
  const resource = ({ id, ...attributes }: (typeof lines)[number]) => ({
    type: 'returns_payable',
    id,
    attributes,
  });
  const totals = [acme, globex]
    .sort()
    .map((id) => (id === acme ? total(acme, 2, 33_000) : total(globex, 1, 30_000)));

  const first = await call('GET', '/admin/reports/returns?page[size]=2');
  assert.equal(first.statusCode, 200, first.body);
  const body = first.json();
  assert.deepEqual(body.data, lines.slice(0, 2).map(resource));
  assert.deepEqual(body.meta, {
    organization_id: null,
    organization_name: null,
    reconciled: true,
    totals,
    totals_truncated: false,
  });
  const next = new URL(body.links.next);
  const second = await call('GET', `${next.pathname}${next.search}`);
  assert.equal(second.statusCode, 200, second.body);
  assert.deepEqual(second.json().data, lines.slice(2).map(resource));
  assert.equal(second.json().links, undefined);

  const ofGlobex = await call('GET', `/admin/reports/returns?filter[organization]=${globex}`);
  assert.equal(ofGlobex.statusCode, 200, ofGlobex.body);
  assert.deepEqual(ofGlobex.json().data, lines.slice(2).map(resource));
  assert.deepEqual(ofGlobex.json().meta.totals, [total(globex, 1, 30_000)]);
  assert.equal(ofGlobex.json().meta.organization_name, 'Globex');

  const unknown = await call(
    'GET',
    '/admin/reports/returns?filter[organization]=6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009',
  );
  assert.equal(unknown.statusCode, 404, unknown.body);
  const malformed = await call('GET', '/admin/reports/returns?filter[organization]=acme');
  assert.equal(malformed.statusCode, 400);
  assert.deepEqual(malformed.json().errors[0].source, { parameter: 'filter[organization]' });
  const size = await call('GET', '/admin/reports/returns?page[size]=0');
  assert.equal(size.statusCode, 400);
  assert.deepEqual(size.json().errors[0].source, { parameter: 'page[size]' });
});

/** The RETURN_REPAID postings of the flow: item, memo and what left RETURNS_PAYABLE. */
async function repaidPostings(world: World) {
  const { rows } = await sql<{ item: string; memo: string; minor: string | number }>`select
      coalesce(lp.paycheck_id, lp.transfer_id)::text as item, lp.memo, e.amount_minor as minor
    from ledger_postings lp join ledger_entries e on e.posting_id = lp.id and e.direction = 'DEBIT'
      join ledger_accounts a on a.id = e.ledger_account_id and a.kind = 'RETURNS_PAYABLE'
    where lp.kind = 'RETURN_REPAID' order by lp.posted_at`.execute(world.database.db);
  return rows.map((row) => ({ ...row, minor: Number(row.minor) }));
}

test('ewa returns repaid: an item paid by other means leaves the report and RETURNS_PAYABLE together, once', async (t) => {
  const flow = await returnsFlow(t);
  const { world, acme, globex } = flow;
  world.clock.now = new Date('2026-03-18T10:00:00Z');

  const repaid = await ewa(
    world,
    'returns',
    'repaid',
    flow.advanceId,
    '--reference',
    ' WIRE 0318-1 ',
    '--json',
  );
  assert.equal(repaid.code, 0, repaid.stderr);
  assert.deepEqual(JSON.parse(repaid.stdout), {
    kind: 'ADVANCE',
    id: flow.advanceId,
    person_id: flow.carol.personId,
    organization_id: acme,
    currency: 'USD',
    amount_minor: 3_000,
    reference: 'WIRE 0318-1',
    repaid_at: '2026-03-18T10:00:00.000Z',
    amount: '30.00',
  });
  assert.deepEqual(await ledgerReturnsPayable(world), { [acme]: 30_000, [globex]: 30_000 });
  assert.deepEqual(await repaidPostings(world), [
    { item: flow.advanceId, memo: 'WIRE 0318-1', minor: 3_000 },
  ]);
  await booksAreSound(world);
  const report = await ewa(world, 'reports', 'returns', '--organization', acme);
  assert.equal(report.code, 0, report.stderr);
  const after = JSON.parse(report.stdout);
  assert.deepEqual(after.totals, [total(acme, 1, 30_000)]);
  assert.deepEqual(
    after.lines.map((line: { id: string }) => line.id),
    [flow.payoutA],
  );

  // Refused: again (1), a paycheck that came back from nowhere (1), no such id (1), and on their face (2).
  const again = await ewa(world, 'returns', 'repaid', flow.advanceId, '--reference', 'WIRE 0318-2');
  assert.equal(again.code, 1);
  assert.match(again.stderr, new RegExp(`${flow.advanceId} was recorded repaid already`));
  const { rows } = await sql<{ id: string }>`select id from paychecks
    where job_id = ${flow.carol.jobId}::uuid`.execute(world.database.db);
  const notReturned = await ewa(world, 'returns', 'repaid', rows[0]!.id, '--reference', 'X');
  assert.equal(notReturned.code, 1);
  assert.match(notReturned.stderr, /Nothing owed back has id/);
  const unknown = await ewa(
    world,
    'returns',
    'repaid',
    '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009',
    '--reference',
    'X',
  );
  assert.equal(unknown.code, 1);
  for (const [argv, problem] of [
    [['nope', '--reference', 'X'], /the item id must be a UUID/],
    [[flow.payoutA], /--reference is required/],
    [[flow.payoutA, '--reference', '  '], /--reference must name the payment/],
    [[flow.payoutA, '--reference', 'x'.repeat(141)], /at most 140 characters \(got 141\)/],
    [[flow.payoutA, '--reference', '😀'.repeat(141)], /at most 140 characters \(got 141\)/],
    // Counted as given, as the API's schema counts it: the CLI takes no reference the API refuses.
    [[flow.payoutA, '--reference', ` ${'x'.repeat(140)}`], /at most 140 characters \(got 141\)/],
    [[flow.payoutA, '--reference', 'WIRE\n1'], /contains a control character or line break/],
    // What the API's edge refuses, the CLI refuses too: a reversed or hidden part of a payment's reference.
    [[flow.payoutA, '--reference', 'WIRE \u2028 1'], /contains a control character or line break/],
    [[flow.payoutA, '--reference', 'WIRE \u202e1-8130'], /contains a bidirectional control character/],
    [[flow.payoutA, '--reference', 'WIRE 1\u200b2'], /contains a zero-width character/],
  ] as const) {
    const refused = await ewa(world, 'returns', 'repaid', ...argv);
    assert.equal(refused.code, 2, `${argv.join(' ')}: ${refused.stderr}`);
    assert.match(refused.stderr, problem);
    assert.equal(refused.stdout, '');
  }
  assert.deepEqual(await ledgerReturnsPayable(world), { [acme]: 30_000, [globex]: 30_000 });
  await booksAreSound(world);
});

test('POST /admin/reports/returns/{id}/repayment records a payout repaid; the totals of what is left', async (t) => {
  const flow = await returnsFlow(t);
  const { world, acme, globex } = flow;
  world.clock.now = new Date('2026-03-18T11:00:00Z');
  const { call } = await operatorClient(world.app);
  const body = (reference: unknown) => ({ data: { type: 'return_repayments', attributes: { reference } } });
  const path = `/admin/reports/returns/${flow.payoutB}/repayment`;

  const answer = await call('POST', path, body('CHECK 5521'));
  assert.equal(answer.statusCode, 200, answer.body);
  assert.deepEqual(answer.json().data, {
    type: 'return_repayments',
    id: flow.payoutB,
    attributes: {
      kind: 'PAYOUT',
      person_id: flow.bob.personId,
      organization_id: globex,
      currency: 'USD',
      amount_minor: 30_000,
      reference: 'CHECK 5521',
      repaid_at: '2026-03-18T11:00:00.000Z',
      amount: '300.00',
    },
  });
  assert.deepEqual(await ledgerReturnsPayable(world), { [acme]: 33_000, [globex]: 0 });
  await booksAreSound(world);
  // Globex owes nothing now: its total is gone, Acme's stands.
  const report = await call('GET', '/admin/reports/returns');
  assert.deepEqual(report.json().meta.totals, [total(acme, 2, 33_000)]);
  assert.equal(report.json().data.length, 2);

  const again = await call('POST', path, body('CHECK 5522'));
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(again.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  for (const reference of ['', 'x'.repeat(141), ` ${'x'.repeat(140)}`, 7]) {
    const refused = await call('POST', `/admin/reports/returns/${flow.payoutA}/repayment`, body(reference));
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual(refused.json().errors[0].source, { pointer: '/data/attributes/reference' });
  }
  const blank = await call('POST', `/admin/reports/returns/${flow.payoutA}/repayment`, body('   '));
  assert.equal(blank.statusCode, 400, blank.body);
  assert.match(blank.json().errors[0].detail, /reference must name the payment/);
  for (const id of ['6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009', 'acme']) {
    const missing = await call('POST', `/admin/reports/returns/${id}/repayment`, body('X'));
    assert.equal(missing.statusCode, 404, missing.body);
  }
  assert.deepEqual(await ledgerReturnsPayable(world), { [acme]: 33_000, [globex]: 0 });
  await booksAreSound(world);
  // 140 characters as the docs and the column count them, whatever their UTF-16 length (an emoji is two units).
  const wide = 'é😀'.repeat(70);
  world.clock.now = new Date('2026-03-18T12:00:00Z');
  const recorded = await call('POST', `/admin/reports/returns/${flow.payoutA}/repayment`, body(wide));
  assert.equal(recorded.statusCode, 200, recorded.body);
  assert.equal(recorded.json().data.attributes.reference, wide);
  assert.deepEqual(await repaidPostings(world), [
    { item: flow.payoutB, memo: 'CHECK 5521', minor: 30_000 },
    { item: flow.payoutA, memo: wide, minor: 30_000 },
  ]);
  await booksAreSound(world);
});

test('two callers record one item repaid at once: one is recorded, the other refused, one movement', async (t) => {
  const flow = await returnsFlow(t);
  const { world, acme } = flow;
  const ledger = new SystemLedger(world.database.db);
  const tries = await Promise.allSettled(
    ['A', 'B'].map((reference) =>
      recordReturnRepaid(world.database.db, ledger, { id: flow.payoutA, reference, now: world.clock.now }),
    ),
  );
  assert.deepEqual(tries.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
  const refused = tries.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  assert.match(refused.reason.detail, /was recorded repaid already/);
  assert.equal((await repaidPostings(world)).length, 1);
  assert.equal((await ledgerReturnsPayable(world))[acme], 3_000);
  await booksAreSound(world);
});

test('two `ewa returns repaid` processes on one item: one exits 0, the other 1, one movement', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const flow = await returnsFlow(t);
  const { world, acme } = flow;
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(() => Promise.all(cleanups.map((cleanup) => cleanup())));
  const held = { env: world.database.env, onCleanup: (work: () => Promise<unknown>) => cleanups.push(work) };
  // Both wait for Carol, whose advance it is, then go one after the other.
  const hold = await holdRows(held, 'select id from people where id = $1 for update', [flow.carol.personId]);
  const runs = ['WIRE A', 'WIRE B'].map((reference) =>
    spawnEwa(['returns', 'repaid', flow.advanceId, '--reference', reference], {
      ...SHARED_PUBLIC_URLS,
      ...world.database.env,
    }),
  );
  for (const run of runs) cleanups.push(() => run.kill());
  // Both processes are waiting, for the hold or for each other, before it goes.
  await eventually(async () => {
    const { rows } = await sql<{ waiting: string | number }>`select count(*) as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'
        and cardinality(pg_blocking_pids(pid)) > 0`.execute(world.database.db);
    return Number(rows[0]!.waiting) >= 2 || runs.some((run) => run.child.exitCode !== null);
  }, 30_000);
  assert.ok(
    runs.every((run) => run.child.exitCode === null),
    runs.map((run) => run.output()).join('\n'),
  );
  await hold.release();
  const codes = await Promise.all(runs.map((run) => run.exited));
  const outputs = runs.map((run) => run.output());
  assert.deepEqual([...codes].sort(), [0, 1], outputs.join('\n'));
  assert.match(outputs[codes.indexOf(1)]!, /was recorded repaid already/);
  const postings = await repaidPostings(world);
  assert.equal(postings.length, 1);
  assert.equal(postings[0]!.memo, codes[0] === 0 ? 'WIRE A' : 'WIRE B');
  assert.equal((await ledgerReturnsPayable(world))[acme], 30_000);
  await booksAreSound(world);
});

test('a returned payday payout is told to the partner: paycheck.payout_returned, once, with the return code', async (t) => {
  const flow = await returnsFlow(t, { partner: true });
  const { world } = flow;
  const asRead = async (paid: PaidWorker, id: string) =>
    (await restClient(world.app, paid.token).get(`/rest/paychecks/${id}`)).json().data;
  const told = flow.received.filter((r) => r.payload.type === 'paycheck.payout_returned');
  assert.deepEqual(
    told.map((r) => [r.payload.data.id, r.payload.payout_return_reason, r.verified]),
    [[flow.payoutA, 'R04', true]],
    "Alice's payout only: Carol's came, her advance went back; Bob is not of this partner",
  );
  const event = told[0]!.payload;
  assert.equal(event.previous_status, undefined);
  assert.equal(event.timestamp, RETURNED_AT);
  assert.deepEqual(event.data, await asRead(flow.alice, flow.payoutA), 'the paycheck as GET shows it');
  assert.equal((event.data.attributes as { status: string }).status, 'IN_TRANSIT');
  // Its status steps were told as before, each once; nothing more when the books move on.
  const steps = flow.received
    .filter((r) => r.payload.type === 'paycheck.status_changed' && r.payload.data.id === flow.payoutA)
    .map((r) => `${r.payload.previous_status}→${(r.payload.data.attributes as { status: string }).status}`);
  assert.deepEqual(steps, ['ESTIMATED→PROCESSING', 'PROCESSING→IN_TRANSIT']);
  const count = flow.received.length;
  await exchange(world, '2026-03-17T14:31:00Z');
  assert.equal((await world.app.money.settle(new Date('2026-03-17T15:00:00Z'))).settled, 0);
  await world.app.webhooks.dispatcher.dispatchDue(new Date('2026-03-17T15:00:00Z'));
  assert.equal(
    flow.received.filter((r) => r.payload.type === 'paycheck.payout_returned').length,
    1,
    'told once',
  );
  assert.ok(flow.received.length >= count);
});
