import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { withTransaction } from '../../src/db/transaction.ts';
import { webhookJobs } from '../../src/webhooks/webhook-jobs.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { createOrganization, linkedClientToken, restClient } from '../helpers/factories.ts';
import {
  addBankAccount,
  advanceBody,
  createPaidWorker,
  type PaidWorker,
  postTransfer,
  recordShift,
} from '../helpers/money.ts';
import { clientToken, createTestClient, userToken } from '../helpers/tokens.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const HOUR = 3_600_000;
/** FIXED_NOW is a Wednesday afternoon: the sandbox rail settles a next-day advance at 09:00 New York the next day. */
const later = (ms: number) => new Date(FIXED_NOW.getTime() + ms);

/** An employer, a partner client linked to it with a webhook endpoint at the receiver, and a worker there. */
async function partnerWorld(
  t: Parameters<typeof startReceiver>[0],
  app: TestApp,
  /** null: every type. */
  eventTypes: string[] | null = ['transfer.created', 'transfer.settled', 'transfer.failed'],
) {
  const organizationId = await createOrganization(app);
  const { client, token } = await linkedClientToken(app, [organizationId], ['client:admin']);
  const partner = restClient(app, token);
  const receiver = await startReceiver(t);
  const created = await partner.post('/rest/webhook_endpoints', {
    data: {
      type: 'webhook_endpoints',
      attributes: { url: receiver.url, ...(eventTypes ? { event_types: eventTypes } : {}) },
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const endpoint = created.json().data;
  assert.match(endpoint.attributes.secret, /^whsec_/);
  receiver.secrets.push(endpoint.attributes.secret);
  const worker = await createPaidWorker(app, { organizationId, earnedMinor: 40_000, now: FIXED_NOW });
  // The worker signs in to the partner's app: what only their own token reads may now reach the partner.
  await userToken(app, worker.personId, ['user:read'], client.clientId);
  // What setting the worker up caused (the earnings credit among them) is sent first, and forgotten.
  await app.webhooks.dispatcher.dispatchDue(FIXED_NOW);
  receiver.received.length = 0;
  return { organizationId, client, partner, receiver, endpoint, worker };
}

async function advance(app: TestApp, worker: PaidWorker, amount = 5000): Promise<string> {
  const response = await postTransfer(app, worker.token, advanceBody(worker, { amount }));
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data.id;
}

const dispatch = (app: TestApp, at: Date) => app.webhooks.dispatcher.dispatchDue(at);

/** The test apps' clock: FIXED_NOW unless a test moves it. */
const clock = { at: FIXED_NOW };
const appAtFixedNow = (t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) => {
  clock.at = FIXED_NOW;
  // The receivers are on this host: allowed here as in a sandbox on a laptop.
  return buildTestApp(t, { EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', ...env }, { now: () => clock.at });
};

test('a transfer is delivered signed (Standard Webhooks), as GET shows it then, created then settled', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker } = await partnerWorld(t, app);
  const id = await advance(app, worker);
  const asCreated = (await worker.api.get(`/rest/transfers/${id}`)).json().data;
  await dispatch(app, FIXED_NOW);
  await app.money.settle(later(22 * HOUR));
  await dispatch(app, later(22 * HOUR));
  const asSettled = (await worker.api.get(`/rest/transfers/${id}`)).json().data;
  const mine = receiver.received.filter((r) => r.payload.data.id === id);
  assert.deepEqual(
    mine.map((r) => r.payload.type),
    ['transfer.created', 'transfer.settled'],
  );
  assert.ok(mine.every((r) => r.verified && r.answered === 200));
  assert.deepEqual(mine[0]!.payload.data, asCreated);
  assert.deepEqual(mine[1]!.payload.data, asSettled);
  assert.equal(asSettled.attributes.status, 'SETTLED');
  const [first] = mine;
  assert.equal(first!.headers['webhook-id'], first!.payload.id);
  // Any Standard Webhooks verifier refuses a body changed after signing.
  assert.throws(() =>
    new Webhook(receiver.secrets[0]!).verify(first!.body.replace('PENDING', 'SETTLED'), {
      'webhook-id': String(first!.headers['webhook-id']),
      'webhook-timestamp': String(first!.headers['webhook-timestamp']),
      'webhook-signature': String(first!.headers['webhook-signature']),
    }),
  );
});

test('a receiver answering 500 then 200 gets the event twice, and the delivery log shows both', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, partner, endpoint } = await partnerWorld(t, app);
  let calls = 0;
  receiver.answerWith(() => (++calls === 1 ? 500 : 200));
  const id = await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  assert.equal(receiver.received.length, 1);
  // Not again before its backoff has passed.
  await dispatch(app, FIXED_NOW);
  assert.equal(receiver.received.length, 1);
  await dispatch(app, later(60_000));
  assert.deepEqual(
    receiver.received.map((r) => [r.payload.data.id, r.answered]),
    [
      [id, 500],
      [id, 200],
    ],
  );
  assert.equal(receiver.received[0]!.id, receiver.received[1]!.id, 'one webhook-id for both attempts');
  const eventId = receiver.received[0]!.id;
  const log = (
    await partner.get(`/rest/webhook_endpoints/${endpoint.id}/deliveries?event_id=${eventId}`)
  ).json().data;
  assert.deepEqual(
    log.map((d: { attributes: Record<string, unknown> }) => [
      d.attributes.attempt,
      d.attributes.status_code,
      d.attributes.outcome,
    ]),
    [
      [2, 200, 'DELIVERED'],
      [1, 500, 'FAILED'],
    ],
  );
  assert.ok(log.every((d: { attributes: { duration_ms: number } }) => d.attributes.duration_ms >= 0));
});

test("one resource's events arrive in order: a settled event waits for the created one the receiver refused", async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker } = await partnerWorld(t, app);
  receiver.answerWith((r) => (r.payload.type === 'transfer.created' ? 503 : 200));
  const id = await advance(app, worker);
  await app.money.settle(later(22 * HOUR));
  await dispatch(app, later(22 * HOUR));
  assert.deepEqual(
    receiver.received.map((r) => r.payload.type),
    ['transfer.created'],
  );
  receiver.answerWith(() => 200);
  await dispatch(app, later(23 * HOUR));
  await dispatch(app, later(23 * HOUR));
  assert.deepEqual(
    receiver.received.map((r) => [r.payload.type, r.answered]),
    [
      ['transfer.created', 503],
      ['transfer.created', 200],
      ['transfer.settled', 200],
    ],
  );
  assert.ok(receiver.received.every((r) => r.payload.data.id === id));
});

