import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { setRule } from '../../src/compliance/rule-store.ts';
import { stateRules } from '../../src/compliance/state-rules.ts';
import { lockPeople } from '../../src/db/lock-order.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { publishDocument } from '../../src/disclosures/document-store.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import {
  advanceBody,
  createPaidWorker,
  firstError,
  type PaidWorker,
  postTransfer,
} from '../helpers/money.ts';
import { onPostgres, openTwoHandles } from '../helpers/test-database.ts';

/**
 * Disclosures through HTTP: a person of a state whose rules ask for a disclosure before the first advance is
 * refused DISCLOSURE_REQUIRED until they accept the current version; a new version asks again; Utah's each-request
 * acknowledgement; people of other states are never asked.
 */

const DEFAULT_DOCUMENT = 'd15c1051-0000-4000-8000-000000000001';
const UTAH_DOCUMENT = 'd15c1051-0000-4000-8000-000000000002';

async function workerIn(app: TestApp, state: string): Promise<PaidWorker> {
  const worker = await createPaidWorker(app, {
    policy: { daily_transfer_count_max: 50 },
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: state })
    .where('id', '=', worker.personId)
    .execute();
  return worker;
}

async function advance(
  app: TestApp,
  worker: PaidWorker,
  attributes: Record<string, unknown> = {},
  meta?: unknown,
) {
  const body = advanceBody(worker, attributes) as { data: Record<string, unknown> };
  if (meta !== undefined) body.data.meta = meta;
  const response = await postTransfer(app, worker.token, body);
  return {
    status: response.statusCode,
    code: response.statusCode === 200 ? undefined : firstError(response).code,
    response,
  };
}

async function disclosures(worker: PaidWorker) {
  const response = await worker.api.get(`/rest/people/${worker.personId}/disclosures`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json().data as {
    id: string;
    attributes: { version: number; accepted: boolean; accepted_at: string | null };
  }[];
}

function accept(worker: PaidWorker, id: string) {
  return worker.api.post(`/rest/people/${worker.personId}/disclosure_acceptances`, {
    data: {
      type: 'disclosure_acceptances',
      relationships: { disclosure: { data: { type: 'disclosures', id } } },
    },
  });
}

test('refused until the current version is accepted; a new version is refused again until accepted', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'CT');

  for (const preview of [true, false]) {
    const refused = await advance(app, worker, { preview });
    assert.equal(refused.status, 400, refused.response.body);
    assert.equal(refused.code, 'DISCLOSURE_REQUIRED');
    const detail = firstError(refused.response).detail as string;
    assert.match(detail, new RegExp(`GET /rest/people/${worker.personId}/disclosures`));
    assert.match(detail, /CT-DISCLOSURE/);
  }
  const [document] = await disclosures(worker);
  assert.equal(document?.id, DEFAULT_DOCUMENT);
  assert.equal(document.attributes.accepted, false);
  assert.equal(document.attributes.accepted_at, null);

  const first = await accept(worker, DEFAULT_DOCUMENT);
  assert.equal(first.statusCode, 201, first.body);
  const again = await accept(worker, DEFAULT_DOCUMENT);
  assert.equal(again.statusCode, 200, again.body);
  assert.deepEqual(again.json(), first.json(), 'accepting twice gives the same acceptance');
  const stored = await app.database.db
    .selectFrom('disclosure_acceptances')
    .selectAll()
    .where('person_id', '=', worker.personId)
    .execute();
  assert.equal(stored.length, 1);
  assert.equal(stored[0]?.version, 1);
  assert.ok(stored[0]?.client_id, 'the OAuth client of the token is recorded');
  assert.ok(stored[0]?.ip_address, 'the IP address is recorded');
  assert.equal((await disclosures(worker))[0]?.attributes.accepted, true);
  assert.equal((await advance(app, worker)).status, 200);

  // A version of Connecticut's own: a material change, the acceptance of the default no longer counts.
  const connecticut = await publishDocument(
    app.database.db,
    {
      state: 'CT',
      title: 'Connecticut terms',
      body: 'Fees, the free option, no recourse, cancel any time.',
      effectiveFrom: undefined,
    },
    new Date(FIXED_NOW.getTime() - 1000),
  );
  assert.equal((await advance(app, worker, { amount: 2001 })).code, 'DISCLOSURE_REQUIRED');
  const old = await accept(worker, DEFAULT_DOCUMENT);
  assert.equal(old.statusCode, 400, old.body);
  assert.equal(firstError(old).source?.pointer, '/data/relationships/disclosure/data/id');
  assert.equal((await accept(worker, connecticut.id)).statusCode, 201);
  assert.equal((await advance(app, worker, { amount: 2002 })).status, 200);

  const second = await publishDocument(
    app.database.db,
    { state: 'CT', title: 'Connecticut terms', body: 'Version two.', effectiveFrom: undefined },
    new Date(FIXED_NOW.getTime() - 500),
  );
  assert.equal(second.version, 2);
  assert.equal((await advance(app, worker, { amount: 2003 })).code, 'DISCLOSURE_REQUIRED');
  assert.equal((await accept(worker, second.id)).statusCode, 201);
  assert.equal((await advance(app, worker, { amount: 2003 })).status, 200);
});

