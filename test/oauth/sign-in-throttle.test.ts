import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { createClient } from '../../src/oauth/clients.ts';
import { type ApiProcess, startApiProcess } from '../helpers/ew-processes.ts';
import { authorizationUrl, formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { onPostgres, openTestDatabase } from '../helpers/test-database.ts';
import { createTestClient, createTestPerson } from '../helpers/tokens.ts';

// The sign-in throttle counts a try before its password is checked, per account and address, with a higher
// ceiling per address. Each test signs in from addresses of its own (X-Forwarded-For behind a trusted proxy), so
// that no test's tries count against another's.
const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';
/** A sign-in page of its own interaction, and a way to post that form from an address. */
async function signInForm(app: ListeningApp, clientId: string) {
  const browser = new HttpBrowser(app.authUrl);
  const page = await browser.follow(authorizationUrl(app.authUrl, clientId, REDIRECT));
  const csrf = hiddenField(page.body, 'csrf');
  return (email: string, password: string, address: string) =>
    browser.follow(formAction(page.body), {
      form: { csrf, email, password },
      headers: { 'x-forwarded-for': address },
    });
}

async function setUp(t: TestContext, env: Record<string, string> = {}) {
  const app = await buildListeningApp(t, { EWA_TRUST_PROXY: 'true', ...env });
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const person = async () => `${await createTestPerson(app, { password: PASSWORD })}@people.example`;
  return { app, clientId: client.clientId, person };
}

const tally = (statuses: number[]) =>
  JSON.stringify(
    Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])),
  );

/** Signed in: the browser reached the consent page. */
const signedIn = (page: { body: string }) => page.body.includes('name="decision"');

test('30 wrong passwords at once: only the threshold of them are checked, then even the right one waits', async (t) => {
  const { app, clientId, person } = await setUp(t);
  const email = await person();
  const post = await signInForm(app, clientId);
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => post(email, `wrong password ${i}`, '192.0.2.30')),
  );
  const statuses = answers.map((answer) => answer.response.status);
  // A 401 is answered only after a password was checked: as many 401 as passwords checked, no more.
  assert.equal(statuses.filter((status) => status === 401).length, 5, tally(statuses));
  assert.equal(statuses.filter((status) => status === 429).length, 25, tally(statuses));
  const right = await post(email, PASSWORD, '192.0.2.30');
  assert.equal(right.response.status, 429, 'the right password arriving after them is not checked either');
  assert.ok(Number(right.response.headers.get('retry-after')) >= 1);
  const row = await app.database.db
    .selectFrom('login_throttle')
    .select('failures')
    .where('key', '=', `account:192.0.2.30 ${email}`)
    .executeTakeFirstOrThrow();
  assert.equal(row.failures, 5, 'tries counted: the checked ones only');
});

test('a locked account locks neither the address nor that account elsewhere', async (t) => {
  const { app, clientId, person } = await setUp(t, { EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '3' });
  const [victim, neighbour] = [await person(), await person()];
  const post = await signInForm(app, clientId);
  for (let i = 0; i < 3; i++)
    assert.equal((await post(victim, 'wrong password', '192.0.2.40')).response.status, 401);
  assert.equal((await post(victim, PASSWORD, '192.0.2.40')).response.status, 429, 'locked from this address');
  const sameOffice = await (await signInForm(app, clientId))(neighbour, PASSWORD, '192.0.2.40');
  assert.ok(
    signedIn(sameOffice),
    `another account signs in from the same address: ${sameOffice.response.status}`,
  );
  const elsewhere = await (await signInForm(app, clientId))(victim, PASSWORD, '198.51.100.40');
  assert.ok(
    signedIn(elsewhere),
    `the locked account signs in from another address: ${elsewhere.response.status}`,
  );
});

test('the per-address ceiling stops an address that tries many accounts; successes do not use it up', async (t) => {
  const { app, clientId, person } = await setUp(t, {
    EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '2',
    EWA_LOGIN_FAILURES_PER_ADDRESS_BEFORE_BACKOFF: '4',
  });
  const address = '192.0.2.50';
  const post = await signInForm(app, clientId);
  // Three failures of the four the address may have; then sign-ins that succeed, each giving its try back.
  for (const email of [await person(), await person()]) {
    assert.equal((await post(email, 'wrong password', address)).response.status, 401);
  }
  assert.equal((await post(await person(), 'wrong password', address)).response.status, 401);
  for (let i = 0; i < 3; i++) {
    const page = await (await signInForm(app, clientId))(await person(), PASSWORD, address);
    assert.ok(signedIn(page), `sign-in ${i + 1} from the address: ${page.response.status}`);
  }
  // The fourth failure, on yet another account, reaches the ceiling: every account now waits at this address.
  assert.equal((await post(await person(), 'wrong password', address)).response.status, 401);
  const next = await (await signInForm(app, clientId))(await person(), PASSWORD, address);
  assert.equal(next.response.status, 429, 'the address is at its ceiling');
  const other = await (await signInForm(app, clientId))(await person(), PASSWORD, '198.51.100.50');
  assert.ok(signedIn(other), 'other addresses are not slowed');
});

