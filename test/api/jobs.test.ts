import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { BASE_URL, buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import {
  bankAccountBody,
  createOrganization,
  createWorker,
  linkedClientToken,
  restClient,
  workerToken,
} from '../helpers/factories.ts';

async function addBankAccount(
  api: ReturnType<typeof restClient>,
  personId: string,
  accountNumber = '12345678',
) {
  const response = await api.post(
    '/rest/accounts',
    bankAccountBody(personId, {}, { account_number: accountNumber }),
  );
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data.id as string;
}

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t);
  const acme = await createOrganization(app);
  const zenith = await createOrganization(app);
  const alice = await createWorker(app, acme, { employeeId: 'A-1', group: 'north' });
  const aliceSecond = await createWorker(app, zenith, {
    personId: alice.personId,
    employeeId: 'Z-9',
    group: 'south',
  });
  const bob = await createWorker(app, acme, { employeeId: 'A-2', group: 'north' });
  const carol = await createWorker(app, zenith, { employeeId: 'Z-1', group: 'south' });
  const aliceApi = restClient(app, await workerToken(app, alice.personId));
  return { app, acme, zenith, alice, aliceSecond, bob, carol, aliceApi };
}

const ids = (body: { data: { id: string }[] }) => body.data.map((job) => job.id).sort();

test('GET /rest/jobs: a person sees all of their own jobs, each with every attribute and relationship', async (t) => {
  const { acme, alice, aliceSecond, aliceApi } = await setup(t);
  const response = await aliceApi.get('/rest/jobs');
  assert.equal(response.statusCode, 200);
  assert.deepEqual(ids(response.json()), [alice.jobId, aliceSecond.jobId].sort());
  const job = response.json().data.find((entry: { id: string }) => entry.id === alice.jobId);
  assert.deepEqual(job, {
    type: 'jobs',
    id: alice.jobId,
    attributes: {
      external_identifiers: {
        primary_identifier: `P-${alice.jobId.slice(0, 8)}`,
        employee_id: 'A-1',
        group: 'north',
      },
      first_name: 'Robin',
      last_name: 'Lee',
      location: 'Main site',
      title: 'Associate',
      department: null,
      activation_status: 'ACTIVATED',
      wage_rate: { amount: 2000, currency: 'USD', frequency: 'HOURLY' },
      direct_deposit_status: 'SETUP_REQUIRED',
    },
    relationships: {
      person: { data: { type: 'people', id: alice.personId } },
      organization: { data: { type: 'organizations', id: acme } },
    },
    links: { self: `${BASE_URL}/rest/jobs/${alice.jobId}` },
  });
});

