import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { invitationCodeHash, normalizeInvitationCode } from '../../src/crypto/invitation-codes.ts';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { cliDatabaseEnv, csvFile, ewa, ewaAt, inDatabase } from '../helpers/cli.ts';

const HEADER = 'primary_identifier,employee_id,first_name,last_name,email,wage_amount,wage_frequency';

async function rosterOf(t: Parameters<typeof cliDatabaseEnv>[0], names: string[]) {
  const env = await cliDatabaseEnv(t);
  const created = await ewa(
    env,
    'orgs',
    'create',
    '--name',
    `Invite Co ${randomUUID().slice(0, 8)}`,
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const organizationId: string = created.json().id;
  const tag = randomUUID().slice(0, 8);
  const emails = names.map((name) => `${name.toLowerCase()}.${tag}@example.com`);
  const file = csvFile(t, 'roster.csv', [
    HEADER,
    ...names.map((name, index) => `P-${index},E-${index},${name},"O'Neil, Jr",${emails[index]},20.00,HOURLY`),
  ]);
  const imported = await ewa(env, 'people', 'import', file, '--org', organizationId);
  assert.equal(imported.code, 0, imported.stderr);
  return { env, organizationId, emails };
}

/** The CSV lines after the header, as records. */
function invitationRows(stdout: string) {
  const [header, ...lines] = stdout.trim().split('\n');
  assert.equal(header, 'email,first_name,last_name,invitation_code,expires_at,replaces_password');
  return lines.map((line) => {
    // The names may be quoted with commas inside; the other columns never are.
    const cells = line.split(',');
    const [code, expiresAt, replaces] = cells.slice(-3) as [string, string, string];
    return { email: cells[0]!, code, expiresAt, replaces };
  });
}

async function openCodes(env: Record<string, string>) {
  return inDatabase(env, (db) =>
    db
      .selectFrom('invitations')
      .select(['person_id', 'code_hash', 'expires_at', 'replaces_password'])
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .execute(),
  );
}

test('people invite: a code for each worker without a password, once; running again invites nobody new', async (t) => {
  const { env, organizationId, emails } = await rosterOf(t, ['Alex', 'Bailey', 'Casey']);
  const now = new Date('2026-11-02T10:00:00.000Z');
  const first = await ewaAt(now, env, 'people', 'invite', '--org', organizationId, '--valid-for-days', '3');
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /^Invited 3 people of Invite Co /m);
  const rows = invitationRows(first.stdout);
  assert.deepEqual(rows.map((row) => row.email).sort(), [...emails].sort());
  for (const row of rows) {
    assert.match(row.code, /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}$/);
    assert.equal(row.expiresAt, '2026-11-05T10:00:00.000Z');
    assert.equal(row.replaces, 'false');
  }
  // The roster's quoted last name stays one CSV cell.
  assert.match(first.stdout, /,"O'Neil, Jr",/);
  // Only hashes are stored, one open code a person, each the hash of a printed code.
  const stored = await openCodes(env);
  assert.deepEqual(
    stored.map((row) => row.code_hash).sort(),
    rows.map((row) => invitationCodeHash(normalizeInvitationCode(row.code)!)).sort(),
  );
  assert.equal(new Set(stored.map((row) => row.person_id)).size, 3);

  const again = await ewaAt(now, env, 'people', 'invite', '--org', organizationId, '--json');
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, '');
  assert.match(again.stderr, /^Invited 0 people/m);

  // Once the codes have expired, the same run invites them again, revoking the old codes.
  const later = new Date(now.getTime() + 4 * 86_400_000);
  const renewed = await ewaAt(later, env, 'people', 'invite', '--org', organizationId, '--json');
  assert.equal(renewed.code, 0, renewed.stderr);
  const lines = renewed.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(lines.length, 3);
  assert.deepEqual(Object.keys(lines[0]), [
    'person_id',
    'email',
    'first_name',
    'last_name',
    'invitation_code',
    'expires_at',
    'replaces_password',
  ]);
  const open = await openCodes(env);
  assert.deepEqual(
    open.map((row) => row.code_hash).sort(),
    lines.map((line) => invitationCodeHash(normalizeInvitationCode(line.invitation_code)!)).sort(),
  );

  // Codes lost on the way (the output cut short): --reissue gives everyone a new one, and the lost ones stop working.
  const reissued = await ewaAt(
    later,
    env,
    'people',
    'invite',
    '--org',
    organizationId,
    '--reissue',
    '--json',
  );
  assert.equal(reissued.code, 0, reissued.stderr);
  const fresh = reissued.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(fresh.length, 3);
  assert.deepEqual(
    (await openCodes(env)).map((row) => row.code_hash).sort(),
    fresh.map((line) => invitationCodeHash(normalizeInvitationCode(line.invitation_code)!)).sort(),
  );
});

