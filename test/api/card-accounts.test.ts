import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { open } from '../../src/crypto/secret-box.ts';
import { type CardData, CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker, restClient, workerToken } from '../helpers/factories.ts';

const CARD: CardData = {
  card_number: '4111111111111111',
  expiration_month: '02',
  expiration_year: '2030',
  first_name: 'Robin',
  last_name: 'Lee',
  address_line_one: '1 Main St',
  address_city: 'Albany',
  address_state: 'NY',
  address_zip_code: '12207',
  address_country: 'US',
};

async function setup(t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) {
  const app = await buildTestApp(t, env);
  const organization = await createOrganization(app);
  const alice = await createWorker(app, organization);
  const bob = await createWorker(app, organization);
  const keys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  const tokenFor = async (card: Partial<CardData> = {}, at = new Date()) =>
    (await keys.issue({ ...CARD, ...card }, at, app.config.cards.tokenTtlSeconds)).token;
  const aliceApi = restClient(app, await workerToken(app, alice.personId));
  const bobApi = restClient(app, await workerToken(app, bob.personId));
  return { app, alice, bob, tokenFor, aliceApi, bobApi };
}

function cardBody(personId: string, token: string, details: Record<string, unknown> = {}) {
  const { card_number: _number, ...rest } = CARD;
  return {
    data: {
      type: 'accounts',
      attributes: {
        name: 'My debit card',
        account_type: 'CARD',
        subtype: 'DEBIT',
        details: { ...rest, token, issuer: '411111', ...details },
      },
      relationships: { person: { data: { type: 'people', id: personId } } },
    },
  };
}

async function vaultRows(app: TestApp) {
  return app.database.db.selectFrom('card_vault').selectAll().execute();
}

test('POST /rest/accounts with a card token: the card account, its number only sealed in the vault', async (t) => {
  const { app, alice, tokenFor, aliceApi } = await setup(t);
  const response = await aliceApi.post('/rest/accounts', cardBody(alice.personId, await tokenFor()));
  assert.equal(response.statusCode, 200, response.body);
  const { data } = response.json();
  assert.deepEqual(data.attributes, {
    name: 'My debit card',
    account_type: 'CARD',
    subtype: 'DEBIT',
    verification_status: 'VERIFIED',
    balances: { available: null, current: null, currency: 'USD' },
    capabilities: {
      transfer_destination: [
        { schedule: 'WITHIN_THIRTY_MINUTES', fee: 299, currency: 'USD' },
        { schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' },
      ],
    },
    details: {
      first_name: 'Robin',
      last_name: 'Lee',
      last_four: '1111',
      issuer: '411111',
      expiration_month: '02',
      expiration_year: '2030',
    },
  });
  assert.doesNotMatch(response.body, /4111111111111111/);
  const account = await app.database.db
    .selectFrom('accounts')
    .selectAll()
    .where('id', '=', data.id)
    .executeTakeFirstOrThrow();
  assert.doesNotMatch(JSON.stringify(account), /4111111111111111/);
  const [vaulted] = await vaultRows(app);
  assert.equal(account.vault_card_id, vaulted!.id);
  assert.equal(vaulted!.key_id, app.config.cards.vaultKeys[0]!.kid);
  assert.doesNotMatch(Buffer.from(vaulted!.pan_enc).toString('latin1'), /4111111111111111/);
  const vaultKey = app.config.cards.vaultKeys[0]!.key;
  assert.equal(open(vaultKey, vaulted!.pan_enc, `card-vault:${vaulted!.id}`).toString(), '4111111111111111');
  const read = await aliceApi.get(`/rest/accounts/${data.id}`);
  assert.deepEqual(read.json(), response.json());
  assert.equal((await aliceApi.delete(`/rest/accounts/${data.id}`)).statusCode, 204);
});

test('a card token is good for one attempt: a second use is INVALID_CARD_TOKEN, even after a failed first', async (t) => {
  const { alice, bob, tokenFor, aliceApi, bobApi } = await setup(t);
  const token = await tokenFor();
  assert.equal((await aliceApi.post('/rest/accounts', cardBody(alice.personId, token))).statusCode, 200);
  for (const [api, personId] of [
    [aliceApi, alice.personId],
    [bobApi, bob.personId],
  ] as const) {
    const again = await api.post('/rest/accounts', cardBody(personId, token));
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().errors[0].code, 'INVALID_CARD_TOKEN');
    assert.equal(again.json().errors[0].source.pointer, '/data/attributes/details/token');
  }
  const mismatched = await tokenFor();
  const first = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, mismatched, { last_name: 'Other' }),
  );
  assert.equal(first.json().errors[0].code, 'INVALID_FIELDS');
  const retry = await aliceApi.post('/rest/accounts', cardBody(alice.personId, mismatched));
  assert.equal(retry.json().errors[0].code, 'INVALID_CARD_TOKEN', 'the failed attempt spent the token');
});

