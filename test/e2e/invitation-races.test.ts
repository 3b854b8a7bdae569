import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { invitationCodeHash, normalizeInvitationCode } from '../../src/crypto/invitation-codes.ts';
import { authenticate } from '../../src/oauth/accounts.ts';
import { type IssuedInvitation, issueInvitations } from '../../src/operator/invitations.ts';
import { csvFile, ewa } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { type EwaProcess, SHARED_PUBLIC_URLS, spawnEwa, startApiProcess } from '../helpers/ew-processes.ts';
import { authorizationUrl, formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { createClientByCli, type MoneyWorld, openMoneyWorld } from '../helpers/money-world.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Invitations raced across processes on one PostgreSQL. The test holds a person's row until both sides wait on
 * it, so neither has chosen or used anything when the other writes: each must choose again, or check the code
 * again, under the person's lock. Had either read before the lock, people would get two codes (one of them
 * revoked by the other run, though printed) or one code would set two passwords.
 */

const PEOPLE = 12;

/** Sessions waiting for a people row lock, with statements like `pattern`. */
async function waitingOnPeople(world: MoneyWorld, pid: number, pattern: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::integer as n from pg_stat_activity
    where cardinality(pg_blocking_pids(pid)) > 0 and query like ${pattern} and pid <> ${pid}::integer`.execute(
    world.db,
  );
  return rows[0]!.n;
}

async function rosterOrganization(t: TestContext, world: MoneyWorld) {
  const created = await ewa(world.env, 'orgs', 'create', '--name', 'Race Co', '--json');
  assert.equal(created.code, 0, created.stderr);
  const organizationId: string = created.json().id;
  const file = csvFile(t, 'roster.csv', [
    'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency',
    ...Array.from(
      { length: PEOPLE },
      (_, index) =>
        `P-${index},Worker,${index},w${index}.${organizationId.slice(0, 8)}@example.com,20,HOURLY`,
    ),
  ]);
  const imported = await ewa(world.env, 'people', 'import', file, '--org', organizationId);
  assert.equal(imported.code, 0, imported.stderr);
  const people = await world.db
    .selectFrom('people')
    .innerJoin('jobs', 'jobs.person_id', 'people.id')
    .select(['people.id', 'people.email'])
    .where('jobs.organization_id', '=', organizationId)
    .orderBy('people.id')
    .execute();
  return { organizationId, people: people.map((person) => ({ id: person.id, email: person.email! })) };
}

test('two `ewa people invite` runs at once on two processes: each person gets one code, and every code printed works', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const { organizationId, people } = await rosterOrganization(t, world);
  const hold = await holdRows(world, 'select id from people where id = $1 for update', [people[0]!.id]);
  const env = { ...world.env, EWA_DB_LOCK_TIMEOUT_MS: '60000', EWA_DB_STATEMENT_TIMEOUT_MS: '60000' };
  const runs: EwaProcess[] = [1, 2].map(() =>
    spawnEwa(['people', 'invite', '--org', organizationId, '--json'], env),
  );
  for (const run of runs) world.onCleanup(() => run.kill());
  const lockPattern = 'select id from people where id = any%';
  await eventually(async () => (await waitingOnPeople(world, hold.pid, lockPattern)) === runs.length, 30_000);
  await hold.release();
  const codes = await Promise.all(runs.map((run) => run.exited));
  const outputs = runs.map((run) => run.output());
  assert.deepEqual(codes, [0, 0], outputs.join('\n'));
  const printed = outputs
    .join('\n')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { email: string; invitation_code: string });
  assert.equal(printed.length, PEOPLE, outputs.join('\n'));
  assert.deepEqual(printed.map((line) => line.email).sort(), people.map((person) => person.email).sort());
  const open = await world.db
    .selectFrom('invitations')
    .select('code_hash')
    .where('organization_id', '=', organizationId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  assert.deepEqual(
    open.map((row) => row.code_hash).sort(),
    printed.map((line) => invitationCodeHash(normalizeInvitationCode(line.invitation_code)!)).sort(),
    'every code printed is open, and there is no other',
  );
  const all = await world.db
    .selectFrom('invitations')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  assert.equal(Number(all.n), PEOPLE, 'no code was issued and revoked');
});

test('one code used at once on two servers: one password is set, the other sign-up is told the code is used', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two ewa processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const { organizationId, people } = await rosterOrganization(t, world);
  const client = await createClientByCli(world.env, 'openid user:read');
  const env = { ...world.env, EWA_DB_LOCK_TIMEOUT_MS: '60000', EWA_DB_STATEMENT_TIMEOUT_MS: '60000' };
  const servers = [await startApiProcess(env), await startApiProcess(env)];
  for (const server of servers) world.onCleanup(() => server.kill());
  const issuer = SHARED_PUBLIC_URLS.EWA_AUTH_URL;

  for (const person of people.slice(0, 3)) {
    const issued: IssuedInvitation[] = [];
    await issueInvitations(world.db, {
      organizationId,
      emails: [person.email],
      now: new Date(),
      onIssued: (batch) => {
        issued.push(...batch);
      },
    });
    const code = issued[0]!.code;
    // Each browser on its own server, on the sign-up page of its own authorization request.
    const pages = await Promise.all(
      servers.map(async (server) => {
        const browser = new HttpBrowser(issuer, server.authUrl);
        const login = await browser.follow(
          authorizationUrl(issuer, client.client_id, 'https://partner.example/callback'),
        );
        const page = await browser.follow(login.url.replace(/\/?$/, '/signup'));
        assert.equal(page.response.status, 200, page.body.slice(0, 500));
        return { browser, page };
      }),
    );
    const hold = await holdRows(world, 'select id from people where id = $1 for update', [person.id]);
    const answers = pages.map(({ browser, page }, index) =>
      browser.follow(formAction(page.body), {
        form: {
          csrf: hiddenField(page.body, 'csrf'),
          email: person.email,
          invitation_code: code,
          password: `password number ${index}`,
        },
      }),
    );
    await eventually(
      async () =>
        (await waitingOnPeople(world, hold.pid, '%from "people" where "email" = $1 for update%')) === 2,
      30_000,
    );
    await hold.release();
    const [first, second] = await Promise.all(answers);
    const statuses = [first!.response.status, second!.response.status];
    const winner = statuses.indexOf(200);
    assert.deepEqual([...statuses].sort(), [200, 400], `${statuses}`);
    assert.match([first, second][winner]!.body, /name="decision"/);
    assert.match([first, second][1 - winner]!.body, /This invitation code has been used/);
    assert.equal(await authenticate(world.db, person.email, `password number ${winner}`), person.id);
    assert.equal(await authenticate(world.db, person.email, `password number ${1 - winner}`), undefined);
  }
});