test('a change that rolls back, or an advance refused, sends nothing', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker } = await partnerWorld(t, app, null);
  const { db } = app.database;
  await dispatch(app, FIXED_NOW);
  const before = receiver.received.length;
  const counts = async () => {
    const { rows } = await sql<{ events: string; queued: string }>`select
      (select count(*) from webhook_events) as events,
      (select count(*) from outbox where topic = 'webhook.delivery') as queued`.execute(db);
    return rows[0];
  };
  const start = await counts();
  await assert.rejects(
    withTransaction(db, async (tx) => {
      await tx.updateTable('jobs').set({ title: 'Rolled back' }).where('id', '=', worker.jobId).execute();
      await tx
        .updateTable('accounts')
        .set({ deleted_at: FIXED_NOW })
        .where('id', '=', worker.depositoryId)
        .execute();
      throw new Error('rolled back on purpose');
    }),
    /on purpose/,
  );
  const refused = await postTransfer(app, worker.token, advanceBody(worker, { amount: 9_999_900 }));
  assert.equal(refused.statusCode, 400);
  assert.deepEqual(await counts(), start);
  await dispatch(app, later(HOUR));
  assert.equal(receiver.received.length, before);
});

test("an endpoint gets only its client's organizations' events; another client's endpoint is not found", async (t) => {
  const app = await appAtFixedNow(t);
  const a = await partnerWorld(t, app);
  const b = await partnerWorld(t, app);
  const id = await advance(app, a.worker);
  await dispatch(app, FIXED_NOW);
  assert.deepEqual(
    a.receiver.received.map((r) => r.payload.data.id),
    [id],
  );
  assert.equal(b.receiver.received.length, 0);
  for (const response of [
    await b.partner.get(`/rest/webhook_endpoints/${a.endpoint.id}`),
    await b.partner.delete(`/rest/webhook_endpoints/${a.endpoint.id}`),
    await b.partner.post(`/rest/webhook_endpoints/${a.endpoint.id}/test`, {}),
    await b.partner.get(`/rest/webhook_endpoints/${a.endpoint.id}/deliveries`),
  ])
    assert.equal(response.statusCode, 404, response.body);
  assert.deepEqual(
    (await b.partner.get('/rest/webhook_endpoints')).json().data.map((e: { id: string }) => e.id),
    [b.endpoint.id],
  );
  // A worker's token is not a client's.
  assert.equal((await a.worker.api.get('/rest/webhook_endpoints')).statusCode, 403);
  // A client without client:admin may not manage endpoints.
  const { token } = await linkedClientToken(app, [a.organizationId], ['client:lookup']);
  assert.equal((await restClient(app, token).get('/rest/webhook_endpoints')).statusCode, 403);
});