test('people invite --email: a new code replaces the old; a password needs --reset; unknown people are named', async (t) => {
  const { env, organizationId, emails } = await rosterOf(t, ['Devon', 'Emery']);
  const [devon, emery] = emails as [string, string];
  await inDatabase(env, async (db) =>
    db
      .updateTable('people')
      .set({ password_hash: await hashPassword('an old password') })
      .where('email', '=', emery)
      .execute(),
  );
  const first = await ewa(env, 'people', 'invite', '--org', organizationId, '--email', devon);
  assert.equal(first.code, 0, first.stderr);
  const second = await ewa(
    env,
    'people',
    'invite',
    '--org',
    organizationId,
    '--email',
    devon.toUpperCase(),
    '--email',
    emery,
    '--email',
    'nobody@example.com',
  );
  assert.equal(second.code, 1, second.stdout);
  assert.match(second.stderr, new RegExp(`${emery.replace(/\./g, '\\.')}: has a password already`));
  assert.match(second.stderr, /nobody@example\.com: no person with this email has a job at Invite Co/);
  const [devonRow] = invitationRows(second.stdout);
  assert.equal(devonRow?.email, devon);
  const open = await openCodes(env);
  assert.deepEqual(
    open.map((row) => row.code_hash),
    [invitationCodeHash(normalizeInvitationCode(devonRow!.code)!)],
    'the first code is revoked, the second is the one open code',
  );

  const reset = await ewa(env, 'people', 'invite', '--org', organizationId, '--email', emery, '--reset');
  assert.equal(reset.code, 0, reset.stderr);
  assert.equal(invitationRows(reset.stdout)[0]?.replaces, 'true');
});

test('people invite: wrong usage exits 2 and an unknown organization 1, issuing nothing', async (t) => {
  const { env, organizationId } = await rosterOf(t, ['Frankie']);
  const cases: [string[], number, RegExp][] = [
    [['people', 'invite'], 2, /name the organization with --organization/],
    [['people', 'invite', '--org', organizationId, '--reset'], 2, /--reset needs the people it is for/],
    [
      ['people', 'invite', '--org', organizationId, '--valid-for-days', '0'],
      2,
      /--valid-for-days must be a whole number from 1 to 90/,
    ],
    [['people', 'invite', '--org', organizationId, '--valid-for-days', '91'], 2, /from 1 to 90/],
    [
      ['people', 'invite', '--org', organizationId, '--email', 'not-an-email'],
      2,
      /"not-an-email" is not an email address/,
    ],
    [
      ['people', 'invite', '--org', organizationId, '--reissue', '--email', 'a@example.com'],
      2,
      /--reissue is for everyone/,
    ],
    [
      ['people', 'invite', '--org', organizationId, '--org', randomUUID()],
      2,
      /--org is given more than once/,
    ],
    [['people', 'invite', '--org', randomUUID()], 1, /No organization/],
  ];
  for (const [argv, code, message] of cases) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, argv.join(' '));
    assert.equal(run.stdout, '', 'a refused run writes no CSV header');
  }
  assert.deepEqual(await openCodes(env), []);
});

