import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { issueInvitations } from '../../src/operator/invitations.ts';
import { readSandboxOffsetMs } from '../../src/sandbox/sandbox-clock.ts';
import { DEMO } from '../../src/seed/demo.ts';
import { buildServer } from '../../src/server.ts';
import { buildTestAppOn, type TestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { operatorClient } from '../helpers/operator.ts';
import { demoWorker, SEEDED_AT, seedDemo } from '../helpers/sandbox-world.ts';
import { openTestDatabase } from '../helpers/test-database.ts';
import { userToken } from '../helpers/tokens.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const JSON_API = 'application/vnd.api+json';
const DAY_MS = 86_400_000;
/** Real time for these apps: an hour after the demo was seeded, standing still. */
const REAL_NOW = new Date(SEEDED_AT.getTime() + 60 * 60_000);

/** A sandbox with the demo data, its scheduler's jobs those of a server seeding it. */
async function sandboxApp(t: TestContext, env: Record<string, string> = {}) {
  const database = await openTestDatabase(t);
  await seedDemo(database.db);
  const app = await buildTestAppOn(t, database, { EWA_SEED_DEMO: 'true', ...env }, { now: () => REAL_NOW });
  return { app, database, call: (await operatorClient(app)).call };
}

/** A sandbox whose demo partner has an endpoint at a receiver on this host (allowed, as on a laptop). */
async function sandboxWithReceiver(t: TestContext, attributes: Record<string, unknown> = {}) {
  const { app, call } = await sandboxApp(t, { EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' });
  const receiver = await startReceiver(t);
  const created = await call('POST', '/admin/webhook_endpoints', {
    data: {
      type: 'webhook_endpoints',
      attributes: { url: receiver.url, client_id: DEMO.clients.confidential.clientId, ...attributes },
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  receiver.secrets.push(created.json().data.attributes.secret);
  return { app, call, receiver, endpointId: created.json().data.id as string };
}

const advanceBody = (attributes: Record<string, unknown>) => ({
  data: { type: 'sandbox_clocks', attributes },
});

test('GET the clock, advance it two days, and the demo pending advance has settled; tokens keep real time', async (t) => {
  const { app, call } = await sandboxApp(t);
  const before = await call('GET', '/admin/sandbox/clock');
  assert.equal(before.statusCode, 200, before.body);
  assert.deepEqual(before.json(), {
    data: {
      type: 'sandbox_clocks',
      id: 'sandbox',
      attributes: { now: REAL_NOW.toISOString(), real_now: REAL_NOW.toISOString(), offset_ms: 0 },
    },
  });

  const advanced = await call('POST', '/admin/sandbox/clock', advanceBody({ days: 2 }));
  assert.equal(advanced.statusCode, 200, advanced.body);
  const { data } = advanced.json();
  const to = new Date(REAL_NOW.getTime() + 2 * DAY_MS).toISOString();
  assert.deepEqual(data.attributes, { now: to, real_now: REAL_NOW.toISOString(), offset_ms: 2 * DAY_MS });
  assert.equal(data.meta.advanced_from, REAL_NOW.toISOString());
  assert.equal(data.meta.advanced_to, to);
  assert.equal(data.meta.steps, 2 * 96);
  assert.equal(data.meta.jobs['settle-due'].settled, 5, "the five demo workers' pending advances");
  assert.equal(await readSandboxOffsetMs(app.database.db), 2 * DAY_MS);
  const pending = await app.database.db
    .selectFrom('transfers')
    .select('status')
    .where('id', '=', demoWorker('Alex').advanceIds.pending)
    .executeTakeFirstOrThrow();
  assert.equal(pending.status, 'SETTLED');
  // The same token, two days on in the sandbox: still good, since tokens keep real time.
  const after = await call('GET', '/admin/sandbox/clock');
  assert.equal(after.statusCode, 200, after.body);
  assert.equal(after.json().data.attributes.now, to);

  const moved = await call('POST', '/admin/sandbox/clock', advanceBody({ to: '2026-03-14T12:00' }));
  assert.equal(moved.statusCode, 200, moved.body);
  assert.equal(moved.json().data.attributes.now, '2026-03-14T12:00:00.000Z');
});

test('bad input is a 400 naming the field, and changes nothing; never a 500', async (t) => {
  const { app, call } = await sandboxApp(t);
  const cases: [unknown, string][] = [
    [advanceBody({ days: 0 }), '/data/attributes/days'],
    [advanceBody({ days: -3 }), '/data/attributes/days'],
    [advanceBody({ days: 367 }), '/data/attributes/days'],
    [advanceBody({ days: 1e20 }), '/data/attributes/days'],
    [advanceBody({ days: '3' }), '/data/attributes/days'],
    [advanceBody({ days: 2.5 }), '/data/attributes/days'],
    [advanceBody({ days: 3, to: '2026-12-01' }), '/data/attributes/days'],
    [advanceBody({}), '/data/attributes/days'],
    [advanceBody({ to: '2026-03-01' }), '/data/attributes/to'],
    [advanceBody({ to: '2026-02-30' }), '/data/attributes/to'],
    [advanceBody({ to: '2026-12-01T25:00' }), '/data/attributes/to'],
    [advanceBody({ to: 'tomorrow' }), '/data/attributes/to'],
    [advanceBody({ to: '2028-01-01' }), '/data/attributes/to'],
    [advanceBody({ weeks: 2 }), '/data/attributes/weeks'],
    [{ data: { type: 'sandbox', attributes: { days: 2 } } }, '/data/type'],
  ];
  for (const [body, pointer] of cases) {
    const answer = await call('POST', '/admin/sandbox/clock', body);
    assert.equal(answer.statusCode, 400, `${JSON.stringify(body)}: ${answer.body}`);
    const error = answer.json().errors[0];
    assert.equal(error.source?.pointer, pointer, `${JSON.stringify(body)}: ${answer.body}`);
  }
  const past = await call('POST', '/admin/sandbox/clock', advanceBody({ to: '2026-03-01' }));
  assert.match(
    past.json().errors[0].detail,
    /^to 2026-03-01T00:00:00.000Z is not later than the sandbox's time/,
  );
  assert.equal(await readSandboxOffsetMs(app.database.db), 0);
  const lease = await app.database.db
    .selectFrom('app_settings')
    .select('key')
    .where('key', '=', 'sandbox_clock_lease')
    .execute();
  assert.deepEqual(lease, [], 'no lease left behind');
  assertErrorAnswer(
    await call('POST', '/admin/sandbox/reset', { data: { type: 'sandbox' } }),
    400,
    'INVALID_PARAMETERS',
  );
});

test('while an advance runs, another advance or a reset answers 503 with Retry-After and does nothing', async (t) => {
  const { app, call } = await sandboxApp(t);
  const leased = () =>
    app.database.db
      .selectFrom('app_settings')
      .select('value')
      .where('key', '=', 'sandbox_clock_lease')
      .execute();
  const running = call('POST', '/admin/sandbox/clock', advanceBody({ days: 2 }));
  while ((await leased()).length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  for (const [url, body] of [
    ['/admin/sandbox/clock', advanceBody({ days: 1 })],
    ['/admin/sandbox/reset', { data: { type: 'sandbox_resets' } }],
  ] as const) {
    const answer = await call('POST', url, body);
    const error = assertErrorAnswer(answer, 503, 'SERVICE_UNAVAILABLE');
    assert.match(
      error.detail,
      /A sandbox advance is running; try again when it has finished\. Nothing was done/,
    );
    assert.equal(answer.headers['retry-after'], '5');
  }
  assert.equal((await running).statusCode, 200);
  assert.equal(await readSandboxOffsetMs(app.database.db), 2 * DAY_MS, 'the first advance alone moved it');
  assert.deepEqual(await leased(), [], 'the lease is let go');
});

test('reset: a transfer made before is gone, the demo balances are back, the clock is at real time', async (t) => {
  const { app, call } = await sandboxApp(t);
  const { db } = app.database;
  const alex = demoWorker('Alex');
  const balance = async () =>
    (
      await db
        .selectFrom('ledger_entries as e')
        .innerJoin('ledger_accounts as a', 'a.id', 'e.ledger_account_id')
        .select((eb) => eb.fn.sum<number>('e.amount_minor').as('credits'))
        .where('a.account_id', '=', alex.balanceAccountId)
        .where('e.direction', '=', 'CREDIT')
        .executeTakeFirstOrThrow()
    ).credits;
  const seeded = await balance();
  // A partner tried the invitation flow: the code goes with the demo person it was for.
  await issueInvitations(db, {
    organizationId: DEMO.organizations.acme.id,
    emails: ['alex.rivera@example.com'],
    now: REAL_NOW,
    onIssued: () => {},
  });
  assert.equal((await call('POST', '/admin/sandbox/clock', advanceBody({ days: 3 }))).statusCode, 200);
  assert.notEqual(await balance(), seeded, 'three days of shifts');
  const reset = await call('POST', '/admin/sandbox/reset', { data: { type: 'sandbox_resets' } });
  assert.equal(reset.statusCode, 200, reset.body);
  const { attributes } = reset.json().data;
  assert.deepEqual(attributes, {
    demo: 'SEEDED',
    clock: { now: REAL_NOW.toISOString(), real_now: REAL_NOW.toISOString(), offset_ms: 0 },
  });
  assert.equal(await readSandboxOffsetMs(db), 0);
  assert.equal(Number(await balance()), Number(seeded), "the demo history made again, as of real time's now");
  assert.deepEqual(await db.selectFrom('invitations').select('id').execute(), []);
});

test('production refuses the sandbox clock and reset: 403 FORBIDDEN, saying it is for UAT only', async (t) => {
  const database = await openTestDatabase(t);
  const config = { ...loadConfig({ EWA_LOG_LEVEL: 'silent', ...database.env }), env: 'production' as const };
  const servers = await buildServer(config, { database, now: () => REAL_NOW });
  t.after(() => Promise.all([servers.api.close(), servers.auth.close(), servers.payments.close()]));
  const { call } = await operatorClient({ ...servers, config, database, logs: [] });
  for (const [method, url, body] of [
    ['GET', '/admin/sandbox/clock', undefined],
    ['POST', '/admin/sandbox/clock', advanceBody({ days: 1 })],
    ['POST', '/admin/sandbox/clock', advanceBody({ days: 0 })],
    ['POST', '/admin/sandbox/reset', { data: { type: 'sandbox_resets' } }],
  ] as const) {
    const error = assertErrorAnswer(await call(method, url, body), 403, 'FORBIDDEN');
    assert.match(error.detail, /for UAT only \(EWA_ENV=production\)/);
  }
  assert.equal(servers.sandbox.now().toISOString(), REAL_NOW.toISOString());
});

test('an advance of the sandbox sends the events of what it ran: the demo partner hears Alex’s advance settle', async (t) => {
  const { app, call, receiver } = await sandboxWithReceiver(t, { event_types: ['transfer.settled'] });
  // Alex signs in to the demo partner's mobile app: the partner's server may now hear of Alex's transfers.
  const alex = demoWorker('Alex');
  await userToken(app, alex.personId, ['user:read'], DEMO.clients.public.clientId);
  const advanced = await call('POST', '/admin/sandbox/clock', advanceBody({ days: 2 }));
  assert.equal(advanced.statusCode, 200, advanced.body);
  await app.webhooks.dispatcher.dispatchDue();
  const settled = receiver.received.find((r) => r.payload.data.id === alex.advanceIds.pending);
  assert.ok(settled, `received: ${receiver.received.map((r) => r.payload.data.id).join(', ')}`);
  assert.equal(settled.payload.type, 'transfer.settled');
  assert.ok(settled.verified);
  // Stamped on the sandbox's time; signed on real time, as receivers check it.
  assert.ok(new Date(settled.payload.timestamp) > REAL_NOW);
  assert.ok(Math.abs(Number(settled.headers['webhook-timestamp']) * 1000 - Date.now()) < 60_000);
});

test('after a reset, this process and another on the same database take advances and advance the clock again', async (t) => {
  const { app, database, call } = await sandboxApp(t);
  // A second server on the same database, as another process is (it notices the reset on its next refresh).
  const other = await buildTestAppOn(t, database, { EWA_SEED_DEMO: 'true' }, { now: () => REAL_NOW });
  const alex = demoWorker('Alex');
  const advanceAs = async (server: TestApp, amount: number) => {
    const token = await userToken(server, alex.personId, ['user:read', 'user:read_write']);
    return server.api.inject({
      method: 'POST',
      url: '/rest/transfers',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': JSON_API,
        'idempotency-key': crypto.randomUUID(),
      },
      payload: JSON.stringify({
        data: {
          type: 'transfers',
          attributes: { amount, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY' },
          relationships: {
            origin: { data: { type: 'accounts', id: alex.balanceAccountId } },
            destination: { data: { type: 'accounts', id: alex.depositoryId } },
          },
        },
      }),
    });
  };
  // Both processes have used (and remembered) the employer's system ledger accounts before the reset.
  assert.equal((await advanceAs(app, 600)).statusCode, 200);
  assert.equal((await advanceAs(other, 700)).statusCode, 200);
  assert.equal(
    (await call('POST', '/admin/sandbox/reset', { data: { type: 'sandbox_resets' } })).statusCode,
    200,
  );
  await other.sandbox.refresh();
  for (const [server, amount] of [
    [app, 800],
    [other, 900],
  ] as const) {
    const answer = await advanceAs(server, amount);
    assert.equal(answer.statusCode, 200, answer.body);
  }
  const advanced = await call('POST', '/admin/sandbox/clock', advanceBody({ days: 1 }));
  assert.equal(advanced.statusCode, 200, advanced.body);
});

test('secrets expire on real time: a rotation’s overlap holds after the sandbox clock moved a day ahead', async (t) => {
  const { app, call, receiver, endpointId: id } = await sandboxWithReceiver(t);
  const rotated = await call('POST', `/admin/webhook_endpoints/${id}/rotate_secret`, {
    data: { type: 'webhook_secret_rotations', attributes: { overlap_seconds: 600 } },
  });
  assert.equal(rotated.statusCode, 200, rotated.body);
  assert.equal((await call('POST', '/admin/sandbox/clock', advanceBody({ days: 1 }))).statusCode, 200);
  assert.equal((await call('POST', `/admin/webhook_endpoints/${id}/test`)).statusCode, 202);
  await app.webhooks.dispatcher.dispatchDue();
  const test = receiver.received.find((r) => r.payload.type === 'webhook.test');
  assert.ok(test);
  assert.equal(String(test.headers['webhook-signature']).split(' ').length, 2, 'the old secret still signs');
});
