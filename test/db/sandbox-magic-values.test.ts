import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { removeOverride } from '../../src/compliance/rule-store.ts';
import { stateRules } from '../../src/compliance/state-rules.ts';
import { SystemLedger } from '../../src/ledger/ledger-accounts.ts';
import { ADVANCE_CHECKS } from '../../src/money/advances/advance-checks.ts';
import { writeOffOverpayment } from '../../src/money/overpayments/overpayment-service.ts';
import { SANDBOX_FAILURE_AMOUNTS, SANDBOX_RETURN_AMOUNTS } from '../../src/rails/sandbox-rail.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { acceptDisclosures } from '../helpers/disclosures.ts';
import { restClient } from '../helpers/factories.ts';
import { addBankAccount, addCardAccount, type PaidWorker, postTransfer } from '../helpers/money.ts';
import { demoWorker, SEEDED_AT, seedDemo } from '../helpers/sandbox-world.ts';
import { openTestDatabase } from '../helpers/test-database.ts';
import { clientToken, createTestClient, userToken } from '../helpers/tokens.ts';

/**
 * The tables of the sandbox's magic values in docs/integrators/sandbox.md, walked row by row against a fresh sandbox with the demo data,
 * through HTTP as a partner would: every refusal an advance's checks can give, and every outcome of the rail.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'integrators', 'sandbox.md'), 'utf8');
const REAL_NOW = new Date(SEEDED_AT.getTime() + 60 * 60_000);
const NORTHWIND = DEMO.organizations.northwind.id;
const ACME = DEMO.organizations.acme.id;
const JSON_API = 'application/vnd.api+json';

/** The cells of each row of the table between the sandbox page's markers `<!-- name:start -->` and `:end`. */
function tableRows(name: string): string[][] {
  const start = PAGE.indexOf(`<!-- ${name}:start -->`);
  const end = PAGE.indexOf(`<!-- ${name}:end -->`);
  assert.ok(start >= 0 && end > start, `docs/integrators/sandbox.md has the table ${name}`);
  return PAGE.slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('|---'))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** A sandbox with the demo data as seeded an hour ago, on the real time of the test. */
