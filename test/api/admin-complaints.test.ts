import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { moveComplaint } from '../../src/complaints/complaint-store.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { createOrganization } from '../helpers/factories.ts';
import { createPaidWorker, firstError } from '../helpers/money.ts';
import { operatorApp } from '../helpers/operator.ts';

const opening = (attributes: Record<string, unknown>) => ({ data: { type: 'complaints', attributes } });
const change = (attributes: Record<string, unknown>) => ({ data: { type: 'complaints', attributes } });

test('a complaint is opened, answered and closed; a transition its status does not allow is 400 naming it', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 10_000, now: FIXED_NOW });
  const opened = await call(
    'POST',
    '/admin/complaints',
    opening({
      organization_id: worker.organizationId,
      person_id: worker.personId,
      channel: 'EMAIL',
      summary: 'My advance did not arrive.',
    }),
  );
  assert.equal(opened.statusCode, 201, opened.body);
  const { id, attributes } = opened.json().data;
  assert.deepEqual(
    [attributes.state, attributes.status, attributes.opened_at, attributes.answer, attributes.closed_at],
    ['NY', 'OPEN', FIXED_NOW.toISOString(), null, null],
  );
  // The person moves: the complaint stays counted where they lived when it was opened.
  await app.database.db
    .updateTable('people')
    .set({ state_of_residence: 'WI' })
    .where('id', '=', worker.personId)
    .execute();

  clock.now = new Date(FIXED_NOW.getTime() + 3_600_000);
  const answered = await call(
    'PATCH',
    `/admin/complaints/${id}`,
    change({ status: 'ANSWERED', answer: 'It was sent; your bank shows it tomorrow.' }),
  );
  assert.equal(answered.statusCode, 200, answered.body);
  assert.equal(answered.json().data.attributes.status, 'ANSWERED');
  assert.equal(answered.json().data.attributes.answered_at, clock.now.toISOString());
  assert.equal(answered.json().data.attributes.state, 'NY');

  const again = await call(
    'PATCH',
    `/admin/complaints/${id}`,
    change({ status: 'ANSWERED', answer: 'Twice.' }),
  );
  assert.equal(again.statusCode, 400, again.body);
  assert.equal(firstError(again).code, 'INVALID_RESOURCE_STATE');
  assert.match(firstError(again).detail, /is ANSWERED: only OPEN complaints can be answered/);

  const closed = await call(
    'PATCH',
    `/admin/complaints/${id}`,
    change({ status: 'CLOSED', resolution: 'Arrived; the person confirmed.' }),
  );
  assert.equal(closed.statusCode, 200, closed.body);
  assert.equal(closed.json().data.attributes.status, 'CLOSED');
  const reopen = await call(
    'PATCH',
    `/admin/complaints/${id}`,
    change({ status: 'CLOSED', resolution: 'Again.' }),
  );
  assert.equal(firstError(reopen).code, 'INVALID_RESOURCE_STATE');
  assert.match(firstError(reopen).detail, /is CLOSED/);
  const read = await call('GET', `/admin/complaints/${id}`);
  assert.equal(read.statusCode, 200, read.body);
  assert.equal(read.json().data.attributes.resolution, 'Arrived; the person confirmed.');
  assert.equal(read.json().data.attributes.answer, 'It was sent; your bank shows it tomorrow.');

  // Withdrawn at once: closed straight from OPEN, without an answer.
  const withdrawn = await call(
    'POST',
    '/admin/complaints',
    opening({ organization_id: worker.organizationId, state: 'SC', channel: 'PHONE', summary: 'Fees.' }),
  );
  assert.equal(withdrawn.statusCode, 201, withdrawn.body);
  const direct = await call(
    'PATCH',
    `/admin/complaints/${withdrawn.json().data.id}`,
    change({ status: 'CLOSED', resolution: 'Withdrawn by the caller.' }),
  );
  assert.equal(direct.statusCode, 200, direct.body);
  assert.deepEqual(
    [direct.json().data.attributes.answered_at, direct.json().data.attributes.status],
    [null, 'CLOSED'],
  );
});

test('a close whose clock was read before an answer committed closes at the answer, never before it', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const organizationId = await createOrganization(app);
  const opened = await call(
    'POST',
    '/admin/complaints',
    opening({ organization_id: organizationId, state: 'SC', channel: 'EMAIL', summary: 'Race.' }),
  );
  assert.equal(opened.statusCode, 201, opened.body);
  const { id } = opened.json().data;
  clock.now = new Date(FIXED_NOW.getTime() + 60_000);
  const answered = await call(
    'PATCH',
    `/admin/complaints/${id}`,
    change({ status: 'ANSWERED', answer: 'Answered.' }),
  );
  assert.equal(answered.statusCode, 200, answered.body);
  // Two processes: the close read its clock 5 ms before the answer's, then waited for the answer's row lock.
  const closeClock = new Date(clock.now.getTime() - 5);
  const closed = await moveComplaint(app.database.db, id, 'close', 'Closed.', closeClock);
  assert.deepEqual(
    [closed.status, closed.answer, closed.resolution, closed.closed_at],
    ['CLOSED', 'Answered.', 'Closed.', clock.now.toISOString()],
  );
  // A close from OPEN, or after an earlier answer, keeps its own instant.
  const later = new Date(clock.now.getTime() + 1_000);
  const other = await call(
    'POST',
    '/admin/complaints',
    opening({ organization_id: organizationId, state: 'SC', channel: 'EMAIL', summary: 'Other.' }),
  );
  const direct = await moveComplaint(app.database.db, other.json().data.id, 'close', 'Withdrawn.', later);
  assert.equal(direct.closed_at, later.toISOString());
});