test('tampered, expired, foreign and malformed tokens are INVALID_CARD_TOKEN', async (t) => {
  const { alice, tokenFor, aliceApi } = await setup(t);
  const token = await tokenFor();
  const middle = Math.floor(token.length / 2);
  const flipped = `${token.slice(0, middle)}${token[middle] === 'A' ? 'B' : 'A'}${token.slice(middle + 1)}`;
  const expired = await tokenFor({}, new Date(Date.now() - 16 * 60_000));
  const otherKeys = await CardTokenKeys.fromConfig([{ kid: 'm1', key: Buffer.alloc(32, 7) }]);
  const foreign = (await otherKeys.issue(CARD, new Date(), 900)).token;
  for (const [label, candidate] of [
    ['one character changed', flipped],
    ['expired', expired],
    ['another server', foreign],
    ['not a token', 'abc.def'],
  ] as const) {
    const response = await aliceApi.post('/rest/accounts', cardBody(alice.personId, candidate));
    assert.equal(response.statusCode, 400, label);
    assert.equal(response.json().errors[0].code, 'INVALID_CARD_TOKEN', label);
  }
});

test('details must match the token; missing and malformed details name the field', async (t) => {
  const { app, alice, tokenFor, aliceApi } = await setup(t);
  const vaultedBefore = (await vaultRows(app)).length;
  const cases: [Record<string, unknown>, string, string][] = [
    [{ first_name: 'Someone' }, 'INVALID_FIELDS', 'first_name'],
    [{ expiration_month: '03' }, 'INVALID_FIELDS', 'expiration_month'],
    [{ expiration_year: '2031' }, 'INVALID_FIELDS', 'expiration_year'],
    [{ issuer: '555555' }, 'INVALID_FIELDS', 'issuer'],
    [{ issuer: '41' }, 'INVALID_FIELDS', 'issuer'],
    [{ address_state: 'ny' }, 'INVALID_FIELDS', 'address_state'],
    [{ address_city: undefined }, 'MISSING_REQUIRED_FIELD', 'address_city'],
    [{ token: undefined }, 'MISSING_REQUIRED_FIELD', 'token'],
    [{ token: 12 }, 'INVALID_FIELDS', 'token'],
    // A detail a CARD account does not have (the number never comes here) is an unknown member.
    [{ card_number: '4111111111111111' }, 'INVALID_PARAMETERS', 'card_number'],
  ];
  for (const [details, code, field] of cases) {
    const response = await aliceApi.post(
      '/rest/accounts',
      cardBody(alice.personId, await tokenFor(), details),
    );
    assert.equal(response.statusCode, 400, JSON.stringify(details));
    const [error] = response.json().errors;
    assert.equal(error.code, code, JSON.stringify(details));
    assert.equal(error.source.pointer, `/data/attributes/details/${field}`, JSON.stringify(details));
  }
  const sameNameOtherCase = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, await tokenFor(), { first_name: 'ROBIN ' }),
  );
  assert.equal(sameNameOtherCase.statusCode, 200, 'names compare without case and outer spaces');
  assert.equal((await vaultRows(app)).length, vaultedBefore + 1, 'nothing vaulted for a refused card');
});

test('DUPLICATE_ACCOUNT on the same person; test cards may be on many people; a real card on one', async (t) => {
  const { app, alice, bob, tokenFor, aliceApi, bobApi } = await setup(t);
  const vaultedBefore = (await vaultRows(app)).length;
  assert.equal(
    (await aliceApi.post('/rest/accounts', cardBody(alice.personId, await tokenFor()))).statusCode,
    200,
  );
  const duplicate = await aliceApi.post('/rest/accounts', cardBody(alice.personId, await tokenFor()));
  assert.equal(duplicate.statusCode, 400);
  assert.equal(duplicate.json().errors[0].code, 'DUPLICATE_ACCOUNT');
  assert.equal(
    (await bobApi.post('/rest/accounts', cardBody(bob.personId, await tokenFor()))).statusCode,
    200,
  );
  // A card that is not one of the sandbox's: one person only.
  const real = { card_number: '4242424242424242', issuer: '424242' };
  const { issuer: _issuer, ...realCard } = real;
  const first = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, await tokenFor(realCard), { issuer: real.issuer }),
  );
  assert.equal(first.statusCode, 200, first.body);
  const other = await bobApi.post(
    '/rest/accounts',
    cardBody(bob.personId, await tokenFor(realCard), { issuer: real.issuer }),
  );
  assert.equal(other.statusCode, 400);
  assert.equal(other.json().errors[0].code, 'INVALID_DEBIT_CARD');
  assert.equal((await vaultRows(app)).length, vaultedBefore + 3);
});

