import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { hashPassword } from '../../src/crypto/passwords.ts';
import { authenticate } from '../../src/oauth/accounts.ts';
import { type IssuedInvitation, issueInvitations } from '../../src/operator/invitations.ts';
import type { TestAppOptions } from '../helpers/build-test-app.ts';
import { eventually } from '../helpers/eventually.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { authorizationUrl, formAction, HttpBrowser, hiddenField } from '../helpers/http-browser.ts';
import { buildListeningApp, type ListeningApp } from '../helpers/listening-app.ts';
import { createTestClient, userToken } from '../helpers/tokens.ts';

const REDIRECT = 'https://partner.example/callback';
const PASSWORD = 'correct horse battery';

/** Production's issuer is https, its cookies Secure: the browser reaches it over HTTP, as behind its proxy. */
const PRODUCTION_ISSUER = 'https://auth.ewa.test';

async function setup(t: TestContext, options: TestAppOptions = {}) {
  const app = await buildListeningApp(
    t,
    { EWA_REVOCATION_POLL_MS: '100', ...(options.asProduction ? { EWA_AUTH_URL: PRODUCTION_ISSUER } : {}) },
    options,
  );
  const browser = () =>
    options.asProduction ? new HttpBrowser(PRODUCTION_ISSUER, app.authUrl) : new HttpBrowser(app.authUrl);
  const organizationId = await createOrganization(app, { name: 'Harbor Freight Lines' });
  const client = await createTestClient(app, { redirectUris: [REDIRECT] });
  const worker = async () => {
    const created = await createWorker(app, organizationId, { employeeId: `E-${Math.random()}` });
    return { ...created, email: `${created.personId}@people.example` };
  };
  const invite = async (
    emails: string[],
    extra: { reset?: boolean; now?: Date; validForDays?: number } = {},
  ): Promise<IssuedInvitation[]> => {
    const issued: IssuedInvitation[] = [];
    const result = await issueInvitations(app.database.db, {
      organizationId,
      emails,
      now: new Date(),
      ...extra,
      onIssued: (batch) => {
        issued.push(...batch);
      },
    });
    assert.deepEqual(result.problems, []);
    return issued;
  };
  const signUpPage = async () => {
    const browsing = browser();
    const login = await browsing.follow(
      authorizationUrl(app.config.auth.publicUrl, client.clientId, REDIRECT),
    );
    const page = await browsing.follow(login.url.replace(/\/?$/, '/signup'));
    assert.equal(page.response.status, 200, page.body.slice(0, 2000));
    const submit = (form: Record<string, string>) =>
      browsing.follow(formAction(page.body), { form: { csrf: hiddenField(page.body, 'csrf'), ...form } });
    const submitRaw = (rest: string) =>
      browsing.follow(formAction(page.body), {
        rawForm: `csrf=${encodeURIComponent(hiddenField(page.body, 'csrf'))}&${rest}`,
      });
    return { page, submit, submitRaw, login };
  };
  return { app, worker, invite, signUpPage };
}

async function passwordHash(app: ListeningApp, personId: string) {
  const row = await app.database.db
    .selectFrom('people')
    .select('password_hash')
    .where('id', '=', personId)
    .executeTakeFirstOrThrow();
  return row.password_hash;
}

const allowed = (answer: { response: Response; body: string }) =>
  answer.response.status === 200 && answer.body.includes('name="decision"');

test('production: sign-up asks for the invitation code, not the employee ID; the code sets a password once', async (t) => {
  const { app, worker, invite, signUpPage } = await setup(t, { asProduction: true });
  const person = await worker();
  const { page, submit } = await signUpPage();
  assert.match(page.body, /name="invitation_code"[^>]* required/);
  assert.doesNotMatch(page.body, /name="employee_id"/);

  const employeeId = await app.database.db
    .selectFrom('jobs')
    .select('external_employee_id')
    .where('id', '=', person.jobId)
    .executeTakeFirstOrThrow();
  const withoutCode = await submit({
    email: person.email,
    employee_id: employeeId.external_employee_id!,
    password: PASSWORD,
  });
  assert.equal(withoutCode.response.status, 400);
  assert.match(withoutCode.body, /Enter the invitation code your employer gave you/);
  assert.equal(await passwordHash(app, person.personId), null, 'an employee ID sets nothing in production');

  const [invitation] = await invite([person.email]);
  // As a person types it: lower case, spaces for dashes.
  const typed = invitation!.code.toLowerCase().replaceAll('-', ' ');
  const used = await (await signUpPage()).submit({
    email: person.email.toUpperCase(),
    invitation_code: typed,
    password: PASSWORD,
  });
  assert.ok(allowed(used), `${used.response.status} ${used.body.slice(0, 400)}`);
  assert.equal(await authenticate(app.database.db, person.email, PASSWORD), person.personId);

  const again = await (await signUpPage()).submit({
    email: person.email,
    invitation_code: invitation!.code,
    password: 'another password here',
  });
  assert.equal(again.response.status, 400);
  assert.match(again.body, /This invitation code has been used/);
  assert.equal(await authenticate(app.database.db, person.email, PASSWORD), person.personId);
});