test('a rotated secret: both sign during the overlap, then only the new one', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, partner, endpoint } = await partnerWorld(t, app);
  const rotated = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/rotate_secret`, {
    data: { type: 'webhook_secret_rotations', attributes: { overlap_seconds: 3600 } },
  });
  assert.equal(rotated.statusCode, 200, rotated.body);
  const fresh = rotated.json().data.attributes.secret as string;
  assert.notEqual(fresh, receiver.secrets[0]);
  assert.equal(rotated.json().data.meta.previous_secrets_expire_at, later(HOUR).toISOString());
  await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  const [during] = receiver.received;
  assert.equal(String(during!.headers['webhook-signature']).split(' ').length, 2);
  for (const secret of [receiver.secrets[0]!, fresh])
    new Webhook(secret).verify(during!.body, during!.headers as Record<string, string>);
  // Real time passes too: secrets expire on the server's clock, not on the instant a dispatch is asked for.
  clock.at = later(22 * HOUR);
  await app.money.settle(later(22 * HOUR));
  await dispatch(app, later(22 * HOUR));
  const after = receiver.received[1]!;
  assert.equal(after.payload.type, 'transfer.settled');
  assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
  new Webhook(fresh).verify(after.body, after.headers as Record<string, string>);
  assert.throws(() =>
    new Webhook(receiver.secrets[0]!).verify(after.body, after.headers as Record<string, string>),
  );
});

test('deliveries not accepted within the retry window disable the endpoint; enabled again, a range is redelivered', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, partner, endpoint } = await partnerWorld(t, app);
  receiver.answerWith(() => 500);
  const id = await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  // The sandbox's clock a day ahead, real time a moment: the window is real time, so the delivery is tried again.
  await dispatch(app, later(25 * HOUR));
  const stillEnabled = (await partner.get(`/rest/webhook_endpoints/${endpoint.id}`)).json().data;
  assert.equal(stillEnabled.attributes.status, 'ENABLED');
  assert.equal(receiver.received.length, 2);
  clock.at = later(25 * HOUR);
  await dispatch(app, later(26 * HOUR));
  const disabled = (await partner.get(`/rest/webhook_endpoints/${endpoint.id}`)).json().data;
  assert.equal(disabled.attributes.status, 'DISABLED');
  assert.match(disabled.attributes.disabled_reason, /24 hours/);
  assert.ok(app.logs.some((line) => line.level === 50 && /webhook endpoint disabled/.test(String(line.msg))));
  const log = (await partner.get(`/rest/webhook_endpoints/${endpoint.id}/deliveries`)).json().data;
  assert.equal(log[0].attributes.outcome, 'GIVEN_UP');
  // Disabled, it is sent nothing new.
  await advance(app, worker, 1000);
  await dispatch(app, later(26 * HOUR));
  assert.equal(receiver.received.length, 2);
  const refused = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/redeliveries`, {
    data: { type: 'webhook_redeliveries', attributes: { event_id: receiver.received[0]!.id } },
  });
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().errors[0].source.parameter, 'endpoint_id');
  receiver.answerWith(() => 200);
  clock.at = later(26 * HOUR);
  const enabled = await partner.patch(`/rest/webhook_endpoints/${endpoint.id}`, {
    data: { type: 'webhook_endpoints', id: endpoint.id, attributes: { status: 'ENABLED' } },
  });
  assert.equal(enabled.json().data.attributes.status, 'ENABLED');
  const redelivered = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/redeliveries`, {
    data: {
      type: 'webhook_redeliveries',
      attributes: { from: FIXED_NOW.toISOString(), to: later(26 * HOUR).toISOString() },
    },
  });
  assert.equal(redelivered.statusCode, 202, redelivered.body);
  // The range holds the second advance's events too (made when the clock said 25 hours later).
  assert.equal(redelivered.json().meta.queued, 3);
  await dispatch(app, later(27 * HOUR));
  const delivered = receiver.received.filter((r) => r.answered === 200).map((r) => r.payload.data.id);
  assert.equal(delivered.length, 3);
  assert.ok(delivered.includes(id));
  assert.ok(
    receiver.received.some((r) => r.answered === 200 && r.id === receiver.received[0]!.id),
    'a redelivery keeps the event id',
  );
});

test('every event type: accounts, jobs, earnings balances, paychecks step by step', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, organizationId } = await partnerWorld(t, app, null);
  await advance(app, worker);
  const savingsId = await addBankAccount(worker, '99887766');
  for (const id of [savingsId, worker.depositoryId]) {
    const patched = await worker.api.patch(`/rest/jobs/${worker.jobId}`, {
      data: {
        type: 'jobs',
        id: worker.jobId,
        relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id } } },
      },
    });
    assert.equal(patched.statusCode, 200, patched.body);
  }
  assert.equal((await worker.api.delete(`/rest/accounts/${savingsId}`)).statusCode, 204);
  await dispatch(app, FIXED_NOW);
  await app.money.settle(later(22 * HOUR));
  await dispatch(app, later(22 * HOUR));
  // Payday of the period the shift was in, then its payout delivered; each sent as it happens.
  const payday = later(16 * 24 * HOUR);
  await app.money.payroll(payday);
  await dispatch(app, payday);
  await app.money.settle(later(20 * 24 * HOUR));
  await dispatch(app, later(20 * 24 * HOUR));
  const types = new Set(receiver.received.map((r) => r.payload.type));
  for (const type of [
    'transfer.created',
    'transfer.settled',
    'earnings_balance.updated',
    'account.created',
    'account.deleted',
    'job.updated',
    'paycheck.status_changed',
  ])
    assert.ok(types.has(type), `${type} among ${[...types].join(', ')}`);
  assert.ok(receiver.received.every((r) => r.verified));
  const steps = receiver.received
    .filter((r) => r.payload.type === 'paycheck.status_changed')
    .map((r) => `${r.payload.previous_status}→${(r.payload.data.attributes as { status: string }).status}`);
  assert.deepEqual(steps, ['ESTIMATED→PROCESSING', 'PROCESSING→IN_TRANSIT', 'IN_TRANSIT→DEPOSITED']);
  const account = receiver.received.find((r) => r.payload.type === 'account.deleted')!;
  assert.equal(account.payload.data.id, savingsId);
  assert.doesNotMatch(account.body, /99887766/, 'no account number in an event');
  const balance = receiver.received.filter((r) => r.payload.type === 'earnings_balance.updated').at(-1)!;
  const read = (await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`)).json().data;
  assert.deepEqual(balance.payload.data, read, 'the last balance event is the balance as read now');
  // The job event belongs to the organization of the job.
  const job = receiver.received.find((r) => r.payload.type === 'job.updated')!;
  assert.equal(
    (job.payload.data.relationships as { organization: { data: { id: string } } }).organization.data.id,
    organizationId,
  );
});