test('Utah: its own document, and each transfer carries the acknowledgement of its terms; the preview does not', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'UT');
  const [document] = await disclosures(worker);
  assert.equal(document?.id, UTAH_DOCUMENT);
  assert.equal((await accept(worker, UTAH_DOCUMENT)).statusCode, 201);

  assert.equal((await advance(app, worker, { preview: true })).status, 200, 'the preview shows the terms');
  const bare = await advance(app, worker);
  assert.equal(bare.code, 'DISCLOSURE_REQUIRED');
  assert.equal(firstError(bare.response).source?.pointer, '/data/meta/disclosure_acknowledged');
  assert.equal(
    (await advance(app, worker, {}, { disclosure_acknowledged: false })).code,
    'DISCLOSURE_REQUIRED',
  );
  const acknowledged = await advance(app, worker, {}, { disclosure_acknowledged: true, other: 'ignored' });
  assert.equal(acknowledged.status, 200, acknowledged.response.body);
});

test('a person of a state without disclosure rules is never asked', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'NY');
  assert.deepEqual(await disclosures(worker), []);
  assert.equal((await advance(app, worker)).status, 200);
  assert.equal((await advance(app, worker, { amount: 6000, preview: true })).status, 200);
  const refused = await accept(worker, DEFAULT_DOCUMENT);
  assert.equal(refused.statusCode, 400, 'nothing to accept where nothing is asked');
  assert.equal(firstError(refused).source?.pointer, '/data/relationships/disclosure/data/id');
});

test('bad input on both operations is 400 naming the field, or 404 for another person, never 500', async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'KS');
  const other = await workerIn(app, 'KS');
  const path = `/rest/people/${worker.personId}/disclosure_acceptances`;
  const cases: [unknown, string][] = [
    [{}, '/data'],
    [{ data: { type: 'disclosure_acceptances' } }, '/data/relationships'],
    [
      {
        data: {
          type: 'nope',
          relationships: { disclosure: { data: { type: 'disclosures', id: DEFAULT_DOCUMENT } } },
        },
      },
      '/data/type',
    ],
    [
      {
        data: {
          type: 'disclosure_acceptances',
          relationships: { disclosure: { data: { type: 'disclosures', id: 'x' } } },
        },
      },
      '/data/relationships/disclosure/data/id',
    ],
    [
      {
        data: {
          type: 'disclosure_acceptances',
          relationships: { disclosure: { data: { type: 'disclosures', id: crypto.randomUUID() } } },
        },
      },
      '/data/relationships/disclosure/data/id',
    ],
    [
      {
        data: {
          type: 'disclosure_acceptances',
          extra: 1,
          relationships: { disclosure: { data: { type: 'disclosures', id: DEFAULT_DOCUMENT } } },
        },
      },
      '/data/extra',
    ],
  ];
  for (const [body, pointer] of cases) {
    const response = await worker.api.post(path, body);
    assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
    assert.equal(firstError(response).source?.pointer, pointer, JSON.stringify(body));
  }
  for (const url of [`/rest/people/${other.personId}/disclosures`, '/rest/people/not-a-uuid/disclosures']) {
    assert.equal((await worker.api.get(url)).statusCode, 404, url);
  }
  const elsewhere = await worker.api.post(`/rest/people/${other.personId}/disclosure_acceptances`, {
    data: {
      type: 'disclosure_acceptances',
      relationships: { disclosure: { data: { type: 'disclosures', id: DEFAULT_DOCUMENT } } },
    },
  });
  assert.equal(elsewhere.statusCode, 404);
});