test('a code is refused, saying why only once the email and the code match, and nothing is changed', async (t) => {
  const { app, worker, invite, signUpPage } = await setup(t);
  const [alex, bailey, casey, devon] = [await worker(), await worker(), await worker(), await worker()];
  const [alexCode] = await invite([alex.email]);
  const [baileyExpired] = await invite([bailey.email], {
    now: new Date(Date.now() - 20 * 86_400_000),
    validForDays: 14,
  });
  const [caseyOld] = await invite([casey.email]);
  await invite([casey.email]);
  const [devonCode] = await invite([devon.email]);
  await app.database.db
    .updateTable('people')
    .set({ password_hash: await hashPassword('devon set one') })
    .where('id', '=', devon.personId)
    .execute();

  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'another person’s code',
      { email: bailey.email, invitation_code: alexCode!.code },
      /could not match this email/,
    ],
    [
      'an unknown email',
      { email: 'nobody@people.example', invitation_code: alexCode!.code },
      /could not match this email/,
    ],
    [
      'a code never issued',
      { email: alex.email, invitation_code: 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ' },
      /could not match this email/,
    ],
    [
      'a malformed code',
      { email: alex.email, invitation_code: 'ABC-123' },
      /An invitation code has 20 letters and digits/,
    ],
    ['no code and no employee ID', { email: alex.email }, /Enter your employee ID/],
    [
      'an expired code',
      { email: bailey.email, invitation_code: baileyExpired!.code },
      /This invitation code expired on \d{4}-\d\d-\d\d/,
    ],
    [
      'a replaced code',
      { email: casey.email, invitation_code: caseyOld!.code },
      /A newer invitation code replaced this one/,
    ],
    [
      'a password set since',
      { email: devon.email, invitation_code: devonCode!.code },
      /You have a password already/,
    ],
    [
      'a short password',
      { email: alex.email, invitation_code: alexCode!.code, password: 'short' },
      /Choose a password of 10/,
    ],
  ];
  for (const [name, form, message] of cases) {
    const answer = await (await signUpPage()).submit({ password: PASSWORD, ...form });
    assert.equal(answer.response.status, 400, name);
    assert.match(answer.body, message, name);
  }
  for (const person of [alex, bailey, casey])
    assert.equal(await passwordHash(app, person.personId), null, 'no password was set');
  const usedUp = await app.database.db
    .selectFrom('invitations')
    .select('person_id')
    .where('used_at', 'is not', null)
    .where(
      'person_id',
      'in',
      [alex, bailey, casey, devon].map((person) => person.personId),
    )
    .execute();
  assert.deepEqual(usedUp, [], 'no code was used up');
  // Alex's code still works after all that.
  const used = await (await signUpPage()).submit({
    email: alex.email,
    invitation_code: alexCode!.code,
    password: PASSWORD,
  });
  assert.ok(allowed(used), used.body.slice(0, 400));
});

test('a reset code replaces a lost password and ends every sign-in made with it; others keep theirs', async (t) => {
  const { app, worker, invite, signUpPage } = await setup(t);
  const [person, other] = [await worker(), await worker()];
  for (const someone of [person, other])
    await app.database.db
      .updateTable('people')
      .set({ password_hash: await hashPassword('the forgotten one') })
      .where('id', '=', someone.personId)
      .execute();
  const scopes = ['user:read'];
  const [before, others] = [
    await userToken(app, person.personId, scopes),
    await userToken(app, other.personId, scopes),
  ];
  const status = async (token: string, personId: string) =>
    (
      await app.api.inject({
        url: `/rest/people/${personId}`,
        headers: { authorization: `Bearer ${token}` },
      })
    ).statusCode;
  assert.equal(await status(before, person.personId), 200);

  const [reset] = await invite([person.email], { reset: true });
  assert.equal(reset!.replacesPassword, true);
  const answer = await (await signUpPage()).submit({
    email: person.email,
    invitation_code: reset!.code,
    password: PASSWORD,
  });
  assert.ok(allowed(answer), answer.body.slice(0, 400));
  assert.equal(await authenticate(app.database.db, person.email, 'the forgotten one'), undefined);
  assert.equal(await authenticate(app.database.db, person.email, PASSWORD), person.personId);
  await eventually(async () => (await status(before, person.personId)) === 401);
  assert.equal(await status(before, person.personId), 401, 'a token of the old password is refused');
  assert.equal(await status(others, other.personId), 200, "another person's token stands");
  const grants = await app.database.db
    .selectFrom('oauth_payloads')
    .select('id')
    .where('model', '=', 'Grant')
    .where(sql<string>`payload->>'accountId'`, '=', person.personId)
    .execute();
  assert.deepEqual(grants, [], 'the grant of the old sign-in is gone');
});

test('the sign-in page says where a lost password is replaced', async (t) => {
  const { signUpPage } = await setup(t, { asProduction: true });
  const { login } = await signUpPage();
  assert.match(login.body, /Lost your password\? Ask your employer for a reset code/);
});

test('a form that sends a field twice is refused, and nothing is used', async (t) => {
  const { app, worker, invite, signUpPage } = await setup(t);
  const [alex, bailey] = [await worker(), await worker()];
  const [alexCode] = await invite([alex.email]);
  const [baileyCode] = await invite([bailey.email]);
  const answer = await (await signUpPage()).submitRaw(
    new URLSearchParams([
      ['email', alex.email],
      ['invitation_code', baileyCode!.code],
      ['invitation_code', alexCode!.code],
      ['password', PASSWORD],
    ]).toString(),
  );
  assert.equal(answer.response.status, 400);
  assert.match(answer.body, /sends invitation_code more than once/);
  assert.equal(await passwordHash(app, alex.personId), null);
});