test('a balance event of a job not ACTIVATED shows none of it available, as GET does', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker } = await partnerWorld(t, app, ['earnings_balance.updated']);
  const patched = await worker.api.patch(`/rest/jobs/${worker.jobId}`, {
    data: { type: 'jobs', id: worker.jobId, attributes: { activation_status: 'DEACTIVATED' } },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  // A shift recorded late, of a day the job was still active: an event with the job deactivated.
  await recordShift(app, worker.jobId, 12_000, FIXED_NOW);
  await dispatch(app, FIXED_NOW);
  const balance = receiver.received.at(-1);
  assert.ok(balance, 'the shift changed the balance');
  const attributes = balance.payload.data.attributes as { balances: { available: number; current: number } };
  assert.equal(attributes.balances.available, 0);
  assert.ok(attributes.balances.current > 0, 'a balance, none of it available');
  const read = (await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`)).json().data;
  assert.deepEqual(balance.payload.data, read, 'the event is the balance as read now');
});

test('bad endpoint input is a 400 naming the field; a client has at most its share of endpoints', async (t) => {
  const app = await appAtFixedNow(t, { EWA_WEBHOOK_ENDPOINTS_PER_CLIENT_MAX: '2' });
  const organizationId = await createOrganization(app);
  const { token } = await linkedClientToken(app, [organizationId], ['client:admin']);
  const partner = restClient(app, token);
  const create = (attributes: Record<string, unknown>) =>
    partner.post('/rest/webhook_endpoints', { data: { type: 'webhook_endpoints', attributes } });
  for (const [attributes, code, pointer] of [
    [{}, 'MISSING_REQUIRED_FIELD', '/data/attributes/url'],
    [{ url: 'ftp://example.com/x' }, 'INVALID_FIELDS', '/data/attributes/url'],
    [{ url: 'not a url' }, 'INVALID_FIELDS', '/data/attributes/url'],
    [{ url: 'https://user:pw@example.com/' }, 'INVALID_FIELDS', '/data/attributes/url'],
    [{ url: `https://example.com/${'a'.repeat(2100)}` }, 'INVALID_FIELDS', '/data/attributes/url'],
    [
      { url: 'https://example.com/', event_types: ['transfer.exploded'] },
      'INVALID_FIELDS',
      '/data/attributes/event_types/0',
    ],
    [{ url: 'https://example.com/', event_types: [] }, 'INVALID_FIELDS', '/data/attributes/event_types'],
    [
      { url: 'https://example.com/', description: 'x'.repeat(201) },
      'INVALID_FIELDS',
      '/data/attributes/description',
    ],
    [{ url: 'https://example.com/', secret: 'whsec_mine' }, 'INVALID_PARAMETERS', '/data/attributes/secret'],
  ] as const) {
    const response = await create(attributes);
    assert.equal(response.statusCode, 400, `${JSON.stringify(attributes).slice(0, 80)}: ${response.body}`);
    const [error] = response.json().errors;
    assert.equal(error.code, code, response.body);
    assert.ok(String(error.source?.pointer).startsWith(pointer), response.body);
  }
  assert.equal((await create({ url: 'https://example.com/1' })).statusCode, 201);
  assert.equal((await create({ url: 'https://example.com/2' })).statusCode, 201);
  const third = await create({ url: 'https://example.com/3' });
  assert.equal(third.statusCode, 400);
  // Well formed, refused by what the client already has: not a malformed field.
  assert.equal(third.json().errors[0].code, 'INVALID_PARAMETERS');
  assert.match(third.json().errors[0].detail, /at most 2/);
  assert.equal((await partner.get('/rest/webhook_endpoints/nope')).statusCode, 404);
});