test('an acceptance racing two advances: each advance sees it or not, never half (the person lock)', async (t) => {
  const app = await buildTestApp(t);
  const worker = await workerIn(app, 'WI');
  const [first, acceptance, second] = await Promise.all([
    advance(app, worker, { amount: 5000 }),
    accept(worker, DEFAULT_DOCUMENT),
    advance(app, worker, { amount: 5001 }),
  ]);
  assert.equal(acceptance.statusCode, 201, acceptance.body);
  const acceptedAt = new Date(acceptance.json().data.attributes.accepted_at).getTime();
  for (const answer of [first, second]) {
    if (answer.status === 200) {
      const submitted = new Date(answer.response.json().data.attributes.submitted_at ?? 0).getTime();
      assert.ok(submitted >= acceptedAt, 'an advance that passed saw the acceptance committed before it');
    } else assert.equal(answer.code, 'DISCLOSURE_REQUIRED');
  }
  assert.equal((await advance(app, worker, { amount: 2002 })).status, 200);
});

test('an advance that waits for the person lock sees the acceptance committed meanwhile, and one before it does not', {
  skip: !onPostgres && 'the embedded database runs one transaction at a time, so no advance waits for a lock',
}, async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  const worker = await workerIn(app, 'KS');
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => {
    locked = resolve;
  });
  // An acceptance in flight: the person's lock taken, the row written, not committed yet.
  const acceptance = withTransaction(app.database.db, async (tx) => {
    await lockPeople(tx, [worker.personId]);
    await tx
      .insertInto('disclosure_acceptances')
      .values({
        id: crypto.randomUUID(),
        person_id: worker.personId,
        document_id: DEFAULT_DOCUMENT,
        version: 1,
        client_id: null,
        ip_address: null,
        accepted_at: FIXED_NOW,
      })
      .execute();
    locked();
    await held;
  });
  await lockTaken;
  const waiting = advance(app, worker, { amount: 2000 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  release();
  await acceptance;
  const answer = await waiting;
  assert.equal(answer.status, 200, answer.response.body);
});

test("a disclosure rule added by the operator applies from the next advance, though the process's reads left its state out", async (t) => {
  const app = await buildTestApp(t, {}, { now: () => FIXED_NOW });
  t.after(async () => {
    await app.database.db.deleteFrom('compliance_rule_overrides').execute();
    await sql`update app_settings set value = to_jsonb((value #>> '{}')::bigint + 1)
      where key = 'compliance_rules_version'`.execute(app.database.db);
  });
  const worker = await workerIn(app, 'NY');
  // The process has read the rules: New York is not among the states whose disclosure it reads.
  assert.equal((await advance(app, worker, { amount: 2000 })).status, 200);
  await setRule(
    app.database.db,
    stateRules(),
    'NY-DISCLOSURE',
    {
      state: 'NY',
      kind: 'DISCLOSURE_BEFORE_FIRST_TRANSFER',
      params: {},
      effective_from: '2025-01-01',
      source: 'Operator decision',
    },
    'test',
  );
  const refused = await advance(app, worker, { amount: 2001 });
  assert.equal(refused.code, 'DISCLOSURE_REQUIRED');
  // Read again under the lock once the newer rules asked for it: the document is named, not missing.
  assert.match(firstError(refused.response).detail as string, new RegExp(DEFAULT_DOCUMENT));
  assert.equal((await accept(worker, DEFAULT_DOCUMENT)).statusCode, 201);
  assert.equal((await advance(app, worker, { amount: 2001 })).status, 200);
});

test('publications of one state at the same moment, from two sessions, each get the next version; none fails', async (t) => {
  const [first, second] = await openTwoHandles(t);
  const published = await Promise.all(
    Array.from({ length: 8 }, (_, index) =>
      publishDocument(
        index % 2 === 0 ? first : second,
        { state: 'KS', title: `Terms ${index}`, body: 'The terms.', effectiveFrom: undefined },
        FIXED_NOW,
      ),
    ),
  );
  assert.deepEqual(
    published.map((document) => document.version).sort((a, b) => a - b),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  const stored = await first
    .selectFrom('disclosure_documents')
    .select('version')
    .where('state', '=', 'KS')
    .orderBy('version')
    .execute();
  assert.deepEqual(
    stored.map((row) => row.version),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
});
