import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseAdapter } from '../../src/oauth/adapter.ts';
import { purgeExpiredPayloads } from '../../src/oauth/expired-payloads.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

test('the provider adapter stores, finds, consumes, expires and revokes by grant', async (t) => {
  const { db } = await openTestDatabase(t);
  let now = new Date('2026-03-11T15:00:00Z');
  const Adapter = databaseAdapter(db, () => now);
  const codes = new Adapter('AuthorizationCode');
  const sessions = new Adapter('Session');
  await codes.upsert('code-1', { grantId: 'grant-1', scope: 'openid' }, 60);
  await sessions.upsert('session-1', { uid: 'uid-1', accountId: 'p' }, 3600);
  assert.deepEqual(await codes.find('code-1'), { grantId: 'grant-1', scope: 'openid' });
  assert.equal(await sessions.find('code-1'), undefined, 'models do not see each other');
  assert.equal((await sessions.findByUid('uid-1'))?.accountId, 'p');

  await codes.consume('code-1');
  assert.equal(
    typeof (await codes.find('code-1'))?.consumed,
    'number',
    'a consumed code is kept and says so',
  );

  now = new Date(now.getTime() + 61_000);
  assert.equal(await codes.find('code-1'), undefined, 'expired rows read as absent');
  assert.ok(await sessions.find('session-1'));

  await codes.upsert('code-2', { grantId: 'grant-2' }, 60);
  await new Adapter('AccessToken').revokeByGrantId('grant-2');
  assert.equal(await codes.find('code-2'), undefined);
  const revocation = await db
    .selectFrom('oauth_revocations')
    .selectAll()
    .where('value', '=', 'grant-2')
    .executeTakeFirstOrThrow();
  assert.equal(revocation.kind, 'GRANT', 'API processes learn that the grant is revoked');

  now = new Date(now.getTime() + 3600_000);
  const purged = await purgeExpiredPayloads(db, now);
  assert.ok(purged >= 2);
  const left = await db.selectFrom('oauth_payloads').select('id').execute();
  assert.deepEqual(left, []);
});

test('a code is consumed once: a second consume, at once or later, is invalid_grant and revokes its grant', async (t) => {
  const { db } = await openTestDatabase(t);
  const now = new Date('2026-03-11T15:00:00Z');
  const Adapter = databaseAdapter(db, () => now);
  const codes = new Adapter('AuthorizationCode');
  const grants = new Adapter('Grant');
  const tokens = new Adapter('AccessToken');
  await grants.upsert('grant-1', { accountId: 'p' }, 3600);
  await codes.upsert('code-1', { grantId: 'grant-1' }, 60);
  await tokens.upsert('token-1', { grantId: 'grant-1' }, 60);
  const outcomes = await Promise.allSettled([codes.consume('code-1'), codes.consume('code-1')]);
  assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
  const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  assert.equal((refused.reason as { error?: string }).error, 'invalid_grant');
  assert.match((refused.reason as { error_detail?: string }).error_detail ?? '', /already consumed/);
  assert.equal(await grants.find('grant-1'), undefined, 'the grant is gone');
  assert.equal(await tokens.find('token-1'), undefined, 'and the tokens issued on it');
  assert.ok(
    await db.selectFrom('oauth_revocations').select('kind').where('value', '=', 'grant-1').executeTakeFirst(),
    'API processes learn that the grant is revoked',
  );
  await assert.rejects(
    codes.consume('code-1'),
    (error: { error?: string }) => error.error === 'invalid_grant',
  );

  // Artifacts redeemed more than once by design are not claimed: a session is consumed as often as it is.
  const sessions = new Adapter('Session');
  await sessions.upsert('session-1', { uid: 'u' }, 60);
  await sessions.consume('session-1');
  await sessions.consume('session-1');
});