test('production refuses plain http and private addresses', async (t) => {
  const app = await appAtFixedNow(t, {
    EWA_WEBHOOK_REQUIRE_HTTPS: 'true',
    EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'false',
  });
  const organizationId = await createOrganization(app);
  const { token } = await linkedClientToken(app, [organizationId], ['client:admin']);
  const partner = restClient(app, token);
  for (const url of [
    'http://partner.example.com/hooks',
    'https://127.0.0.1/hooks',
    'https://localhost/hooks',
    'https://10.1.2.3/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
    'https://[::ffff:7f00:1]/hooks',
    'https://[::ffff:0:7f00:1]/hooks',
    'https://[64:ff9b:1::a00:1]/hooks',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hooks',
    'https://[fec0::1]/hooks',
    'https://[100::1]/hooks',
  ]) {
    const response = await partner.post('/rest/webhook_endpoints', {
      data: { type: 'webhook_endpoints', attributes: { url } },
    });
    assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
  }
});

test('the operator manages any client’s endpoints under /admin, and a test event reaches the receiver', async (t) => {
  const app = await appAtFixedNow(t);
  const partnerClient = await createTestClient(app);
  const operatorClient = await createTestClient(app, { scopes: ['admin:operator'], redirectUris: [] });
  const operator = restClient(app, await clientToken(app, ['admin:operator'], operatorClient));
  const receiver = await startReceiver(t);
  const created = await operator.post('/admin/webhook_endpoints', {
    data: { type: 'webhook_endpoints', attributes: { url: receiver.url, client_id: partnerClient.clientId } },
  });
  assert.equal(created.statusCode, 201, created.body);
  const endpoint = created.json().data;
  assert.equal(endpoint.attributes.client_id, partnerClient.clientId);
  receiver.secrets.push(endpoint.attributes.secret);
  const ghost = await operator.post('/admin/webhook_endpoints', {
    data: { type: 'webhook_endpoints', attributes: { url: receiver.url, client_id: 'ghost' } },
  });
  assert.equal(ghost.statusCode, 400);
  assert.equal(ghost.json().errors[0].source.pointer, '/data/attributes/client_id');
  const tested = await operator.post(`/admin/webhook_endpoints/${endpoint.id}/test`, {});
  assert.equal(tested.statusCode, 202, tested.body);
  await dispatch(app, FIXED_NOW);
  assert.equal(receiver.received.length, 1);
  assert.equal(receiver.received[0]!.payload.type, 'webhook.test');
  assert.equal(receiver.received[0]!.id, tested.json().meta.event_id);
  assert.ok(receiver.received[0]!.verified);
  assert.equal((await operator.delete(`/admin/webhook_endpoints/${endpoint.id}`)).statusCode, 204);
  const left = (await operator.get('/admin/webhook_endpoints')).json().data.map((e: { id: string }) => e.id);
  assert.ok(!left.includes(endpoint.id));
  // A filter the list does not have is refused by name, not ignored into every client's endpoints.
  for (const [query, name] of [
    ['filter[client]=x', 'filter[client]'],
    ['client_id=x', 'client_id'],
  ]) {
    const unknown = await operator.get(`/admin/webhook_endpoints?${query}`);
    assert.equal(unknown.statusCode, 400, unknown.body);
    assert.deepEqual(unknown.json().errors[0].source, { parameter: name });
  }
  const clock = await operator.get('/admin/sandbox/clock?x=1');
  assert.equal(clock.statusCode, 400, clock.body);
});