async function sandbox(t: TestContext) {
  const database = await openTestDatabase(t);
  await seedDemo(database.db);
  const app = await buildTestAppOn(t, database, { EWA_SEED_DEMO: 'true' }, { now: () => REAL_NOW });
  const operator = await createTestClient(app, {
    name: 'Operator',
    scopes: ['admin:operator'],
    redirectUris: [],
  });
  const operatorToken = await clientToken(app, ['admin:operator'], operator);
  const admin = (method: 'POST' | 'PATCH', url: string, body: unknown, contentType = JSON_API) =>
    app.api.inject({
      method,
      url,
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': contentType },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const policy = async (organizationId: string, attributes: Record<string, unknown>) =>
    admin('PATCH', `/admin/organizations/${organizationId}/policy`, {
      data: { type: 'organization_policies', attributes },
    });
  return { app, admin, policy, worker: (first: string) => workerOf(app, first) };
}

/** A demo worker with a user token, and the body of their usual advance. */
async function workerOf(app: TestApp, first: string) {
  const ids = demoWorker(first);
  const token = await userToken(app, ids.personId, ['user:read', 'user:read_write']);
  return { ...ids, token, api: restClient(app, token) };
}

type Worker = Awaited<ReturnType<typeof workerOf>>;

function advanceBody(
  worker: { balanceAccountId: string; depositoryId?: string },
  attributes: Record<string, unknown> = {},
  relationships: Record<string, unknown> = {},
) {
  return {
    data: {
      type: 'transfers',
      attributes: { amount: 1000, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY', ...attributes },
      relationships: {
        origin: { data: { type: 'accounts', id: worker.balanceAccountId } },
        ...(worker.depositoryId
          ? { destination: { data: { type: 'accounts', id: worker.depositoryId } } }
          : {}),
        ...relationships,
      },
    },
  };
}

async function post(app: TestApp, token: string, body: unknown) {
  return app.api.inject({
    method: 'POST',
    url: '/rest/transfers',
    headers: { authorization: `Bearer ${token}`, 'content-type': JSON_API, 'idempotency-key': randomUUID() },
    payload: JSON.stringify(body),
  });
}

/** The code of a refused advance; fails on an accepted one. */
async function refusal(app: TestApp, worker: { token: string }, body: unknown): Promise<string> {
  const answer = await post(app, worker.token, body);
  assert.equal(answer.statusCode, 400, answer.body);
  return answer.json().errors[0].code as string;
}

async function accepted(app: TestApp, worker: { token: string }, body: unknown): Promise<string> {
  const answer = await post(app, worker.token, body);
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json().data.id as string;
}

type World = Awaited<ReturnType<typeof sandbox>>;

/** The imported worker (below) with a debit card as their job's default account: direct deposit set up. */
async function importedWorkerWithCard(world: World) {
  const robin = await importedWorker(world);
  const found = await world.app.database.db
    .selectFrom('accounts')
    .select('id')
    .where('person_id', '=', robin.personId)
    .where('account_type', '=', 'CARD')
    .executeTakeFirst();
  const card = found?.id ?? (await addCardAccount(world.app, robin, REAL_NOW));
  const defaulted = await robin.api.patch(`/rest/jobs/${robin.jobId}`, {
    data: {
      type: 'jobs',
      id: robin.jobId,
      relationships: { direct_deposit_default_card: { data: { type: 'accounts', id: card } } },
    },
  });
  assert.equal(defaulted.statusCode, 200, defaulted.body);
  return { robin, card };
}

/** Changes an employer's policy in the database for `work`, and puts it back. */
async function withPolicyRow<T>(
  world: World,
  organizationId: string,
  changes: { maximum_fee_minor: number },
  work: () => Promise<T>,
): Promise<T> {
  const { db } = world.app.database;
  const before = await db
    .selectFrom('organization_policies')
    .select('maximum_fee_minor')
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  await db
    .updateTable('organization_policies')
    .set(changes)
    .where('organization_id', '=', organizationId)
    .execute();
  try {
    return await work();
  } finally {
    await db
      .updateTable('organization_policies')
      .set(before)
      .where('organization_id', '=', organizationId)
      .execute();
  }
}

/** A worker the operator imports into Acme's roster: an ACTIVATED job with no default account yet. */
async function importedWorker(world: World): Promise<Worker & PaidWorker> {
  const email = 'robin.lee@example.com';
  const csv = [
    'primary_identifier,first_name,last_name,email,state_of_residence,wage_amount,wage_frequency',
    `A-9001-primary,Robin,Lee,${email},NY,22.00,HOURLY`,
  ].join('\n');
  const imported = await world.admin('POST', `/admin/organizations/${ACME}/roster`, csv, 'text/csv');
  assert.equal(imported.statusCode, 200, imported.body);
  const job = await world.app.database.db
    .selectFrom('jobs')
    .innerJoin('people', 'people.id', 'jobs.person_id')
    .select(['jobs.id', 'jobs.person_id', 'jobs.earnings_balance_account_id'])
    .where('people.email', '=', email)
    .executeTakeFirstOrThrow();
  const token = await userToken(world.app, job.person_id, ['user:read', 'user:read_write']);
  const worker = {
    personId: job.person_id,
    jobId: job.id,
    balanceAccountId: job.earnings_balance_account_id as string,
    depositoryId: '',
    token,
    api: restClient(world.app, token),
    organizationId: ACME,
    advanceIds: { settled: '', failed: '', pending: '' },
  };
  return worker as unknown as Worker & PaidWorker;
}

/**
 * Bailey takes what is available, Acme corrects Bailey's pay down by 9,000.00, and the sandbox clock moves
 * past the period's payday: the paycheck closes short of its advances. Bailey's advance is then refused until Bailey
 * resolves it, and while it is recovered. The code asked for, from one overpayment made once per sandbox.
 */
async function overpaymentCodes(world: World, code: string): Promise<string[]> {
  const bailey = await world.worker('Bailey');
  const { db } = world.app.database;
  const existing = await db
    .selectFrom('overpayments')
    .select('status')
    .where('person_id', '=', bailey.personId)
    .executeTakeFirst();
  if (!existing) {
    const available = (await bailey.api.get(`/rest/accounts/${bailey.balanceAccountId}`)).json().data
      .attributes.balances.available as number;
    // The rows before took advances of Bailey's already (up to the 24 hours' limit); this takes the rest if it can.
    if (available >= 500)
      await postTransfer(world.app, bailey.token, advanceBody(bailey, { amount: available }));
    // The pay of Bailey's last paid period taken back (the employer says it was never earned), as the page says: a
    // correction of a paid period lands on the open paycheck, whose advances then exceed its net pay.
    const paychecks = (await bailey.api.get('/rest/paychecks')).json().data as {
      attributes: { status: string; gross_earnings: number; pay_period_starts_at: string };
    }[];
    const paid = paychecks.filter((p) => p.attributes.status !== 'ESTIMATED').at(-1)!.attributes;
    const paidDay = paid.pay_period_starts_at.slice(0, 10);
    const csv = [
      'row_id,primary_identifier,date,hours,amount',
      `fix-1,A-1002-primary,${paidDay},,-${(paid.gross_earnings / 100).toFixed(2)}`,
    ].join('\n');
    const corrected = await world.admin('POST', `/admin/organizations/${ACME}/earnings`, csv, 'text/csv');
    assert.equal(corrected.statusCode, 200, corrected.body);
    assert.equal(corrected.json().data.attributes.recorded, 1, corrected.body);
    const moved = await world.admin('POST', '/admin/sandbox/clock', {
      data: { type: 'sandbox_clocks', attributes: { days: 15 } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const found = await db
      .selectFrom('overpayments')
      .select('status')
      .where('person_id', '=', bailey.personId)
      .executeTakeFirst();
    assert.ok(found, `an overpayment after payday: ${moved.body.slice(0, 600)}`);
  }
  const before = await refusal(world.app, bailey, advanceBody(bailey));
  if (code === 'OVERPAYMENT_RESOLUTION_REQUIRED') return [before];
  const resolved = await bailey.api.post(`/rest/people/${bailey.personId}/overpayment_resolutions`, {
    data: { type: 'overpayment_resolutions', attributes: { resolution: 'NEXT_PAYCHECK' } },
  });
  if (resolved.statusCode !== 200 && before !== 'OVERPAYMENT_RESOLVING') return [before];
  const resolving = await refusal(world.app, bailey, advanceBody(bailey));
  // The operator writes it off (the policy does not make Bailey DELINQUENT), so the rows after this one find Bailey
  // as before.
  for (const open of await db
    .selectFrom('overpayments')
    .select('id')
    .where('person_id', '=', bailey.personId)
    .where('status', 'in', ['RESOLUTION_REQUIRED', 'RECOVERING'])
    .execute())
    await writeOffOverpayment(db, new SystemLedger(db), { overpaymentId: open.id, now: new Date() });
  return [resolving];
}

/** Each row of the sandbox page's table, as a partner would follow it: the codes it gives. */
const SCENARIOS: Record<string, (world: World) => Promise<string[]>> = {
  async INVALID_RESOURCE_LINK({ app, worker }) {
    const [alex, bailey] = [await worker('Alex'), await worker('Bailey')];
    return [
      await refusal(app, alex, advanceBody({ ...alex, balanceAccountId: bailey.balanceAccountId })),
      await refusal(
        app,
        alex,
        advanceBody(alex, {}, { person: { data: { type: 'people', id: bailey.personId } } }),
      ),
    ];
  },
  async TRANSFERS_DISABLED({ app, worker, policy }) {
    assert.equal((await policy(NORTHWIND, { transfers_enabled: false })).statusCode, 200);
    const devon = await worker('Devon');
    const code = await refusal(app, devon, advanceBody(devon));
    assert.equal((await policy(NORTHWIND, { transfers_enabled: true })).statusCode, 200);
    return [code];
  },
  async OVERPAYMENT_RESOLUTION_REQUIRED(world) {
    return overpaymentCodes(world, 'OVERPAYMENT_RESOLUTION_REQUIRED');
  },
  async OVERPAYMENT_RESOLVING(world) {
    return overpaymentCodes(world, 'OVERPAYMENT_RESOLVING');
  },
  async MISSING_STATE_OF_RESIDENCE({ app, worker }) {
    const emery = await worker('Emery');
    return [await refusal(app, emery, advanceBody(emery))];
  },
  async DISCLOSURE_REQUIRED({ app, worker }) {
    // No demo person lives in a state that asks for a disclosure: Emery moves to Utah.
    const emery = await worker('Emery');
    const moved = await emery.api.patch(`/rest/people/${emery.personId}`, {
      data: { type: 'people', id: emery.personId, attributes: { state_of_residence: 'UT' } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const before = await refusal(app, emery, advanceBody(emery));
    await acceptDisclosures(emery);
    const unacknowledged = await refusal(app, emery, advanceBody(emery));
    return [before, unacknowledged];
  },
  async INVALID_DIRECT_DEPOSIT_STATUS(world) {
    const robin = await importedWorker(world);
    robin.depositoryId = await addBankAccount(robin, '000123456789');
    return [await refusal(world.app, robin, advanceBody(robin))];
  },
  async INELIGIBLE_ORIGIN({ app, worker }) {
    const alex = await worker('Alex');
    return [await refusal(app, alex, advanceBody({ ...alex, balanceAccountId: alex.depositoryId }))];
  },
  async MISSING_DEFAULT_DEPOSITORY_ACCOUNT(world) {
    const { robin } = await importedWorkerWithCard(world);
    return [await refusal(world.app, robin, advanceBody({ balanceAccountId: robin.balanceAccountId }))];
  },
  async INVALID_DESTINATION({ app, worker }) {
    const [alex, bailey] = [await worker('Alex'), await worker('Bailey')];
    return [
      await refusal(app, alex, advanceBody({ ...alex, depositoryId: alex.balanceAccountId })),
      await refusal(app, alex, advanceBody({ ...alex, depositoryId: bailey.depositoryId })),
    ];
  },
  async INVALID_TRANSFER_SCHEDULE({ app, worker }) {
    const alex = await worker('Alex');
    return [await refusal(app, alex, advanceBody(alex, { schedule: 'WITHIN_THIRTY_MINUTES' }))];
  },
  async INVALID_PARAMETERS({ app, worker }) {
    const alex = await worker('Alex');
    const taken = advanceBody(alex);
    return [
      await refusal(app, alex, advanceBody(alex, { currency: 'EUR' })),
      await refusal(app, alex, { data: { ...taken.data, id: alex.advanceIds.settled } }),
    ];
  },
  async MINIMUM_AMOUNT_SUBCEEDED({ app, worker }) {
    const alex = await worker('Alex');
    return [await refusal(app, alex, advanceBody(alex, { amount: 499 }))];
  },
  async MAXIMUM_AMOUNT_EXCEEDED({ app, worker }) {
    const alex = await worker('Alex');
    return [await refusal(app, alex, advanceBody(alex, { amount: 100_001 }))];
  },
  async MAXIMUM_FEE_EXCEEDED(world) {
    // The operator cannot set such a policy...
    const refused = await world.policy(ACME, { maximum_fee_minor: 100 });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().errors[0].code, 'INVALID_PARAMETERS');
    // ...and a policy changed in the database gets the code: a card's instant fee (299) above a maximum of 100.
    const { robin, card } = await importedWorkerWithCard(world);
    const body = advanceBody({ ...robin, depositoryId: card }, { schedule: 'WITHIN_THIRTY_MINUTES' });
    const byPolicy = await withPolicyRow(world, ACME, { maximum_fee_minor: 100 }, () =>
      refusal(world.app, robin, body),
    );
    // ...and a state's cap, lowered by the operator, for a worker who lives there.
    const lowered = await world.admin('POST', '/admin/compliance/rules', {
      data: {
        type: 'compliance_rules',
        id: 'MD-FEE-CAP-ADVANCE',
        attributes: {
          state: 'MD',
          kind: 'FEE_CAP_PER_ADVANCE',
          params: { tiers: [{ max_fee_minor: 100 }] },
          effective_from: '2025-10-01',
          source: 'Md. Code, Com. Law 12-1501 et seq.',
        },
      },
    });
    assert.equal(lowered.statusCode, 200, lowered.body);
    const moved = await robin.api.patch(`/rest/people/${robin.personId}`, {
      data: { type: 'people', id: robin.personId, attributes: { state_of_residence: 'MD' } },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    await acceptDisclosures(robin);
    const byState = await refusal(world.app, robin, body);
    await removeOverride(world.app.database.db, stateRules(), 'MD-FEE-CAP-ADVANCE');
    return [byPolicy, byState];
  },
  async EARNINGS_BALANCE_EXCEEDED({ app, worker }) {
    const alex = await worker('Alex');
    return [await refusal(app, alex, advanceBody(alex, { amount: 100_000 }))];
  },
  async TRANSFER_LIMIT_EXCEEDED({ app, worker }) {
    const bailey = await worker('Bailey');
    const answers: number[] = [];
    for (const amount of [600, 700, 800, 900, 1100]) {
      const answer = await post(app, bailey.token, advanceBody(bailey, { amount }));
      answers.push(answer.statusCode);
      if (answer.statusCode !== 200) return [answer.json().errors[0].code];
    }
    assert.fail(`five advances besides the demo's were all accepted: ${answers}`);
  },
  async TRANSFER_AMOUNT_LIMIT_EXCEEDED({ app, worker, policy }) {
    assert.equal((await policy(NORTHWIND, { daily_transfer_amount_max_minor: 1000 })).statusCode, 200);
    const devon = await worker('Devon');
    const code = await refusal(app, devon, advanceBody(devon, { amount: 1001 }));
    assert.equal((await policy(NORTHWIND, { daily_transfer_amount_max_minor: 100_000 })).statusCode, 200);
    return [code];
  },
  async DUPLICATE_TRANSFER({ app, worker }) {
    const casey = await worker('Casey');
    await accepted(app, casey, advanceBody(casey, { amount: 900 }));
    return [await refusal(app, casey, advanceBody(casey, { amount: 900 }))];
  },
};

test("the sandbox page's table names every code the checks of an advance give, each once", () => {
  const codes = tableRows('sandbox-magic-values').map((row) => row[0]!.replaceAll('`', ''));
  const checked = [...new Set(ADVANCE_CHECKS.map((check) => check.code))];
  assert.deepEqual([...codes].sort(), [...checked].sort());
  assert.deepEqual(Object.keys(SCENARIOS).sort(), [...checked].sort());
});

test("each row of the sandbox page's table gives its code in a fresh sandbox", async (t) => {
  const world = await sandbox(t);
  for (const [code] of tableRows('sandbox-magic-values').map((row) => [row[0]!.replaceAll('`', '')])) {
    const scenario = SCENARIOS[code!];
    assert.ok(scenario, `a scenario for ${code}`);
    const given = await scenario(world);
    assert.deepEqual(
      given,
      given.map(() => code),
      `${code}: got ${given.join(', ')}`,
    );
  }
});

test("the sandbox page's rail outcomes are the sandbox rail's, and the sandbox clock shows each happen", async (t) => {
  const rows = tableRows('sandbox-rail-outcomes');
  const magic = rows
    .map((row) => /\(`(\d+)`\)/.exec(row[0]!))
    .flatMap((match) => (match ? [Number(match[1])] : []));
  assert.deepEqual(
    magic.sort(),
    [...SANDBOX_FAILURE_AMOUNTS.keys(), ...SANDBOX_RETURN_AMOUNTS.keys()].sort(),
  );
  for (const [amount, reason] of [...SANDBOX_FAILURE_AMOUNTS, ...SANDBOX_RETURN_AMOUNTS]) {
    const row = rows.find((candidate) => candidate[0]!.includes(`(\`${amount}\`)`))!;
    assert.match(row[1]!, new RegExp(`\`${reason}\``), `${amount} fails with ${reason}`);
  }
  // Migration 0014's partial index names the return amounts, so that looking for them costs nothing.
  const index = readFileSync(join(ROOT, 'src', 'migrations', '0014_sandbox_returns.sql'), 'utf8');
  assert.deepEqual(
    [...index.matchAll(/amount_minor = (\d+)/g)].map((match) => Number(match[1])),
    [...SANDBOX_RETURN_AMOUNTS.keys()],
  );

  const world = await sandbox(t);
  const { app, worker, admin } = world;
  const [devon, casey] = [await worker('Devon'), await worker('Casey')];
  const made = new Map<number, { id: string; worker: Worker }>();
  for (const [who, amounts] of [
    [devon, [666, 1313, 4040]],
    [casey, [505, 700]],
  ] as const)
    for (const amount of amounts)
      made.set(amount, { id: await accepted(app, who, advanceBody(who, { amount })), worker: who });
  const state = async (amount: number) => {
    const { id, worker: who } = made.get(amount)!;
    const answer = await who.api.get(`/rest/transfers/${id}`);
    assert.equal(answer.statusCode, 200, answer.body);
    const { attributes, meta } = answer.json().data;
    return [attributes.status, meta?.failure_reason ?? null];
  };
  const advance = async () => {
    const answer = await admin('POST', '/admin/sandbox/clock', {
      data: { type: 'sandbox_clocks', attributes: { days: 1 } },
    });
    assert.equal(answer.statusCode, 200, answer.body);
  };
  // Made on Wednesday 11 March: resolved at 09:00 New York time on Thursday, the $5.05 one returned on Friday.
  await advance();
  assert.deepEqual(await state(700), ['SETTLED', null]);
  for (const [amount, reason] of SANDBOX_FAILURE_AMOUNTS)
    assert.deepEqual(await state(amount), ['FAILED', reason]);
  assert.deepEqual(await state(505), ['SETTLED', null], 'settled first');
  await advance();
  assert.deepEqual(await state(505), ['FAILED', 'R03'], 'then returned');
  const returned = await app.database.db
    .selectFrom('transfers')
    .select(['returned_at', 'returned_to'])
    .where('id', '=', made.get(505)!.id)
    .executeTakeFirstOrThrow();
  assert.equal(returned.returned_at?.toISOString(), '2026-03-13T13:00:00.000Z');
  assert.equal(returned.returned_to, 'EARNINGS_BALANCE', 'its paycheck is still open');
});