test('people invitations: who signed up, and whose latest code is open, expired, used or replaced', async (t) => {
  const { env, organizationId, emails } = await rosterOf(t, ['Alex', 'Bailey', 'Casey', 'Drew']);
  const [alex, bailey, casey, drew] = emails as [string, string, string, string];
  const day = 86_400_000;
  const now = new Date('2026-11-02T10:00:00.000Z');
  const named = (...people: string[]) => people.flatMap((email) => ['--email', email]);
  const invited = await ewaAt(
    now,
    env,
    'people',
    'invite',
    '--org',
    organizationId,
    ...named(alex, bailey, casey),
  );
  assert.equal(invited.code, 0, invited.stderr);
  // Bailey signs up with the code; Casey's is replaced two days later.
  const used = new Date(now.getTime() + day);
  await inDatabase(env, async (db) => {
    const person = await db
      .selectFrom('people')
      .select('id')
      .where('email', '=', bailey)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('people')
      .set({ password_hash: await hashPassword('a new password') })
      .where('id', '=', person.id)
      .execute();
    await db.updateTable('invitations').set({ used_at: used }).where('person_id', '=', person.id).execute();
  });
  const replacedAt = new Date(now.getTime() + 2 * day);
  const replaced = await ewaAt(replacedAt, env, 'people', 'invite', '--org', organizationId, ...named(casey));
  assert.equal(replaced.code, 0, replaced.stderr);

  const later = new Date(now.getTime() + 15 * day);
  const listed = await ewaAt(later, env, 'people', 'invitations', '--org', organizationId);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stderr, /^Listed 4 people of Invite Co /m);
  const [header, ...lines] = listed.stdout.trim().split('\n');
  assert.equal(
    header,
    'email,first_name,last_name,has_password,invitation,invited_at,expires_at,used_at,replaces_password',
  );
  const byEmail = new Map(lines.map((line) => [line.split(',')[0], line.split(',').slice(-6)]));
  assert.deepEqual(byEmail.get(alex), [
    'false',
    'EXPIRED',
    now.toISOString(),
    new Date(now.getTime() + 14 * day).toISOString(),
    '',
    'false',
  ]);
  assert.deepEqual(byEmail.get(bailey)?.slice(0, 2), ['true', 'USED']);
  assert.equal(byEmail.get(bailey)?.[4], used.toISOString());
  assert.deepEqual(byEmail.get(casey)?.slice(0, 3), ['false', 'OPEN', replacedAt.toISOString()]);
  assert.deepEqual(byEmail.get(drew), ['false', 'NONE', '', '', '', '']);
  assert.doesNotMatch(listed.stdout, /[0-9A-Z]{5}-[0-9A-Z]{5}-/, 'no code is shown');

  const pending = await ewaAt(
    later,
    env,
    'people',
    'invitations',
    '--org',
    organizationId,
    '--pending',
    '--json',
  );
  assert.equal(pending.code, 0, pending.stderr);
  const records = pending.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(records.map((record) => record.email).sort(), [alex, casey, drew].sort());
  const drewRecord = records.find((record) => record.email === drew);
  assert.deepEqual(Object.keys(drewRecord), [
    'person_id',
    'email',
    'first_name',
    'last_name',
    'has_password',
    'invitation',
    'invited_at',
    'expires_at',
    'used_at',
    'replaces_password',
  ]);
  assert.equal(drewRecord.invited_at, null);
  // An earlier moment sees Alex's code open still: the state is as of the command's clock.
  const before = await ewaAt(replacedAt, env, 'people', 'invitations', '--org', organizationId, '--json');
  const alexThen = before.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .find((record) => record.email === alex);
  assert.equal(alexThen.invitation, 'OPEN');

  for (const [argv, code, message] of [
    [['people', 'invitations'], 2, /name the organization with --organization/],
    [['people', 'invitations', '--org', randomUUID()], 1, /No organization/],
  ] as [string[], number, RegExp][]) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, run.stderr);
    assert.match(run.stderr, message);
    assert.equal(run.stdout, '', 'a refused run writes no CSV header');
  }
});