test('a secret rotated with no body keeps the previous one signing for a day', async (t) => {
  const app = await appAtFixedNow(t);
  const organizationId = await createOrganization(app);
  const { token } = await linkedClientToken(app, [organizationId], ['client:admin']);
  const partner = restClient(app, token);
  const created = await partner.post('/rest/webhook_endpoints', {
    data: { type: 'webhook_endpoints', attributes: { url: 'https://partner.example.com/hooks' } },
  });
  const id = created.json().data.id;
  const rotated = await app.api.inject({
    method: 'POST',
    url: `/rest/webhook_endpoints/${id}/rotate_secret`,
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(rotated.statusCode, 200, rotated.body);
  assert.equal(rotated.json().data.meta.previous_secrets_expire_at, later(24 * HOUR).toISOString());
  // So does a client that sends a Content-Type on every request.
  const typed = await app.api.inject({
    method: 'POST',
    url: `/rest/webhook_endpoints/${id}/rotate_secret`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
  });
  assert.equal(typed.statusCode, 200, typed.body);
  // And an empty chunked body: no body, as a Content-Length of 0 would say.
  const chunked = await app.api.inject({
    method: 'POST',
    url: `/rest/webhook_endpoints/${id}/rotate_secret`,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/vnd.api+json',
      'transfer-encoding': 'chunked',
    },
    payload: Readable.from([]),
  });
  assert.equal(chunked.statusCode, 200, chunked.body);
  const refused = await partner.post(`/rest/webhook_endpoints/${id}/rotate_secret`, {
    data: { type: 'webhook_secret_rotations', attributes: { overlap_seconds: 10 * 86_400 } },
  });
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().errors[0].source.pointer, '/data/attributes/overlap_seconds');
});

