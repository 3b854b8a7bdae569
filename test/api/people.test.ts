import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { CARD_PRODUCT_KEY } from '../../src/resources/people/serialize.ts';
import { BASE_URL, buildTestApp } from '../helpers/build-test-app.ts';
import { checkResponseAgainstReference } from '../helpers/contract.ts';
import {
  createOrganization,
  createWorker,
  linkedClientToken,
  restClient,
  workerToken,
} from '../helpers/factories.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t);
  const acme = await createOrganization(app);
  const zenith = await createOrganization(app);
  const alice = await createWorker(app, acme);
  const bob = await createWorker(app, zenith);
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: 'NY' })
    .where('id', '=', alice.personId)
    .execute();
  const aliceApi = restClient(app, await workerToken(app, alice.personId));
  return { app, acme, zenith, alice, bob, aliceApi };
}

test('GET /rest/people/{id}: the person themselves, with every attribute of the description', async (t) => {
  const { alice, aliceApi } = await setup(t);
  const response = await aliceApi.get(`/rest/people/${alice.personId}`);
  assert.equal(response.statusCode, 200);
  assert.deepEqual(response.json(), {
    data: {
      type: 'people',
      id: alice.personId,
      attributes: {
        disallow_reason: null,
        state_of_residence: 'NY',
        products: { [CARD_PRODUCT_KEY]: { eligible: false, enrolled: false } },
      },
      links: { self: `${BASE_URL}/rest/people/${alice.personId}` },
    },
  });
});

test('a person without a state has no state_of_residence attribute (the description types it as a string)', async (t) => {
  const { app, bob } = await setup(t);
  const api = restClient(app, await workerToken(app, bob.personId));
  const { attributes } = (await api.get(`/rest/people/${bob.personId}`)).json().data;
  assert.equal('state_of_residence' in attributes, false);
});

test('another person, an unknown id or a malformed id is 404 RECORD_NOT_FOUND and shows nothing', async (t) => {
  const { bob, aliceApi } = await setup(t);
  for (const id of [bob.personId, randomUUID(), 'not-a-uuid', bob.personId.toUpperCase()]) {
    const response = await aliceApi.get(`/rest/people/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND');
    assert.doesNotMatch(response.body, /NY|disallow/);
  }
});

test('a client:admin token sees workers of its organizations only', async (t) => {
  const { app, acme, alice, bob } = await setup(t);
  const { token } = await linkedClientToken(app, [acme], ['client:admin']);
  const api = restClient(app, token);
  assert.equal((await api.get(`/rest/people/${alice.personId}`)).statusCode, 200);
  const other = await api.get(`/rest/people/${bob.personId}`);
  assert.equal(other.statusCode, 404);
  assert.equal(other.json().errors[0].code, 'RECORD_NOT_FOUND');
  const lookupOnly = restClient(app, (await linkedClientToken(app, [acme], ['client:lookup'])).token);
  assert.equal((await lookupOnly.get(`/rest/people/${alice.personId}`)).statusCode, 403);
});

test('PATCH /rest/people/{id} sets state_of_residence, stored and returned', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const response = await aliceApi.patch(`/rest/people/${alice.personId}`, {
    data: { type: 'people', id: alice.personId, attributes: { state_of_residence: 'DC' } },
  });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().data.attributes.state_of_residence, 'DC');
  const row = await app.database.db
    .selectFrom('people')
    .select('state_of_residence')
    .where('id', '=', alice.personId)
    .executeTakeFirstOrThrow();
  assert.equal(row.state_of_residence, 'DC');
});

test('PATCH validation: each bad body is a 400 naming the field, and nothing changes', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const body = (attributes: unknown, extra: Record<string, unknown> = {}) => ({
    data: { type: 'people', id: alice.personId, attributes, ...extra },
  });
  const cases: [unknown, string, string][] = [
    [body({ state_of_residence: 'XX' }), 'INVALID_PARAMETERS', '/data/attributes/state_of_residence'],
    [body({ state_of_residence: 'ny' }), 'INVALID_PARAMETERS', '/data/attributes/state_of_residence'],
    [body({ state_of_residence: 'NYC' }), 'INVALID_PARAMETERS', '/data/attributes/state_of_residence'],
    [body({ state_of_residence: 12 }), 'INVALID_PARAMETERS', '/data/attributes/state_of_residence'],
    [body({}), 'INVALID_PARAMETERS', '/data/attributes/state_of_residence'],
    [
      body({ state_of_residence: 'CA', disallow_reason: null }),
      'INVALID_PARAMETERS',
      '/data/attributes/disallow_reason',
    ],
    [
      { data: { type: 'jobs', id: alice.personId, attributes: { state_of_residence: 'CA' } } },
      'INVALID_PARAMETERS',
      '/data/type',
    ],
    [body({ state_of_residence: 'CA' }, { id: randomUUID() }), 'INVALID_PARAMETERS', '/data/id'],
    [{}, 'INVALID_PARAMETERS', '/data'],
  ];
  for (const [payload, code, pointer] of cases) {
    const response = await aliceApi.patch(`/rest/people/${alice.personId}`, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    const [error] = response.json().errors;
    assert.equal(error.code, code, JSON.stringify(payload));
    assert.equal(error.source.pointer, pointer, JSON.stringify(payload));
  }
  const row = await app.database.db
    .selectFrom('people')
    .select('state_of_residence')
    .where('id', '=', alice.personId)
    .executeTakeFirstOrThrow();
  assert.equal(row.state_of_residence, 'NY');
});

test('PATCH another person is 404; a read-only or client token is 403', async (t) => {
  const { app, acme, alice, bob, aliceApi } = await setup(t);
  const body = (id: string) => ({ data: { type: 'people', id, attributes: { state_of_residence: 'CA' } } });
  const other = await aliceApi.patch(`/rest/people/${bob.personId}`, body(bob.personId));
  assert.equal(other.statusCode, 404);
  const readOnly = restClient(app, await workerToken(app, alice.personId, ['user:read']));
  assert.equal(
    (await readOnly.patch(`/rest/people/${alice.personId}`, body(alice.personId))).statusCode,
    403,
  );
  const client = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:admin', 'client:lookup'])).token,
  );
  assert.equal((await client.patch(`/rest/people/${alice.personId}`, body(alice.personId))).statusCode, 403);
});

test('the contract check fails on a body that breaks the description', () => {
  assert.throws(
    () =>
      checkResponseAgainstReference(
        'GET',
        `/rest/people/${randomUUID()}`,
        200,
        'application/vnd.api+json',
        JSON.stringify({ data: { type: 'people', id: randomUUID(), attributes: {} } }),
      ),
    /does not match the published description/,
  );
});