test('a client with client:lookup and client:admin sees jobs at its organizations only', async (t) => {
  const { app, acme, alice, bob, carol, aliceSecond } = await setup(t);
  const api = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:lookup', 'client:admin'])).token,
  );
  const list = await api.get('/rest/jobs');
  assert.equal(list.statusCode, 200);
  assert.deepEqual(ids(list.json()), [alice.jobId, bob.jobId].sort(), "not Alice's job at another employer");
  assert.equal((await api.get(`/rest/jobs/${bob.jobId}`)).statusCode, 200);
  for (const id of [carol.jobId, aliceSecond.jobId, randomUUID(), 'nope']) {
    const response = await api.get(`/rest/jobs/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND');
  }
  for (const scopes of [['client:lookup'], ['client:admin']]) {
    const partial = restClient(app, (await linkedClientToken(app, [acme], scopes)).token);
    assert.equal((await partial.get('/rest/jobs')).statusCode, 403, scopes.join(' '));
  }
});

test("a person cannot read another person's job", async (t) => {
  const { bob, aliceApi } = await setup(t);
  const response = await aliceApi.get(`/rest/jobs/${bob.jobId}`);
  assert.equal(response.statusCode, 404);
  assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND');
});

test('each of the five filters alone, combined, and the deprecated free-form filter', async (t) => {
  const { app, acme, zenith, alice, aliceSecond, bob, carol } = await setup(t);
  const api = restClient(
    app,
    (await linkedClientToken(app, [acme, zenith], ['client:lookup', 'client:admin'])).token,
  );
  const list = async (query: string) => {
    const response = await api.get(`/rest/jobs?${query}`);
    assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    return ids(response.json());
  };
  const q = encodeURIComponent;
  assert.deepEqual(
    await list(`${q('filter[external_identifiers.primary_identifier]')}=P-${bob.jobId.slice(0, 8)}`),
    [bob.jobId],
  );
  assert.deepEqual(await list(`${q('filter[external_identifiers.employee_id]')}=Z-1`), [carol.jobId]);
  assert.deepEqual(
    await list(`${q('filter[external_identifiers.group]')}=north`),
    [alice.jobId, bob.jobId].sort(),
  );
  assert.deepEqual(
    await list(`${q('filter[person.id]')}=${alice.personId}`),
    [alice.jobId, aliceSecond.jobId].sort(),
  );
  assert.deepEqual(
    await list(`${q('filter[organization.id]')}=${zenith}`),
    [aliceSecond.jobId, carol.jobId].sort(),
  );
  assert.deepEqual(
    await list(`${q('filter[person.id]')}=${alice.personId}&${q('filter[organization.id]')}=${zenith}`),
    [aliceSecond.jobId],
  );
  assert.deepEqual(
    await list(
      `${q('filter[external_identifiers.group]')}=north&${q('filter[external_identifiers.employee_id]')}=Z-1`,
    ),
    [],
  );
  assert.deepEqual(
    await list(
      `filter=${q('external_identifiers.employee_id:"A-1" OR external_identifiers.employee_id:"Z-1"')}`,
    ),
    [alice.jobId, carol.jobId].sort(),
  );
  assert.deepEqual(
    await list(`filter=${q(`external_identifiers.group~"NOR" AND person.id:"${bob.personId}"`)}`),
    [bob.jobId],
  );
});

test('bad filters are 400 with the parameter named', async (t) => {
  const { aliceApi } = await setup(t);
  const cases: [string, string, string][] = [
    ['filter[person.id]=42', 'INVALID_FILTER_VALUE', 'filter[person.id]'],
    ['filter[organization.id]=x', 'INVALID_FILTER_VALUE', 'filter[organization.id]'],
    ['filter[title]=x', 'INVALID_FILTER_FIELD', 'filter[title]'],
    ['filter[person.id__gt]=x', 'INVALID_FIELD_OPERATION', 'filter[person.id__gt]'],
    ['filter=title:"x"', 'INVALID_FILTER_FIELD', 'filter'],
    ['filter=person.id~"x"', 'INVALID_FIELD_OPERATION', 'filter'],
    ['filter=(person.id:"x"', 'INVALID_FILTER_QUERY', 'filter'],
    ['filter=person.id:"nope"', 'INVALID_FILTER_VALUE', 'filter'],
    ['filter=external_identifiers.group~"N" OR organization.id:"42"', 'INVALID_FILTER_VALUE', 'filter'],
    ['filter=external_identifiers.employee_id:""', 'INVALID_FILTER_VALUE', 'filter'],
  ];
  for (const [query, code, parameter] of cases) {
    const response = await aliceApi.get(`/rest/jobs?${query.replace(/\[|\]/g, encodeURIComponent)}`);
    assert.equal(response.statusCode, 400, query);
    const [error] = response.json().errors;
    assert.equal(error.code, code, query);
    assert.equal(error.source.parameter, parameter, query);
  }
});

async function patchJob(api: ReturnType<typeof restClient>, jobId: string, data: Record<string, unknown>) {
  return api.patch(`/rest/jobs/${jobId}`, { data: { type: 'jobs', id: jobId, ...data } });
}

async function jobRow(app: TestApp, id: string) {
  return app.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

test('PATCH sets the default depository: direct deposit becomes SETUP_COMPLETE', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const accountId = await addBankAccount(aliceApi, alice.personId);
  const response = await patchJob(aliceApi, alice.jobId, {
    relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: accountId } } },
  });
  assert.equal(response.statusCode, 200, response.body);
  const { attributes, relationships } = response.json().data;
  assert.equal(attributes.direct_deposit_status, 'SETUP_COMPLETE');
  assert.deepEqual(relationships.direct_deposit_default_depository, {
    data: { type: 'accounts', id: accountId },
  });
  const row = await jobRow(app, alice.jobId);
  assert.equal(row.direct_deposit_default_depository_id, accountId);
  assert.equal(row.direct_deposit_status, 'SETUP_COMPLETE');
});

test("PATCH defaults: not the right kind, not the person's own, deleted or unknown is INVALID_RESOURCE_LINK", async (t) => {
  const { app, alice, bob, aliceApi } = await setup(t);
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  const bobAccount = await addBankAccount(bobApi, bob.personId);
  const deleted = await addBankAccount(aliceApi, alice.personId, '99999999');
  assert.equal((await aliceApi.delete(`/rest/accounts/${deleted}`)).statusCode, 204);
  const own = await addBankAccount(aliceApi, alice.personId);
  const cases: [string, string][] = [
    ['direct_deposit_default_depository', bobAccount],
    ['direct_deposit_default_depository', alice.balanceAccountId!],
    ['direct_deposit_default_depository', deleted],
    ['direct_deposit_default_depository', randomUUID()],
    ['direct_deposit_default_depository', 'not-a-uuid'],
    ['direct_deposit_default_card', own],
  ];
  for (const [relationship, id] of cases) {
    const response = await patchJob(aliceApi, alice.jobId, {
      relationships: { [relationship]: { data: { type: 'accounts', id } } },
    });
    assert.equal(response.statusCode, 400, `${relationship} ${id}`);
    const [error] = response.json().errors;
    assert.equal(error.code, 'INVALID_RESOURCE_LINK');
    assert.equal(error.source.pointer, `/data/relationships/${relationship}/data/id`);
  }
  const row = await jobRow(app, alice.jobId);
  assert.equal(row.direct_deposit_default_depository_id, null);
  assert.equal(row.direct_deposit_status, 'SETUP_REQUIRED');
});

test('PATCH defaults on a job that is not ACTIVATED is ACTIVE_JOB_REQUIRED', async (t) => {
  const { app, acme, alice, aliceApi } = await setup(t);
  const pending = await createWorker(app, acme, {
    personId: alice.personId,
    activationStatus: 'ACTIVATION_REQUIRED',
  });
  const accountId = await addBankAccount(aliceApi, alice.personId);
  const response = await patchJob(aliceApi, pending.jobId, {
    relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: accountId } } },
  });
  assert.equal(response.statusCode, 400);
  assert.equal(response.json().errors[0].code, 'ACTIVE_JOB_REQUIRED');
  assert.equal((await jobRow(app, pending.jobId)).direct_deposit_default_depository_id, null);
});

test('PATCH activation_status DEACTIVATED deactivates; other values are refused naming the field', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  for (const value of ['ACTIVATED', 'ACTIVATION_REQUIRED', 'PAUSED']) {
    const response = await patchJob(aliceApi, alice.jobId, { attributes: { activation_status: value } });
    assert.equal(response.statusCode, 400, value);
    assert.equal(response.json().errors[0].source.pointer, '/data/attributes/activation_status');
  }
  const response = await patchJob(aliceApi, alice.jobId, {
    attributes: { activation_status: 'DEACTIVATED' },
  });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.json().data.attributes.activation_status, 'DEACTIVATED');
  const row = await jobRow(app, alice.jobId);
  assert.equal(row.activation_status, 'DEACTIVATED');
  assert.equal(
    row.earnings_balance_account_id,
    alice.balanceAccountId,
    'the earnings balance and its history stay',
  );
  const again = await patchJob(aliceApi, alice.jobId, {
    attributes: { activation_status: 'DEACTIVATED' },
  });
  assert.equal(again.statusCode, 200, 'deactivating twice is harmless');
});

test('PATCH: other people, bad ids and bad bodies', async (t) => {
  const { app, acme, alice, bob, aliceApi } = await setup(t);
  const other = await patchJob(aliceApi, bob.jobId, {
    attributes: { activation_status: 'DEACTIVATED' },
  });
  assert.equal(other.statusCode, 404);
  assert.equal((await jobRow(app, bob.jobId)).activation_status, 'ACTIVATED');
  const cases: [unknown, string][] = [
    [
      { data: { type: 'jobs', id: randomUUID(), attributes: { activation_status: 'DEACTIVATED' } } },
      '/data/id',
    ],
    [{ data: { type: 'people', id: alice.jobId } }, '/data/type'],
    [{ data: { type: 'jobs', id: alice.jobId, attributes: { title: 'Boss' } } }, '/data/attributes/title'],
    [
      {
        data: {
          type: 'jobs',
          id: alice.jobId,
          relationships: { person: { data: { type: 'people', id: alice.personId } } },
        },
      },
      '/data/relationships/person',
    ],
    [
      {
        data: {
          type: 'jobs',
          id: alice.jobId,
          relationships: { direct_deposit_default_card: { data: { type: 'people', id: alice.personId } } },
        },
      },
      '/data/relationships/direct_deposit_default_card/data/type',
    ],
  ];
  for (const [payload, pointer] of cases) {
    const response = await aliceApi.patch(`/rest/jobs/${alice.jobId}`, payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.equal(response.json().errors[0].source.pointer, pointer, JSON.stringify(payload));
  }
  const client = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:lookup', 'client:admin'])).token,
  );
  const forbidden = await patchJob(client, alice.jobId, {
    attributes: { activation_status: 'DEACTIVATED' },
  });
  assert.equal(forbidden.statusCode, 403);
});