test('events past their retention are purged with their delivery log, unless a delivery is still queued', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, endpoint, partner } = await partnerWorld(t, app);
  receiver.answerWith(() => 500);
  const id = await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  const eventId = receiver.received[0]!.id;
  const { db } = app.database;
  const has = async (event: string) =>
    (await db.selectFrom('webhook_events').select('id').where('id', '=', event).executeTakeFirst()) !==
    undefined;
  const monthLater = later(31 * 24 * HOUR);
  await app.webhooks.events.purgeBefore(monthLater);
  assert.ok(await has(eventId), 'a delivery still queued keeps its event');
  // A day passes (the retry window is real time): the delivery is given up and leaves the outbox.
  clock.at = later(25 * HOUR);
  await dispatch(app, later(25 * HOUR));
  await app.webhooks.events.purgeBefore(monthLater);
  assert.equal(await has(eventId), false);
  const log = (
    await partner.get(`/rest/webhook_endpoints/${endpoint.id}/deliveries?event_id=${eventId}`)
  ).json();
  assert.deepEqual(log.data, []);
  assert.ok(id);
});

test('a sandbox clock moved past the retention purges no event younger than it in real time', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker } = await partnerWorld(t, app);
  await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  const eventId = receiver.received[0]!.id;
  const has = async () =>
    (await app.database.db
      .selectFrom('webhook_events')
      .select('id')
      .where('id', '=', eventId)
      .executeTakeFirst()) !== undefined;
  const purgeAt = async (now: Date, realNow: Date) => {
    const [job] = webhookJobs(app.webhooks, app.config, () => realNow);
    return job!.run({ now, runKey: 'test', signal: new AbortController().signal });
  };
  // `ewa sandbox advance` moved the clock 42 days on; in real time the event is minutes old.
  assert.deepEqual(await purgeAt(later(42 * 24 * HOUR), FIXED_NOW), { purged: 0 });
  assert.ok(await has(), 'kept: younger than the retention in real time');
  const { purged } = (await purgeAt(later(42 * 24 * HOUR), later(31 * 24 * HOUR))) as { purged: number };
  assert.ok(purged >= 1, "the advance's events, among others");
  assert.equal(await has(), false, 'purged once past the retention on both clocks');
});

test('what only the worker’s own token reads goes only to a client the worker signed in to', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, organizationId } = await partnerWorld(t, app, null);
  // Another partner linked to the same employer, which the worker never signed in to.
  const { token } = await linkedClientToken(app, [organizationId], ['client:admin']);
  const other = await startReceiver(t);
  const created = await restClient(app, token).post('/rest/webhook_endpoints', {
    data: { type: 'webhook_endpoints', attributes: { url: other.url } },
  });
  other.secrets.push(created.json().data.attributes.secret);
  const id = await advance(app, worker);
  const patched = await worker.api.patch(`/rest/jobs/${worker.jobId}`, {
    data: { type: 'jobs', id: worker.jobId, attributes: { activation_status: 'DEACTIVATED' } },
  });
  assert.equal(patched.statusCode, 200, patched.body);
  await dispatch(app, FIXED_NOW);
  const types = (received: { payload: { type: string } }[]) =>
    [...new Set(received.map((r) => r.payload.type))].sort();
  assert.deepEqual(types(receiver.received), ['earnings_balance.updated', 'job.updated', 'transfer.created']);
  // Its client token reads the job and the earnings balance; transfers only a worker's token reads.
  assert.deepEqual(types(other.received), ['earnings_balance.updated', 'job.updated']);
  assert.ok(!other.received.some((r) => r.payload.data.id === id));
});