test('a sign-in at the ceiling once its lock has passed gives its try back and locks no one out', async (t) => {
  const { app, clientId, person } = await setUp(t, {
    EWA_LOGIN_FAILURES_BEFORE_BACKOFF: '2',
    EWA_LOGIN_FAILURES_PER_ADDRESS_BEFORE_BACKOFF: '4',
  });
  const address = '192.0.2.60';
  const key = `address:${address}`;
  const post = await signInForm(app, clientId);
  // Four failures, one account each: the address reaches its ceiling and waits 30 s.
  for (let i = 0; i < 4; i++) {
    assert.equal((await post(await person(), 'wrong password', address)).response.status, 401);
  }
  assert.equal(
    (await (await signInForm(app, clientId))(await person(), PASSWORD, address)).response.status,
    429,
  );
  // The 30 s pass (moved into the past rather than waited for).
  await app.database.db
    .updateTable('login_throttle')
    .set({ locked_until: new Date(Date.now() - 1000) })
    .where('key', '=', key)
    .execute();
  const first = await (await signInForm(app, clientId))(await person(), PASSWORD, address);
  assert.ok(signedIn(first), `the right password once the lock has passed: ${first.response.status}`);
  const row = await app.database.db
    .selectFrom('login_throttle')
    .select(['failures', 'locked_until'])
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  assert.equal(row.failures, 4, 'the success gave its try back');
  assert.ok(
    !row.locked_until || row.locked_until <= new Date(),
    `not locked by its own try: ${row.locked_until}`,
  );
  const second = await (await signInForm(app, clientId))(await person(), PASSWORD, address);
  assert.ok(signedIn(second), `another account signs in from the address next: ${second.response.status}`);
  // Still at the ceiling: the next failure locks the address again, for the doubled backoff.
  assert.equal((await post(await person(), 'wrong password', address)).response.status, 401);
  const locked = await (await signInForm(app, clientId))(await person(), PASSWORD, address);
  assert.equal(locked.response.status, 429, 'a failure at the ceiling still locks the address');
  const retryAfter = Number(locked.response.headers.get('retry-after'));
  assert.ok(retryAfter > 30 && retryAfter <= 60, `backoff of the fifth failure: ${retryAfter}`);
});

test('two server processes on one PostgreSQL check at most the threshold of 30 parallel guesses', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const database = await openTestDatabase(t);
  const { client } = await createClient(
    database.db,
    {
      name: 'Test Partner',
      isPublic: false,
      redirectUris: [REDIRECT],
      scopes: ['openid', 'user:read'],
      organizationIds: [],
    },
    { sandbox: true },
  );
  const id = randomUUID();
  const email = `${id}@people.example`;
  await database.db
    .insertInto('people')
    .values({
      id,
      email,
      first_name: 'Test',
      last_name: 'Person',
      password_hash: await hashPassword(PASSWORD),
    })
    .execute();
  const servers: ApiProcess[] = [];
  for (let i = 0; i < 2; i++) {
    const server = await startApiProcess(database.env);
    t.after(() => server.kill());
    servers.push(server);
  }
  // The interaction lives in the database: started on one process, its form is posted to both.
  const cookies = new Map<string, string>();
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
  };
  const cookie = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const start = await fetch(authorizationUrl(servers[0]!.authUrl, client.clientId, REDIRECT), {
    redirect: 'manual',
  });
  keep(start);
  const pagePath = new URL(start.headers.get('location')!, servers[0]!.authUrl).pathname;
  const page = await fetch(`${servers[0]!.authUrl}${pagePath}`, { headers: { cookie: cookie() } });
  keep(page);
  const body = await page.text();
  const form = new URLSearchParams({ csrf: hiddenField(body, 'csrf'), email, password: 'wrong password' });
  const statuses = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const response = await fetch(`${servers[i % 2]!.authUrl}${formAction(body)}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  assert.equal(statuses.filter((status) => status === 401).length, 5, tally(statuses));
  assert.equal(statuses.filter((status) => status === 429).length, 25, tally(statuses));
});