test('DEBIT_CARD_CREATION_BLOCKED by BIN; INVALID_DEBIT_CARD once the card has expired', async (t) => {
  const { alice, tokenFor, aliceApi } = await setup(t, { EWA_CARD_BIN_BLOCK_LIST: '555555' });
  const blocked = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, await tokenFor({ card_number: '5555555555554444' }), { issuer: '555555' }),
  );
  assert.equal(blocked.statusCode, 400);
  assert.equal(blocked.json().errors[0].code, 'DEBIT_CARD_CREATION_BLOCKED');
  const now = new Date();
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const expiredCard = {
    expiration_month: String(lastMonth.getUTCMonth() + 1).padStart(2, '0'),
    expiration_year: String(lastMonth.getUTCFullYear()),
  };
  const expired = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, await tokenFor(expiredCard), expiredCard),
  );
  assert.equal(expired.statusCode, 400);
  assert.equal(expired.json().errors[0].code, 'INVALID_DEBIT_CARD');
});

test('end to end: tokenize over HTTP, add the card, read it, delete it, and the token is spent', async (t) => {
  const { app, alice, aliceApi } = await setup(t);
  const tokenized = await app.payments.inject({
    method: 'POST',
    url: '/v2/cards/generic',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ ...CARD, card_number: '5555555555554444', cvv: '123' }),
  });
  assert.equal(tokenized.statusCode, 200, tokenized.body);
  const { token } = tokenized.json();
  const created = await aliceApi.post(
    '/rest/accounts',
    cardBody(alice.personId, token, { issuer: '555555' }),
  );
  assert.equal(created.statusCode, 200, created.body);
  const { id, attributes } = created.json().data;
  assert.equal(attributes.details.last_four, '4444');
  assert.equal(attributes.details.issuer, '555555');
  const listed = await aliceApi.get(`/rest/accounts?${encodeURIComponent('filter[account_type]')}=CARD`);
  assert.deepEqual(
    listed.json().data.map((account: { id: string }) => account.id),
    [id],
  );
  assert.equal((await aliceApi.delete(`/rest/accounts/${id}`)).statusCode, 204);
  assert.equal((await aliceApi.get(`/rest/accounts/${id}`)).statusCode, 404);
  const reused = await aliceApi.post('/rest/accounts', cardBody(alice.personId, token, { issuer: '555555' }));
  assert.equal(reused.statusCode, 400);
  assert.equal(reused.json().errors[0].code, 'INVALID_CARD_TOKEN');
  const logged = JSON.stringify(app.logs);
  assert.doesNotMatch(logged, /5555555555554444/);
  assert.doesNotMatch(logged, new RegExp(token.slice(-40).replace(/[-_]/g, '.')));
});

test('two people adding one real card at the same moment: one gets it, the other INVALID_DEBIT_CARD', async (t) => {
  const { app, alice, bob, tokenFor, aliceApi, bobApi } = await setup(t);
  const real = { card_number: '4000056655665556' };
  const [first, second] = await Promise.all([
    aliceApi.post('/rest/accounts', cardBody(alice.personId, await tokenFor(real), { issuer: '400005' })),
    bobApi.post('/rest/accounts', cardBody(bob.personId, await tokenFor(real), { issuer: '400005' })),
  ]);
  const statuses = [first.statusCode, second.statusCode].sort();
  assert.deepEqual(statuses, [200, 400], `${first.body}\n${second.body}`);
  const refused = first.statusCode === 400 ? first : second;
  assert.equal(refused.json().errors[0].code, 'INVALID_DEBIT_CARD');
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from accounts
    where account_type = 'CARD' and deleted_at is null
      and person_id in (${alice.personId}::uuid, ${bob.personId}::uuid)`.execute(app.database.db);
  assert.equal(rows[0]!.n, 1);
});
