import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { BankAccountSecrets, context } from '../../src/crypto/bank-account-secrets.ts';
import { open } from '../../src/crypto/secret-box.ts';
import { AccountService } from '../../src/resources/accounts/service.ts';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { BASE_URL, buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { referenceFacts } from '../helpers/contract.ts';
import {
  bankAccountBody,
  createOrganization,
  createWorker,
  linkedClientToken,
  restClient,
  workerToken,
} from '../helpers/factories.ts';
import { advanceBody, createPaidWorker, firstError, postTransfer } from '../helpers/money.ts';

type Api = ReturnType<typeof restClient>;

async function setup(t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) {
  const app = await buildTestApp(t, env);
  const acme = await createOrganization(app, { policy: { fee_bank_instant_minor: 150 } });
  const zenith = await createOrganization(app);
  const alice = await createWorker(app, acme);
  const bob = await createWorker(app, zenith);
  const aliceApi = restClient(app, await workerToken(app, alice.personId));
  return { app, acme, zenith, alice, bob, aliceApi };
}

async function accountRow(app: TestApp, id: string) {
  return app.database.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

test('POST /rest/accounts adds a bank account: 200, numbers masked, stored sealed, fees from the policy', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const response = await aliceApi.post('/rest/accounts', bankAccountBody(alice.personId));
  assert.equal(response.statusCode, 200, response.body);
  const { data } = response.json();
  assert.deepEqual(data, {
    type: 'accounts',
    id: data.id,
    attributes: {
      name: 'Everyday checking',
      account_type: 'DEPOSITORY',
      subtype: 'CHECKING',
      verification_status: 'VERIFIED',
      balances: { available: null, current: null, currency: 'USD' },
      capabilities: {
        transfer_destination: [
          { schedule: 'WITHIN_THIRTY_MINUTES', fee: 150, currency: 'USD' },
          { schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' },
        ],
      },
      details: {
        first_name: 'Robin',
        last_name: 'Lee',
        routing_number: 'XXXXX0000',
        account_number: 'XXXXXXXX6789',
      },
    },
    relationships: { person: { data: { type: 'people', id: alice.personId } } },
    links: { self: `${BASE_URL}/rest/accounts/${data.id}` },
  });
  assert.doesNotMatch(response.body, /123456789/);
  const row = await accountRow(app, data.id);
  assert.ok(row.account_number_enc);
  assert.doesNotMatch(JSON.stringify(row.details), /123456789/);
  const derived = new BankAccountSecrets(app.config.masterKey);
  assert.equal(row.number_fingerprint, derived.fingerprint('110000000', '000123456789'));
  assert.doesNotMatch(Buffer.from(row.account_number_enc).toString('latin1'), /123456789/);
  assert.throws(
    () => open(app.config.masterKey, row.account_number_enc!, context(data.id)),
    'not under the bare master key',
  );
  const read = await aliceApi.get(`/rest/accounts/${data.id}`);
  assert.deepEqual(read.json(), response.json());
});

test('type and subtype errors, each with its own code and pointer', async (t) => {
  const { alice, aliceApi } = await setup(t);
  const cases: [Record<string, unknown>, string, string][] = [
    [
      { account_type: 'EARNINGS_BALANCE', subtype: 'ODP' },
      'ACCOUNT_TYPE_INVALID',
      '/data/attributes/account_type',
    ],
    [{ account_type: 'BROKERAGE' }, 'ACCOUNT_TYPE_INVALID', '/data/attributes/account_type'],
    [{ subtype: 'MONEY_MARKET' }, 'ACCOUNT_SUBTYPE_INVALID', '/data/attributes/subtype'],
    [{ subtype: 'ODP' }, 'ACCOUNT_SUBTYPE_INVALID', '/data/attributes/subtype'],
    [{ subtype: 'DEBIT' }, 'ACCOUNT_TYPE_SUBTYPE_MISMATCH', '/data/attributes/subtype'],
    [
      { account_type: 'CARD', subtype: 'SAVINGS' },
      'ACCOUNT_TYPE_SUBTYPE_MISMATCH',
      '/data/attributes/subtype',
    ],
  ];
  for (const [overrides, code, pointer] of cases) {
    const response = await aliceApi.post('/rest/accounts', bankAccountBody(alice.personId, overrides));
    assert.equal(response.statusCode, 400, JSON.stringify(overrides));
    const [error] = response.json().errors;
    assert.equal(error.code, code, JSON.stringify(overrides));
    assert.equal(error.source.pointer, pointer, JSON.stringify(overrides));
  }
});

test('missing fields are MISSING_REQUIRED_FIELD and malformed ones INVALID_FIELDS, with the pointer', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const without = (key: string) => {
    const body = bankAccountBody(alice.personId);
    delete (body.data.attributes.details as Record<string, unknown>)[key];
    return body;
  };
  const withoutAttribute = (key: string) => {
    const body = bankAccountBody(alice.personId);
    delete (body.data.attributes as Record<string, unknown>)[key];
    return body;
  };
  const cases: [unknown, string, string][] = [
    [without('routing_number'), 'MISSING_REQUIRED_FIELD', '/data/attributes/details/routing_number'],
    [without('account_number'), 'MISSING_REQUIRED_FIELD', '/data/attributes/details/account_number'],
    [without('first_name'), 'MISSING_REQUIRED_FIELD', '/data/attributes/details/first_name'],
    [without('last_name'), 'MISSING_REQUIRED_FIELD', '/data/attributes/details/last_name'],
    [withoutAttribute('name'), 'MISSING_REQUIRED_FIELD', '/data/attributes/name'],
    [withoutAttribute('details'), 'MISSING_REQUIRED_FIELD', '/data/attributes/details'],
    [withoutAttribute('account_type'), 'MISSING_REQUIRED_FIELD', '/data/attributes/account_type'],
    [
      { data: { type: 'accounts', attributes: bankAccountBody(alice.personId).data.attributes } },
      'MISSING_REQUIRED_FIELD',
      '/data/relationships',
    ],
    [
      bankAccountBody(alice.personId, {}, { routing_number: '110000001' }),
      'INVALID_FIELDS',
      '/data/attributes/details/routing_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { routing_number: '11000000' }),
      'INVALID_FIELDS',
      '/data/attributes/details/routing_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { routing_number: '021000021' }),
      'INVALID_FIELDS',
      '/data/attributes/details/routing_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { account_number: '1234567' }),
      'INVALID_FIELDS',
      '/data/attributes/details/account_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { account_number: '1'.repeat(18) }),
      'INVALID_FIELDS',
      '/data/attributes/details/account_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { account_number: 12345678 }),
      'INVALID_FIELDS',
      '/data/attributes/details/account_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { account_number: '1234-5678' }),
      'INVALID_FIELDS',
      '/data/attributes/details/account_number',
    ],
    [
      bankAccountBody(alice.personId, {}, { first_name: 'x'.repeat(101) }),
      'INVALID_FIELDS',
      '/data/attributes/details/first_name',
    ],
    [
      bankAccountBody(alice.personId, {}, { first_name: 'Ro\u0000bin' }),
      'INVALID_FIELDS',
      '/data/attributes/details/first_name',
    ],
    [
      bankAccountBody(alice.personId, {}, { nickname: 'main' }),
      'INVALID_PARAMETERS',
      '/data/attributes/details/nickname',
    ],
    [bankAccountBody(alice.personId, { name: '' }), 'INVALID_FIELDS', '/data/attributes/name'],
    [bankAccountBody(alice.personId, { name: 7 }), 'INVALID_FIELDS', '/data/attributes/name'],
    [bankAccountBody(alice.personId, { name: '   ' }), 'INVALID_FIELDS', '/data/attributes/name'],
    [bankAccountBody(alice.personId, { name: '\u00a0\u3000 ' }), 'INVALID_FIELDS', '/data/attributes/name'],
    [bankAccountBody(randomUUID()), 'INVALID_RESOURCE_LINK', '/data/relationships/person/data/id'],
  ];
  for (const [payload, code, pointer] of cases) {
    const response = await aliceApi.post('/rest/accounts', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    const [error] = response.json().errors;
    assert.equal(error.code, code, JSON.stringify(payload));
    assert.equal(error.source.pointer, pointer, JSON.stringify(payload));
    if (/^\s+$/.test(String((payload as { data: { attributes: { name?: unknown } } }).data.attributes.name)))
      assert.match(error.detail, /blank/, 'a blank name is told as blank');
  }
  const rows = await app.database.db
    .selectFrom('accounts')
    .select('id')
    .where('person_id', '=', alice.personId)
    .execute();
  assert.equal(rows.length, 1, 'only the earnings balance: nothing was written');
});

test("another person's id in relationships.person is refused; so is a client token", async (t) => {
  const { app, acme, bob, aliceApi } = await setup(t);
  const response = await aliceApi.post('/rest/accounts', bankAccountBody(bob.personId));
  assert.equal(response.statusCode, 400);
  assert.equal(response.json().errors[0].code, 'INVALID_RESOURCE_LINK');
  const client = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:lookup', 'client:admin'])).token,
  );
  assert.equal((await client.post('/rest/accounts', bankAccountBody(bob.personId))).statusCode, 403);
});

test('DUPLICATE_ACCOUNT for the same numbers on the same person, even at once; fine again after deletion', async (t) => {
  const { app, alice, bob, aliceApi } = await setup(t);
  const attempts = await Promise.all(
    Array.from({ length: 4 }, () => aliceApi.post('/rest/accounts', bankAccountBody(alice.personId))),
  );
  const codes = attempts.map((response) => response.statusCode).sort();
  assert.deepEqual(codes, [200, 400, 400, 400]);
  for (const response of attempts.filter((r) => r.statusCode === 400)) {
    assert.equal(response.json().errors[0].code, 'DUPLICATE_ACCOUNT');
  }
  const savings = await aliceApi.post(
    '/rest/accounts',
    bankAccountBody(alice.personId, { subtype: 'SAVINGS' }),
  );
  assert.equal(savings.json().errors[0].code, 'DUPLICATE_ACCOUNT', 'the numbers decide, not the subtype');
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  assert.equal(
    (await bobApi.post('/rest/accounts', bankAccountBody(bob.personId))).statusCode,
    200,
    'another person may',
  );
  const first = attempts.find((r) => r.statusCode === 200)!.json().data.id;
  assert.equal((await aliceApi.delete(`/rest/accounts/${first}`)).statusCode, 204);
  assert.equal((await aliceApi.post('/rest/accounts', bankAccountBody(alice.personId))).statusCode, 200);
});

test('BANK_ACCOUNT_CREATION_BLOCKED by routing number, or routing number and account prefix', async (t) => {
  const { alice, aliceApi } = await setup(t, { EWA_BANK_ACCOUNT_BLOCK_LIST: '110000000:4444' });
  const blocked = await aliceApi.post(
    '/rest/accounts',
    bankAccountBody(alice.personId, {}, { account_number: '44441234' }),
  );
  assert.equal(blocked.statusCode, 400);
  assert.equal(blocked.json().errors[0].code, 'BANK_ACCOUNT_CREATION_BLOCKED');
  const fine = await aliceApi.post(
    '/rest/accounts',
    bankAccountBody(alice.personId, {}, { account_number: '54441234' }),
  );
  assert.equal(fine.statusCode, 200);
});

test('outside the sandbox: any ABA-valid routing number and 4 to 17 digits', async (t) => {
  const { app, alice } = await setup(t);
  const production = new AccountService(
    app.database.db,
    { ...app.config, env: 'production' },
    await CardTokenKeys.fromConfig(app.config.cards.tokenKeys),
  );
  const caller = {
    kind: 'user' as const,
    personId: alice.personId,
    clientId: 'x',
    scopes: new Set(['user:read_write']),
  };
  const create = (routing: string, account: string) =>
    production.create(
      caller,
      {
        name: 'Bank',
        accountType: 'DEPOSITORY',
        subtype: 'SAVINGS',
        personId: alice.personId,
        details: { first_name: 'Robin', last_name: 'Lee', routing_number: routing, account_number: account },
      },
      new Date(),
    );
  const view = await create('021000021', '1234');
  assert.equal(view.row.details.routing_number, 'XXXXX0021');
  await assert.rejects(create('021000022', '1234'), { code: 'INVALID_FIELDS' });
  await assert.rejects(create('021000021', '123'), { code: 'INVALID_FIELDS' });
});

test('at most EWA_ACCOUNTS_PER_PERSON_MAX bank accounts and cards per person', async (t) => {
  const { alice, aliceApi } = await setup(t, { EWA_ACCOUNTS_PER_PERSON_MAX: '2' });
  for (const number of ['11111111', '22222222']) {
    const response = await aliceApi.post(
      '/rest/accounts',
      bankAccountBody(alice.personId, {}, { account_number: number }),
    );
    assert.equal(response.statusCode, 200);
  }
  const third = await aliceApi.post(
    '/rest/accounts',
    bankAccountBody(alice.personId, {}, { account_number: '33333333' }),
  );
  assert.equal(third.statusCode, 400);
  assert.match(third.json().errors[0].detail, /at most 2/);
});

async function create(api: Api, personId: string, accountNumber: string, subtype = 'CHECKING') {
  const response = await api.post(
    '/rest/accounts',
    bankAccountBody(personId, { subtype }, { account_number: accountNumber }),
  );
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data.id as string;
}

test('GET /rest/accounts for a person: their own accounts, with the three filters alone and combined', async (t) => {
  const { app, alice, bob, aliceApi } = await setup(t);
  const checking = await create(aliceApi, alice.personId, '11111111');
  const savings = await create(aliceApi, alice.personId, '22222222', 'SAVINGS');
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  await create(bobApi, bob.personId, '11111111');
  const list = async (query = '') => {
    const response = await aliceApi.get(`/rest/accounts${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return response
      .json()
      .data.map((account: { id: string }) => account.id)
      .sort();
  };
  const q = encodeURIComponent;
  assert.deepEqual(await list(), [alice.balanceAccountId, checking, savings].sort());
  assert.deepEqual(await list('?filter='), await list(), 'an empty free-form filter filters nothing');
  assert.deepEqual(await list(`?${q('filter[account_type]')}=DEPOSITORY`), [checking, savings].sort());
  assert.deepEqual(await list(`?${q('filter[account_type]')}=EARNINGS_BALANCE`), [alice.balanceAccountId]);
  assert.deepEqual(await list(`?${q('filter[subtype]')}=SAVINGS`), [savings]);
  assert.deepEqual(
    await list(`?${q('filter[person.id]')}=${alice.personId}&${q('filter[subtype]')}=CHECKING`),
    [checking],
  );
  assert.deepEqual(
    await list(`?${q('filter[person.id]')}=${bob.personId}`),
    [],
    "another person's filter finds nothing",
  );
  assert.deepEqual(await list(`?${q('filter[account_type]')}=CARD&${q('filter[subtype]')}=CHECKING`), []);
  const subtypeFilter = referenceFacts().components.parameters!['filter.account_subtype'] as {
    schema: { codeNames: string[] };
  };
  for (const subtype of subtypeFilter.schema.codeNames) {
    const expected =
      { ODP: [alice.balanceAccountId], CHECKING: [checking], SAVINGS: [savings] }[subtype] ?? [];
    assert.deepEqual(
      await list(`?${q('filter[subtype]')}=${subtype}`),
      expected,
      `every subtype the description names may be filtered on (${subtype})`,
    );
  }
  assert.deepEqual(
    await list(`?filter=${q('subtype:"SAVINGS" OR account_type:"EARNINGS_BALANCE"')}`),
    [alice.balanceAccountId, savings].sort(),
  );
  const bad = await aliceApi.get(`/rest/accounts?${q('filter[account_type]')}=BROKERAGE`);
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().errors[0].code, 'INVALID_FILTER_VALUE');
  // The free-form filter's values are checked as filter[...]'s are, naming filter; a UUID matches in any case.
  for (const filter of [
    'account_type:"NOPE"',
    'subtype:"savings"',
    'person.id:"nope"',
    'name~"x" OR account_type:""',
  ]) {
    const refused = await aliceApi.get(`/rest/accounts?filter=${q(filter)}`);
    assert.equal(refused.statusCode, 400, filter);
    assert.equal(refused.json().errors[0].code, 'INVALID_FILTER_VALUE', filter);
    assert.deepEqual(refused.json().errors[0].source, { parameter: 'filter' }, filter);
  }
  assert.deepEqual(
    await list(`?filter=${q(`person.id:"${alice.personId.toUpperCase()}" AND subtype:"SAVINGS"`)}`),
    [savings],
  );
  const balance = (await aliceApi.get(`/rest/accounts/${alice.balanceAccountId}`)).json().data.attributes;
  assert.deepEqual(balance.balances, { available: 0, current: 0, currency: 'USD' });
  assert.deepEqual(balance.capabilities.transfer_destination, []);
  assert.deepEqual(balance.details, {});
});

test('a client token: filter[person.id] required, only earnings balances of its organizations', async (t) => {
  const { app, acme, alice, bob, aliceApi } = await setup(t);
  const checking = await create(aliceApi, alice.personId, '11111111');
  const api = restClient(
    app,
    (await linkedClientToken(app, [acme], ['client:lookup', 'client:admin'])).token,
  );
  const missing = await api.get('/rest/accounts');
  assert.equal(missing.statusCode, 400);
  assert.equal(missing.json().errors[0].source.parameter, 'filter[person.id]');
  const q = encodeURIComponent('filter[person.id]');
  const own = await api.get(`/rest/accounts?${q}=${alice.personId}`);
  assert.equal(own.statusCode, 200);
  assert.deepEqual(
    own.json().data.map((account: { id: string }) => account.id),
    [alice.balanceAccountId],
  );
  const other = await api.get(`/rest/accounts?${q}=${bob.personId}`);
  assert.deepEqual(other.json().data, []);
  assert.equal((await api.get(`/rest/accounts/${alice.balanceAccountId}`)).statusCode, 200);
  for (const id of [checking, bob.balanceAccountId!, randomUUID(), 'x']) {
    const response = await api.get(`/rest/accounts/${id}`);
    assert.equal(response.statusCode, 404, id);
    assert.equal(response.json().errors[0].code, 'RECORD_NOT_FOUND');
  }
});

test("a person cannot read or delete another person's account", async (t) => {
  const { app, alice, bob, aliceApi } = await setup(t);
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  const bobs = await create(bobApi, bob.personId, '11111111');
  assert.equal((await aliceApi.get(`/rest/accounts/${bobs}`)).statusCode, 404);
  assert.equal((await aliceApi.delete(`/rest/accounts/${bobs}`)).statusCode, 404);
  assert.equal((await accountRow(app, bobs)).deleted_at, null);
  assert.equal((await aliceApi.get(`/rest/accounts/${alice.balanceAccountId}`)).statusCode, 200);
});

test('DELETE: 204 and gone from reads, the row kept; earnings balance, job default and pending transfer refused', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const balance = await aliceApi.delete(`/rest/accounts/${alice.balanceAccountId}`);
  assert.equal(balance.statusCode, 400);
  assert.equal(balance.json().errors[0].code, 'INVALID_PARAMETERS');
  assert.match(balance.json().errors[0].detail, /EARNINGS_BALANCE/);

  const defaulted = await create(aliceApi, alice.personId, '11111111');
  const patch = await aliceApi.patch(`/rest/jobs/${alice.jobId}`, {
    data: {
      type: 'jobs',
      id: alice.jobId,
      relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: defaulted } } },
    },
  });
  assert.equal(patch.statusCode, 200);
  const refused = await aliceApi.delete(`/rest/accounts/${defaulted}`);
  assert.equal(refused.statusCode, 400);
  assert.equal(refused.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  assert.match(refused.json().errors[0].detail, new RegExp(alice.jobId));

  const destination = await create(aliceApi, alice.personId, '22222222');
  const transferId = randomUUID();
  await app.database.db
    .insertInto('transfers')
    .values({
      id: transferId,
      person_id: alice.personId,
      origin_account_id: alice.balanceAccountId,
      destination_account_id: destination,
      amount_minor: 1000,
      currency: 'USD',
      schedule: 'NEXT_BUSINESS_DAY',
      submitted_at: new Date(),
    })
    .execute();
  const pending = await aliceApi.delete(`/rest/accounts/${destination}`);
  assert.equal(pending.statusCode, 400);
  assert.equal(pending.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  assert.match(pending.json().errors[0].detail, new RegExp(transferId));

  const plain = await create(aliceApi, alice.personId, '33333333');
  const deleted = await aliceApi.delete(`/rest/accounts/${plain}`);
  assert.equal(deleted.statusCode, 204);
  assert.equal(deleted.body, '');
  assert.ok((await accountRow(app, plain)).deleted_at, 'soft delete: the row stays for its history');
  assert.equal((await aliceApi.get(`/rest/accounts/${plain}`)).statusCode, 404);
  assert.equal((await aliceApi.delete(`/rest/accounts/${plain}`)).statusCode, 404, 'deleting twice');
  const readOnly = restClient(app, await workerToken(app, alice.personId, ['user:read']));
  assert.equal((await readOnly.delete(`/rest/accounts/${destination}`)).statusCode, 403);
});

test('DELETE of a default: a card beside a bank account goes; a job not ACTIVATED lets its default go once paid', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const { db } = app.database;
  const bank = await create(aliceApi, alice.personId, '11111111');
  const card = randomUUID();
  await db
    .insertInto('accounts')
    .values({
      id: card,
      person_id: alice.personId,
      account_type: 'CARD',
      subtype: 'DEBIT',
      name: 'Debit card',
      details: '{}',
    })
    .execute();
  const patch = await aliceApi.patch(`/rest/jobs/${alice.jobId}`, {
    data: {
      type: 'jobs',
      id: alice.jobId,
      relationships: {
        direct_deposit_default_depository: { data: { type: 'accounts', id: bank } },
        direct_deposit_default_card: { data: { type: 'accounts', id: card } },
      },
    },
  });
  assert.equal(patch.statusCode, 200, patch.body);
  const job = () =>
    db
      .selectFrom('jobs')
      .select([
        'direct_deposit_default_depository_id as depository',
        'direct_deposit_default_card_id as card',
        'direct_deposit_status as status',
      ])
      .where('id', '=', alice.jobId)
      .executeTakeFirstOrThrow();

  // The card is the fallback of the bank account: it may go, and the job keeps paying the bank account.
  assert.equal((await aliceApi.delete(`/rest/accounts/${card}`)).statusCode, 204);
  assert.deepEqual(await job(), { depository: bank, card: null, status: 'SETUP_COMPLETE' });
  const sole = await aliceApi.delete(`/rest/accounts/${bank}`);
  assert.equal(sole.statusCode, 400, 'the sole default of an ACTIVATED job stays until another is set');
  assert.match(sole.json().errors[0].detail, /set another default first/);

  // Deactivated, the job's default can no longer be changed: the account goes once nothing is left to pay into it.
  const deactivate = await aliceApi.patch(`/rest/jobs/${alice.jobId}`, {
    data: { type: 'jobs', id: alice.jobId, attributes: { activation_status: 'DEACTIVATED' } },
  });
  assert.equal(deactivate.statusCode, 200, deactivate.body);
  const paycheckId = randomUUID();
  await db
    .insertInto('paychecks')
    .values({
      id: paycheckId,
      job_id: alice.jobId,
      person_id: alice.personId,
      status: 'PROCESSING',
      pay_period_starts_at: new Date('2026-11-09T05:00:00Z'),
      pay_period_ends_at: new Date('2026-11-22T05:00:00Z'),
      deposit_expected_at: new Date('2026-11-27T05:00:00Z'),
    })
    .execute();
  const unpaid = await aliceApi.delete(`/rest/accounts/${bank}`);
  assert.equal(unpaid.statusCode, 400);
  assert.equal(unpaid.json().errors[0].code, 'INVALID_RESOURCE_STATE');
  assert.match(
    unpaid.json().errors[0].detail,
    new RegExp(
      `job ${alice.jobId}, which is DEACTIVATED, and its paycheck ${paycheckId} \\(deposit expected 2026-11-27T05:00:00.000Z\\)`,
    ),
  );
  assert.equal((await job()).depository, bank, 'a refusal changes nothing');
  await db.updateTable('paychecks').set({ status: 'DEPOSITED' }).where('id', '=', paycheckId).execute();
  assert.equal((await aliceApi.delete(`/rest/accounts/${bank}`)).statusCode, 204);
  assert.deepEqual(await job(), { depository: null, card: null, status: 'SETUP_REQUIRED' });
});

test('the earnings balance of a job not ACTIVATED shows nothing available, as an advance from it is refused', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, { earnedMinor: 40_000, now: FIXED_NOW });
  const balances = async () => {
    const response = await worker.api.get(`/rest/accounts/${worker.balanceAccountId}`);
    assert.equal(response.statusCode, 200, response.body);
    const listed = (await worker.api.get('/rest/accounts')).json().data as {
      id: string;
      attributes: { balances: unknown };
    }[];
    const inList = listed.find((account) => account.id === worker.balanceAccountId)?.attributes.balances;
    assert.deepEqual(
      inList,
      response.json().data.attributes.balances,
      'the list shows what the account shows',
    );
    return response.json().data.attributes.balances;
  };
  const active = await balances();
  assert.ok(active.available > 0, JSON.stringify(active));
  assert.equal(active.available, active.current);

  const deactivated = await worker.api.patch(`/rest/jobs/${worker.jobId}`, {
    data: { type: 'jobs', id: worker.jobId, attributes: { activation_status: 'DEACTIVATED' } },
  });
  assert.equal(deactivated.statusCode, 200, deactivated.body);
  const refused = await postTransfer(app, worker.token, advanceBody(worker));
  assert.equal(refused.statusCode, 400, refused.body);
  assert.equal(firstError(refused).code, 'INELIGIBLE_ORIGIN');
  // What was earned stays current; none of it can be withdrawn.
  assert.deepEqual(await balances(), { available: 0, current: active.current, currency: 'USD' });
});
