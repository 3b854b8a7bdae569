import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseAdapter, purgeExpiredPayloads } from '../../src/oauth/adapter.ts';
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