test('limits: two secrets sign at most, tests wait five at a time, bad filters and instants are 400s', async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, partner, endpoint } = await partnerWorld(t, app);
  for (let rotation = 0; rotation < 4; rotation++) {
    const rotated = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/rotate_secret`, {});
    assert.equal(rotated.statusCode, 200, rotated.body);
    receiver.secrets.push(rotated.json().data.attributes.secret);
  }
  await advance(app, worker);
  await dispatch(app, FIXED_NOW);
  const [delivery] = receiver.received;
  assert.equal(String(delivery!.headers['webhook-signature']).split(' ').length, 2);
  for (const secret of receiver.secrets.slice(-2))
    new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);

  const tests = [];
  for (let i = 0; i < 6; i++)
    tests.push(await partner.post(`/rest/webhook_endpoints/${endpoint.id}/test`, {}));
  assert.deepEqual(
    tests.map((r) => r.statusCode),
    [202, 202, 202, 202, 202, 429],
  );
  assert.equal(tests[5]!.json().errors[0].code, 'TOO_MANY_REQUESTS');

  for (const [query, parameter] of [
    ['event_id=not-a-uuid', 'event_id'],
    ['limit=0', 'limit'],
    ['limit=5000', 'limit'],
  ]) {
    const response = await partner.get(`/rest/webhook_endpoints/${endpoint.id}/deliveries?${query}`);
    assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
    assert.equal(response.json().errors[0].source.parameter, parameter);
  }
  for (const attributes of [
    { from: '0000-01-01T00:00:00Z', to: FIXED_NOW.toISOString() },
    { from: FIXED_NOW.toISOString(), to: '9999-12-31T23:59:59-14:00' },
    { from: later(HOUR).toISOString(), to: FIXED_NOW.toISOString() },
  ]) {
    const response = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/redeliveries`, {
      data: { type: 'webhook_redeliveries', attributes },
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.json().errors[0].source.pointer, /^\/data\/attributes\/(from|to)$/);
  }
  for (const url of [`http://a.example/${'é'.repeat(1000)}`, 'http://a.example/#', 'http://a.example:0/']) {
    const response = await partner.patch(`/rest/webhook_endpoints/${endpoint.id}`, {
      data: { type: 'webhook_endpoints', id: endpoint.id, attributes: { url } },
    });
    assert.equal(response.statusCode, 400, `${url.slice(0, 40)}: ${response.body}`);
  }

  // Disabled, it is not tested; deleted, what waited for it is dropped.
  await partner.patch(`/rest/webhook_endpoints/${endpoint.id}`, {
    data: { type: 'webhook_endpoints', id: endpoint.id, attributes: { status: 'DISABLED' } },
  });
  const refused = await partner.post(`/rest/webhook_endpoints/${endpoint.id}/test`, {});
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().errors[0].source.parameter, 'endpoint_id');
  assert.equal((await partner.delete(`/rest/webhook_endpoints/${endpoint.id}`)).statusCode, 204);
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from outbox
    where payload->>'endpointId' = ${endpoint.id}`.execute(app.database.db);
  assert.equal(rows[0]!.n, 0);
});

test("an account event shows the free option the person's state required when it happened, as GET did", async (t) => {
  const app = await appAtFixedNow(t);
  const { receiver, worker, organizationId } = await partnerWorld(t, app, ['account.created']);
  // Nothing free in the employer's schedule; South Carolina requires a free option (SC-FREE-OPTION).
  await app.database.db
    .updateTable('organization_policies')
    .set({ fee_bank_instant_minor: 300, fee_bank_next_day_minor: 100, fee_card_next_day_minor: 100 })
    .where('organization_id', '=', organizationId)
    .execute();
  const livesIn = (state: string) =>
    app.database.db
      .updateTable('people')
      .set({ state_of_residence: state })
      .where('id', '=', worker.personId)
      .execute();
  const destinationsOf = (payload: { data: Record<string, unknown> }) =>
    (payload.data.attributes as { capabilities: { transfer_destination: unknown } }).capabilities
      .transfer_destination;
  const read = async (id: string) => (await worker.api.get(`/rest/accounts/${id}`)).json().data;

  await livesIn('SC');
  const inCarolina = await addBankAccount(worker, '11223344');
  const readThen = await read(inCarolina);
  // The person moves before the event is sent: it still shows what GET showed when it happened.
  await livesIn('NY');
  const inNewYork = await addBankAccount(worker, '55667788');
  await dispatch(app, FIXED_NOW);
  const sent = (id: string) => receiver.received.find((r) => r.payload.data.id === id)!.payload;

  assert.deepEqual(destinationsOf(sent(inCarolina)), [
    { schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' },
    { schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' },
  ]);
  assert.deepEqual(sent(inCarolina).data, readThen);
  assert.deepEqual(destinationsOf(sent(inNewYork)), [
    { schedule: 'WITHIN_THIRTY_MINUTES', fee: 300, currency: 'USD' },
    { schedule: 'NEXT_BUSINESS_DAY', fee: 100, currency: 'USD' },
  ]);
  assert.deepEqual(sent(inNewYork).data, await read(inNewYork));
  assert.ok(receiver.received.every((r) => r.verified));
});
