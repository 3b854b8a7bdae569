import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { importRoster } from '../../src/operator/roster-import.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { heldRoster } from '../helpers/held-roster.ts';
import { operatorClient } from '../helpers/operator.ts';

/**
 * POST /admin/organizations/{id}/roster while another import of the organization runs (here one of the test's own,
 * held open by its source): 409 ROSTER_IMPORT_RUNNING at once, and nothing of the file is written.
 */

const HEADER = 'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency';

const line = (organization: string, n: number) =>
  `J-${n},Worker,${n},w${n}.${organization.slice(0, 8)}@example.com,20,HOURLY\n`;

async function operatorWithTwoOrganizations(t: TestContext) {
  const app = await buildTestApp(t);
  const { token, call } = await operatorClient(app);
  const organization = async (name: string) => {
    const created = await call('POST', '/admin/organizations', {
      data: { type: 'organizations', attributes: { name } },
    });
    assert.equal(created.statusCode, 200, created.body);
    return { id: created.json().data.id as string, name };
  };
  const roster = (organizationId: string, payload: string | Readable) =>
    app.api.inject({
      method: 'POST',
      url: `/admin/organizations/${organizationId}/roster`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      payload,
    });
  return { app, roster, first: await organization('Upload One'), second: await organization('Upload Two') };
}

test('a roster sent while another import of the organization runs is 409 ROSTER_IMPORT_RUNNING; another organization imports', async (t) => {
  const { app, roster, first, second } = await operatorWithTwoOrganizations(t);
  const held = heldRoster(`${HEADER}\n${line(first.id, 1)}`, line(first.id, 2));
  const running = importRoster(app.database, { organizationId: first.id, source: held.source });
  await held.reading;

  const refused = await roster(first.id, `${HEADER}\n${line(first.id, 3)}`);
  const error = assertErrorAnswer(refused, 409, 'ROSTER_IMPORT_RUNNING');
  assert.match(error.detail, new RegExp(`organization Upload One \\(${first.id}\\) is already running`));
  const other = await roster(second.id, `${HEADER}\n${line(second.id, 1)}`);
  assert.equal(other.statusCode, 200, other.body);
  assert.equal(other.json().data.attributes.created, 1);

  held.finish();
  assert.equal((await running).created, 2);
  const after = await roster(first.id, `${HEADER}\n${line(first.id, 1)}${line(first.id, 3)}`);
  assert.equal(after.statusCode, 200, after.body);
  assert.deepEqual([after.json().data.attributes.unchanged, after.json().data.attributes.created], [1, 1]);
});

test('the organization is free again after an upload cut off, a file with a line rejected, and a file refused', async (t) => {
  const { roster, first } = await operatorWithTwoOrganizations(t);
  const works = async () => {
    const answer = await roster(first.id, `${HEADER}\n${line(first.id, 9)}`);
    assert.equal(answer.statusCode, 200, answer.body);
  };
  // A body that ends before its end: the client went away mid-upload.
  const cutOff = new Readable({
    read() {
      this.push(`${HEADER}\n${line(first.id, 1)}`);
      this.destroy(new Error('the client went away'));
    },
  });
  const cut = await roster(first.id, cutOff).catch((error: Error) => error);
  assert.ok(cut instanceof Error || cut.statusCode >= 400, 'the cut-off upload imported nothing');
  await works();
  // A line rejected after the turn was taken: it names another organization than the route's.
  const wrong = await roster(first.id, `organization_id,${HEADER}\nnot-an-organization,${line(first.id, 2)}`);
  assert.equal(wrong.statusCode, 200, wrong.body);
  assert.equal(wrong.json().data.attributes.rejected, 1);
  await works();
  assertErrorAnswer(await roster(first.id, 'not,a,roster\n'), 400, 'INVALID_PARAMETERS');
  await works();
});