test('the complaints list: newest first, paginated, filtered by state and status', async (t) => {
  const { app, clock, call } = await operatorApp(t);
  const organization = await createOrganization(app);
  const ids: string[] = [];
  for (const [i, state] of ['MO', 'MO', 'AR', 'MO'].entries()) {
    clock.now = new Date(FIXED_NOW.getTime() + i * 60_000);
    const opened = await call(
      'POST',
      '/admin/complaints',
      opening({ organization_id: organization, state, channel: 'WEB', summary: `Complaint ${i}.` }),
    );
    assert.equal(opened.statusCode, 201, opened.body);
    ids.push(opened.json().data.id);
  }
  await call('PATCH', `/admin/complaints/${ids[1]}`, change({ status: 'ANSWERED', answer: 'Answered.' }));
  const first = await call('GET', '/admin/complaints?filter[state]=MO&page[size]=2');
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(
    first.json().data.map((c: { id: string }) => c.id),
    [ids[3], ids[1]],
  );
  const next = new URL(first.json().links.next);
  const second = await call('GET', `${next.pathname}${next.search}`);
  assert.deepEqual(
    second.json().data.map((c: { id: string }) => c.id),
    [ids[0]],
  );
  assert.equal(second.json().links, undefined);
  const open = await call(
    'GET',
    `/admin/complaints?filter[status]=OPEN&filter[organization]=${organization}`,
  );
  assert.deepEqual(
    open
      .json()
      .data.map((c: { id: string }) => c.id)
      .sort(),
    [ids[0], ids[2], ids[3]].sort(),
  );
});

test('bad input to /admin/complaints is 400 naming the field; an unknown complaint is 404', async (t) => {
  const { app, call } = await operatorApp(t);
  const worker = await createPaidWorker(app, { earnedMinor: 10_000, now: FIXED_NOW });
  const stranger = await createPaidWorker(app, { earnedMinor: 10_000, now: FIXED_NOW });
  const base = { organization_id: worker.organizationId, channel: 'EMAIL', summary: 'Fees.' };
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ ...base, state: undefined }, '/data/attributes/state', /state is required when no person is named/],
    [{ ...base, state: 'XX' }, '/data/attributes/state', /two-letter code/],
    [{ ...base, state: 'WI', channel: 'FAX' }, '/data/attributes/channel', /channel must be one of/],
    [{ ...base, state: 'WI', summary: ' ' }, '/data/attributes/summary', /non-empty/],
    [{ ...base, state: 'WI', summary: 'x'.repeat(5001) }, '/data/attributes/summary', /at most 5000/],
    [
      { ...base, organization_id: randomUUID(), state: 'WI' },
      '/data/attributes/organization_id',
      /No organization/,
    ],
    [{ ...base, person_id: randomUUID() }, '/data/attributes/person_id', /No person/],
    [{ ...base, person_id: stranger.personId }, '/data/attributes/person_id', /has no job at organization/],
    [
      { ...base, person_id: worker.personId, state: 'WI' },
      '/data/attributes/state',
      /not the person's state/,
    ],
    [{ ...base, state: 'WI', status: 'CLOSED' }, '/data/attributes/status', /not an attribute/],
  ];
  for (const [attributes, pointer, detail] of cases) {
    const answer = await call('POST', '/admin/complaints', opening(attributes));
    assert.equal(answer.statusCode, 400, `${JSON.stringify(attributes).slice(0, 200)}: ${answer.body}`);
    assert.equal(firstError(answer).code, 'INVALID_PARAMETERS');
    assert.deepEqual(firstError(answer).source, { pointer });
    assert.match(firstError(answer).detail, detail);
  }
  const opened = await call('POST', '/admin/complaints', opening({ ...base, state: 'WI' }));
  const id = opened.json().data.id as string;
  const patches: [Record<string, unknown>, string][] = [
    [{ status: 'OPEN' }, '/data/attributes/status'],
    [{ status: 'ANSWERED' }, '/data/attributes/answer'],
    [{ status: 'ANSWERED', answer: 'Yes.', resolution: 'No.' }, '/data/attributes/resolution'],
    [{ status: 'CLOSED', resolution: '' }, '/data/attributes/resolution'],
  ];
  for (const [attributes, pointer] of patches) {
    const answer = await call('PATCH', `/admin/complaints/${id}`, change(attributes));
    assert.equal(answer.statusCode, 400, answer.body);
    assert.deepEqual(firstError(answer).source, { pointer }, JSON.stringify(attributes));
  }
  const unknown = await call('GET', `/admin/complaints/${randomUUID()}`);
  assert.equal(unknown.statusCode, 404);
  assert.equal(firstError(unknown).code, 'RECORD_NOT_FOUND');
  const malformed = await call(
    'PATCH',
    '/admin/complaints/42',
    change({ status: 'CLOSED', resolution: 'x' }),
  );
  assert.equal(malformed.statusCode, 400);
  assert.deepEqual(firstError(malformed).source, { parameter: 'complaint_id' });
  for (const query of [
    'filter[state]=wi',
    'filter[status]=DONE',
    'filter[organization]=acme',
    'page[size]=0',
  ]) {
    const answer = await call('GET', `/admin/complaints?${query}`);
    assert.equal(answer.statusCode, 400, `${query}: ${answer.body}`);
  }
});
