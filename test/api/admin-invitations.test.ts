import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { invitationCodeHash, normalizeInvitationCode } from '../../src/crypto/invitation-codes.ts';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { FIXED_NOW } from '../helpers/build-test-app.ts';
import { assertErrorAnswer } from '../helpers/error-shape.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { operatorApp } from '../helpers/operator.ts';

const body = (attributes: Record<string, unknown>) => ({ data: { type: 'invitations', attributes } });

async function world(t: Parameters<typeof operatorApp>[0]) {
  const operator = await operatorApp(t);
  const organizationId = await createOrganization(operator.app);
  const person = async () => {
    const worker = await createWorker(operator.app, organizationId);
    return { ...worker, email: `${worker.personId}@people.example` };
  };
  const openCodes = (personIds: string[]) =>
    operator.app.database.db
      .selectFrom('invitations')
      .select(['person_id', 'code_hash'])
      .where('person_id', 'in', personIds)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute();
  return { ...operator, organizationId, person, openCodes };
}

test('POST /admin/organizations/{id}/invitations: a code for each person named, shown once, stored as a hash', async (t) => {
  const { call, organizationId, person, openCodes } = await world(t);
  const [alex, bailey] = [await person(), await person()];
  const answer = await call(
    'POST',
    `/admin/organizations/${organizationId}/invitations`,
    body({ emails: [alex.email, bailey.email.toUpperCase()], valid_for_days: 2 }),
  );
  assert.equal(answer.statusCode, 201, answer.body);
  assert.equal(answer.headers['cache-control'], 'no-store');
  const data = answer.json().data as {
    attributes: {
      person_id: string;
      invitation_code: string;
      expires_at: string;
      replaces_password: boolean;
    };
  }[];
  assert.deepEqual(
    data.map((invitation) => invitation.attributes.person_id).sort(),
    [alex.personId, bailey.personId].sort(),
  );
  for (const { attributes } of data) {
    assert.equal(attributes.expires_at, new Date(FIXED_NOW.getTime() + 2 * 86_400_000).toISOString());
    assert.equal(attributes.replaces_password, false);
  }
  assert.deepEqual(
    (await openCodes([alex.personId, bailey.personId])).map((row) => row.code_hash).sort(),
    data
      .map((invitation) =>
        invitationCodeHash(normalizeInvitationCode(invitation.attributes.invitation_code)!),
      )
      .sort(),
  );
  assert.ok(!answer.body.includes('code_hash'));
});

test('invitations: any email that cannot be invited refuses the whole call, naming it; nothing is issued', async (t) => {
  const { app, call, organizationId, person, openCodes } = await world(t);
  const [alex, casey] = [await person(), await person()];
  await app.database.db
    .updateTable('people')
    .set({ password_hash: await hashPassword('casey has one') })
    .where('id', '=', casey.personId)
    .execute();
  const path = `/admin/organizations/${organizationId}/invitations`;
  const refused = assertErrorAnswer(
    await call('POST', path, body({ emails: [alex.email, casey.email, 'nobody@people.example'] })),
    400,
    'INVALID_PARAMETERS',
    { source: { pointer: '/data/attributes/emails' } },
  );
  assert.match(refused.detail, new RegExp(`${casey.email}: has a password already`));
  assert.match(refused.detail, /nobody@people\.example: no person with this email has a job at/);
  assert.deepEqual(await openCodes([alex.personId, casey.personId]), []);

  const reset = await call('POST', path, body({ emails: [casey.email], reset: true }));
  assert.equal(reset.statusCode, 201, reset.body);
  assert.equal(reset.json().data[0].attributes.replaces_password, true);

  const cases: [Record<string, unknown>, string, string][] = [
    [{ emails: [] }, 'INVALID_PARAMETERS', '/data/attributes/emails'],
    [{ emails: ['not-an-email'] }, 'INVALID_PARAMETERS', '/data/attributes/emails'],
    [{ emails: [alex.email], valid_for_days: 91 }, 'INVALID_PARAMETERS', '/data/attributes/valid_for_days'],
    [{ emails: [alex.email], code: 'mine' }, 'INVALID_PARAMETERS', '/data/attributes/code'],
    [{}, 'MISSING_REQUIRED_FIELD', '/data/attributes/emails'],
  ];
  for (const [attributes, code, pointer] of cases) {
    const answer = await call('POST', path, body(attributes));
    assert.equal(answer.statusCode, 400, `${JSON.stringify(attributes)}: ${answer.body}`);
    assert.equal(answer.json().errors[0].code, code, `${JSON.stringify(attributes)}: ${answer.body}`);
    assert.equal(
      answer.json().errors[0].source?.pointer,
      pointer,
      `${JSON.stringify(attributes)}: ${answer.body}`,
    );
  }
  assertErrorAnswer(
    await call('POST', `/admin/organizations/${randomUUID()}/invitations`, body({ emails: [alex.email] })),
    404,
    'RECORD_NOT_FOUND',
  );
  assert.deepEqual(await openCodes([alex.personId]), []);
});
