import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/database.ts';
import { signUp } from '../../src/oauth/accounts.ts';
import { activateJob, deactivateJob } from '../../src/operator/jobs.ts';
import { setOrganizationPolicy } from '../../src/operator/organizations.ts';
import { importRoster } from '../../src/operator/roster-import.ts';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { type ApiProcess, startApiProcess } from '../helpers/ew-processes.ts';
import { bankAccountBody } from '../helpers/factories.ts';
import {
  advanceRequest,
  createClientByCli,
  createFundedWorker,
  type FundedWorker,
  type HttpAnswer,
  httpJson,
  type MoneyWorld,
  openMoneyWorld,
  postAdvance,
} from '../helpers/money-world.ts';
import { holdRows } from '../helpers/row-hold.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * Every check an advance (or a sign-up) makes against something another request may change at the same moment,
 * raced on PostgreSQL across two API processes. Two kinds of trial:
 * - pairs sent at the same moment, many rounds, each pair's answers one of the allowed pairs and the database
 *   agreeing with them;
 * - the decisive interleaving, forced: the advance has read and is held before it writes (the test holds the rows
 *   it must write), and the other request runs meanwhile. It must wait for the advance to commit: had it finished
 *   while the advance was held, the advance would commit on what it read before that change.
 */

/** Room for many advances a day, so that only the races decide. */
const MANY_ADVANCES = { daily_transfer_count_max: 1000, daily_transfer_amount_max_minor: 100_000_000 };
/** 200,000 earned makes 75,000 available (default policy): enough for every round's advance of 1,000. */
const GROSS = 200_000;
const AMOUNT = 1000;
const ROUNDS = 24;

const codeOf = (answer: HttpAnswer) => answer.json.errors?.[0]?.code ?? '';
const outcome = (answer: HttpAnswer) => `${answer.status}${codeOf(answer) ? ` ${codeOf(answer)}` : ''}`;

function tally(labels: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const label of labels) counts[label] = (counts[label] ?? 0) + 1;
  return counts;
}

/** Every label is one of the allowed ones; how many of each there were is shown in the test's output. */
function assertAllowed(t: TestContext, labels: readonly string[], allowed: readonly string[]): void {
  const counts = tally(labels);
  t.diagnostic(`${labels.length} pairs: ${JSON.stringify(counts)}`);
  for (const label of Object.keys(counts))
    assert.ok(allowed.includes(label), `${label} is not an allowed pair: ${JSON.stringify(counts)}`);
}

let accountNumbers = 0;

/** A new bank account of the worker, through the REST API. */
async function addBankAccount(url: string, worker: FundedWorker): Promise<string> {
  const number = `7${String(++accountNumbers).padStart(5, '0')}${worker.personId.replace(/\D/g, '').slice(0, 6)}`;
  const answer = await httpJson(`${url}/rest/accounts`, worker.token, {
    method: 'POST',
    body: bankAccountBody(worker.personId, { name: 'Checking' }, { account_number: number }),
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.json.data!.id;
}

/** A Visa number of 16 digits that passes the Luhn check, different on every call. */
function freshCardNumber(): string {
  const body = `4${String(Date.now() % 1e9).padStart(9, '0')}${String(++accountNumbers).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** A new debit card account of the worker: a card token as the tokenization endpoint issues it, then REST. */
async function addCard(url: string, worker: FundedWorker, keys: CardTokenKeys): Promise<string> {
  const card = {
    card_number: freshCardNumber(),
    expiration_month: '02',
    expiration_year: String(new Date().getUTCFullYear() + 3),
    first_name: 'Robin',
    last_name: 'Lee',
    address_line_one: '1 Main St',
    address_city: 'Albany',
    address_state: 'NY',
    address_zip_code: '12207',
    address_country: 'US',
  };
  const { token } = await keys.issue(card, new Date(), 900);
  const { card_number: _number, ...details } = card;
  const answer = await httpJson(`${url}/rest/accounts`, worker.token, {
    method: 'POST',
    body: {
      data: {
        type: 'accounts',
        attributes: {
          name: 'Debit card',
          account_type: 'CARD',
          subtype: 'DEBIT',
          details: { ...details, token },
        },
        relationships: { person: { data: { type: 'people', id: worker.personId } } },
      },
    },
  });
  assert.equal(answer.status, 200, answer.text);
  return answer.json.data!.id;
}

function advanceTo(worker: FundedWorker, destinationId: string) {
  const body = advanceRequest(worker, AMOUNT);
  body.data.relationships.destination.data.id = destinationId;
  return body;
}

/** DELETE with no body, and so no Content-Type: what a client sends. */
async function deleteAccount(url: string, worker: FundedWorker, id: string): Promise<HttpAnswer> {
  const response = await fetch(`${url}/rest/accounts/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${worker.token}` },
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : {} };
}

function patchJob(url: string, worker: FundedWorker, data: Record<string, unknown>): Promise<HttpAnswer> {
  return httpJson(`${url}/rest/jobs/${worker.jobId}`, worker.token, {
    method: 'PATCH',
    body: { data: { type: 'jobs', id: worker.jobId, ...data } },
  });
}

/** Transfers still PENDING to an account deleted since: what no interleaving may leave. */
async function pendingToDeleted(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select t.id from transfers t
    join accounts a on a.id = t.destination_account_id
    where t.status = 'PENDING' and a.deleted_at is not null`.execute(db);
  return rows.map((row) => row.id);
}

/** Jobs whose default depository or card is a deleted account. */
async function defaultsDeleted(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select j.id from jobs j
    join accounts a on a.id in (j.direct_deposit_default_depository_id, j.direct_deposit_default_card_id)
    where a.deleted_at is not null`.execute(db);
  return rows.map((row) => row.id);
}

/** Waits until `condition` holds, for at most `timeoutMs`; says whether it did. */
async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** The database sessions waiting for a lock that session `pid` holds. */
async function blockedBy(db: Db, pid: number): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
    where ${pid}::integer = any(pg_blocking_pids(pid))`.execute(db);
  return rows.map((row) => row.pid);
}

/**
 * Forces the interleaving a race needs: the test locks the paychecks the worker's advance will debit, so that
 * the advance, sent to `url`, reads everything it checks and then waits before it writes. Then `write` runs. It
 * must wait for the advance (the advance holds what every writer of its inputs takes): `settledWhileHeld` says
 * whether it finished while the advance was held, which is the race. Then the hold is released and both finish.
 */
async function whileAdvanceHeld<T>(
  world: MoneyWorld,
  url: string,
  worker: FundedWorker,
  body: unknown,
  write: () => Promise<T>,
): Promise<{ advance: HttpAnswer; written: T; settledWhileHeld: boolean }> {
  const hold = await holdRows(world, 'select id from paychecks where job_id = $1 for update', [worker.jobId]);
  const advance = postAdvance(url, worker, body, randomUUID());
  let advancePid: number | undefined;
  const held = await until(async () => {
    advancePid = (await blockedBy(world.db, hold.pid))[0];
    return advancePid !== undefined;
  });
  if (!held) {
    await hold.release();
    assert.fail(`the advance never reached its write: ${(await advance).text}`);
  }
  let settled = false;
  const writing = write().finally(() => {
    settled = true;
  });
  // Finished, or waiting for the advance's locks: either way, what it does while the advance is held is known.
  const decided = await until(async () => settled || (await blockedBy(world.db, advancePid!)).length > 0);
  const settledWhileHeld = settled;
  await hold.release();
  const [advanceAnswer, written] = await Promise.all([advance, writing]);
  assert.ok(decided, 'the other request neither finished nor waited for the advance within 10 s');
  return { advance: advanceAnswer, written, settledWhileHeld };
}

/** Two processes on one schema: the first runs one advance transaction at a time, so advances queue and batch. */
async function startProcesses(world: MoneyWorld): Promise<{ urls: string[]; servers: ApiProcess[] }> {
  const env = {
    ...world.env,
    EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0',
    EWA_ACCOUNTS_PER_PERSON_MAX: '1000',
  };
  const servers: ApiProcess[] = [];
  for (const extra of [{ EWA_TRANSFERS_IN_FLIGHT_MAX: '1' }, {}] as Record<string, string>[]) {
    const server = await startApiProcess({ ...env, ...extra });
    world.onCleanup(() => server.kill());
    servers.push(server);
  }
  return { urls: servers.map((server) => server.apiUrl), servers };
}

function workers(world: MoneyWorld, url: string, count: number): Promise<FundedWorker[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      createFundedWorker(world, url, { policy: MANY_ADVANCES, grossMinor: GROSS }),
    ),
  );
}

test('check-then-write pairs on two API processes never both act on a stale check', async (t: TestContext) => {
  if (!onPostgres) {
    t.skip(
      'needs PostgreSQL: set DATABASE_URL (the races are between server processes sharing one database)',
    );
    return;
  }
  const world = await openMoneyWorld(t);
  const { urls, servers } = await startProcesses(world);
  const [a, b] = urls as [string, string];
  const cardKeys = await CardTokenKeys.fromConfig(loadConfig(world.env).cards.tokenKeys);

  await t.test('an account deleted while an advance is sent to it: one of them is refused', async (st) => {
    const people = await workers(world, a, 4);
    const pairs: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round, every worker's pair at once; the processes swap roles every round.
      const [toAdvance, toDelete] = round % 2 === 0 ? [a, b] : [b, a];
      await Promise.all(
        people.map(async (worker) => {
          const account = await addBankAccount(toDelete, worker);
          const [advance, deleted] = await Promise.all([
            postAdvance(toAdvance, worker, advanceTo(worker, account), randomUUID()),
            deleteAccount(toDelete, worker, account),
          ]);
          pairs.push(`${outcome(advance)} / ${outcome(deleted)}`);
        }),
      );
    }
    assertAllowed(st, pairs, ['200 / 400 INVALID_RESOURCE_STATE', '400 INVALID_DESTINATION / 204']);
    assert.deepEqual(await pendingToDeleted(world.db), [], 'no PENDING transfer to a deleted account');

    const [worker] = people as [FundedWorker];
    const account = await addBankAccount(a, worker);
    const held = await whileAdvanceHeld(world, a, worker, advanceTo(worker, account), () =>
      deleteAccount(b, worker, account),
    );
    assert.equal(held.settledWhileHeld, false, `the delete answered ${outcome(held.written)} meanwhile`);
    assert.deepEqual([outcome(held.advance), outcome(held.written)], ['200', '400 INVALID_RESOURCE_STATE']);
    assert.deepEqual(await pendingToDeleted(world.db), []);
  });

  await t.test('a card deleted while an advance is sent to it: one of them is refused', async (st) => {
    const people = await workers(world, b, 2);
    const pairs: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [toAdvance, toDelete] = round % 2 === 0 ? [b, a] : [a, b];
      await Promise.all(
        people.map(async (worker) => {
          const card = await addCard(toDelete, worker, cardKeys);
          const [advance, deleted] = await Promise.all([
            postAdvance(toAdvance, worker, advanceTo(worker, card), randomUUID()),
            deleteAccount(toDelete, worker, card),
          ]);
          pairs.push(`${outcome(advance)} / ${outcome(deleted)}`);
        }),
      );
    }
    assertAllowed(st, pairs, ['200 / 400 INVALID_RESOURCE_STATE', '400 INVALID_DESTINATION / 204']);
    assert.deepEqual(await pendingToDeleted(world.db), []);

    const [worker] = people as [FundedWorker];
    const card = await addCard(b, worker, cardKeys);
    const held = await whileAdvanceHeld(world, b, worker, advanceTo(worker, card), () =>
      deleteAccount(a, worker, card),
    );
    assert.equal(held.settledWhileHeld, false, `the delete answered ${outcome(held.written)} meanwhile`);
    assert.deepEqual([outcome(held.advance), outcome(held.written)], ['200', '400 INVALID_RESOURCE_STATE']);
  });

  await t.test('an account made a default while it is deleted: one of them is refused', async (st) => {
    const people = await workers(world, a, 2);
    const pairs: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [toPatch, toDelete] = round % 2 === 0 ? [a, b] : [b, a];
      await Promise.all(
        people.map(async (worker, i) => {
          // One worker's bank account default, the other's card default.
          const asCard = i % 2 === 1;
          const account = asCard
            ? await addCard(toDelete, worker, cardKeys)
            : await addBankAccount(toDelete, worker);
          const relationship = asCard ? 'direct_deposit_default_card' : 'direct_deposit_default_depository';
          const [patched, deleted] = await Promise.all([
            patchJob(toPatch, worker, {
              relationships: { [relationship]: { data: { type: 'accounts', id: account } } },
            }),
            deleteAccount(toDelete, worker, account),
          ]);
          pairs.push(`${asCard ? 'card' : 'bank account'}: ${outcome(patched)} / ${outcome(deleted)}`);
        }),
      );
    }
    // A default card beside the job's default bank account is only its fallback: deleted after the PATCH, it goes
    // and is cleared from the job; the sole default bank account stays.
    assertAllowed(st, pairs, [
      'bank account: 200 / 400 INVALID_RESOURCE_STATE',
      'bank account: 400 INVALID_RESOURCE_LINK / 204',
      'card: 200 / 204',
      'card: 200 / 400 INVALID_RESOURCE_STATE',
      'card: 400 INVALID_RESOURCE_LINK / 204',
    ]);
    assert.deepEqual(await defaultsDeleted(world.db), [], 'no job defaults to a deleted account');
  });

  await t.test(
    'a job deactivated (REST, operator, roster) while an advance is sent: the advance waits',
    async (st) => {
      const people = await workers(world, b, 2);
      const pairs: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const [toAdvance, toPatch] = round % 2 === 0 ? [a, b] : [b, a];
        await Promise.all(
          people.map(async (worker) => {
            await activateJob(world.db, worker.jobId);
            const [advance, patched] = await Promise.all([
              postAdvance(toAdvance, worker, advanceRequest(worker, AMOUNT), randomUUID()),
              patchJob(toPatch, worker, { attributes: { activation_status: 'DEACTIVATED' } }),
            ]);
            pairs.push(`${outcome(advance)} / ${outcome(patched)}`);
          }),
        );
      }
      assertAllowed(st, pairs, ['200 / 200', '400 INELIGIBLE_ORIGIN / 200']);

      const [worker] = people as [FundedWorker];
      const { organizationId } = worker;
      const email = `${worker.personId}@people.example`;
      const { rows } = await sql<{ external_primary_identifier: string }>`select external_primary_identifier
      from jobs where id = ${worker.jobId}`.execute(world.db);
      const roster = [
        'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency,activation_status',
        `${rows[0]!.external_primary_identifier},Robin,Lee,${email},20.00,HOURLY,DEACTIVATED`,
      ].join('\n');
      const writers: Record<string, () => Promise<unknown>> = {
        'PATCH /rest/jobs': () => patchJob(b, worker, { attributes: { activation_status: 'DEACTIVATED' } }),
        'ewa jobs deactivate': () => deactivateJob(world.db, worker.jobId),
        'roster import': () => importRoster(world, { organizationId, source: [roster] }),
      };
      for (const [name, write] of Object.entries(writers)) {
        await activateJob(world.db, worker.jobId);
        const held = await whileAdvanceHeld(world, a, worker, advanceRequest(worker, AMOUNT), write);
        assert.equal(held.settledWhileHeld, false, `${name} deactivated the job while the advance was held`);
        assert.equal(outcome(held.advance), '200', `${name}: ${held.advance.text}`);
        const job = await world.db
          .selectFrom('jobs')
          .select('activation_status')
          .where('id', '=', worker.jobId)
          .executeTakeFirstOrThrow();
        assert.equal(job.activation_status, 'DEACTIVATED', name);
      }
    },
  );

  await t.test(
    "the employer's policy or the person's disallow_reason changed while an advance is sent",
    async (st) => {
      const people = await workers(world, a, 2);
      const pairs: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const toAdvance = round % 2 === 0 ? a : b;
        await Promise.all(
          people.map(async (worker) => {
            await setOrganizationPolicy(world.db, worker.organizationId, { transfersEnabled: true });
            const [advance] = await Promise.all([
              postAdvance(toAdvance, worker, advanceRequest(worker, AMOUNT), randomUUID()),
              setOrganizationPolicy(world.db, worker.organizationId, { transfersEnabled: false }),
            ]);
            pairs.push(outcome(advance));
          }),
        );
      }
      assertAllowed(st, pairs, ['200', '400 TRANSFERS_DISABLED']);

      const [worker, other] = people as [FundedWorker, FundedWorker];
      await setOrganizationPolicy(world.db, worker.organizationId, { transfersEnabled: true });
      const policy = await whileAdvanceHeld(world, b, worker, advanceRequest(worker, AMOUNT), () =>
        setOrganizationPolicy(world.db, worker.organizationId, { transfersEnabled: false }),
      );
      assert.equal(policy.settledWhileHeld, false, 'the policy changed while the advance was held');
      assert.equal(outcome(policy.advance), '200', policy.advance.text);

      // No command sets disallow_reason yet; whatever sets it writes the person's row, as this statement does.
      await setOrganizationPolicy(world.db, other.organizationId, { transfersEnabled: true });
      const disallowed = await whileAdvanceHeld(world, a, other, advanceRequest(other, AMOUNT), () =>
        sql`update people set disallow_reason = 'DELINQUENT' where id = ${other.personId}`.execute(world.db),
      );
      assert.equal(disallowed.settledWhileHeld, false, 'disallow_reason changed while the advance was held');
      const after = await postAdvance(b, other, advanceRequest(other, AMOUNT), randomUUID());
      assert.equal(outcome(after), '400 TRANSFERS_DISABLED');
    },
  );

  await t.test('a sign-up with an employee id the roster replaces at that moment is refused', async () => {
    const [worker] = await workers(world, b, 1);
    const { organizationId, personId, jobId } = worker!;
    const email = `${personId}@people.example`;
    const job = await world.db
      .selectFrom('jobs')
      .select(['external_primary_identifier', 'external_employee_id'])
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    const oldEmployeeId = job.external_employee_id!;
    // The roster corrects the worker's name and replaces the employee id, in one transaction.
    const roster = [
      'primary_identifier,employee_id,first_name,last_name,email,wage_amount,wage_frequency',
      `${job.external_primary_identifier},NEW-${oldEmployeeId},Robyn,Lee,${email},20.00,HOURLY`,
    ].join('\n');
    // The test holds the job row: the import locks the person, then waits for the job; the sign-up meanwhile
    // waits for the person, and goes on once the import has committed.
    const hold = await holdRows(world, 'select id from jobs where id = $1 for update', [jobId]);
    const importing = importRoster(world, { organizationId, source: [roster] });
    let importPid: number | undefined;
    assert.ok(
      await until(async () => {
        importPid = (await blockedBy(world.db, hold.pid))[0];
        return importPid !== undefined;
      }),
      'the import never waited for the job',
    );
    const signingUp = signUp(world.db, {
      email,
      employeeId: oldEmployeeId,
      password: 'a long enough password',
    });
    const waited = await until(async () => (await blockedBy(world.db, importPid!)).length > 0);
    await hold.release();
    const [imported, signedUp] = await Promise.all([importing, signingUp]);
    assert.ok(waited, 'the sign-up did not wait for the import');
    assert.equal(imported.updated, 1, JSON.stringify(imported.problems));
    assert.ok('problem' in signedUp, 'the sign-up matched an employee id the roster had replaced');
    const person = await world.db
      .selectFrom('people')
      .select('password_hash')
      .where('id', '=', personId)
      .executeTakeFirstOrThrow();
    assert.equal(person.password_hash, null);
    const withNewId = await signUp(world.db, {
      email,
      employeeId: `NEW-${oldEmployeeId}`,
      password: 'a long enough password',
    });
    assert.deepEqual(withNewId, { personId });
  });

  await t.test(
    "webhook endpoints registered at once on both processes never pass the client's limit",
    async () => {
      const { client_id: clientId, client_secret: secret } = await createClientByCli(
        world.env,
        'client:admin',
      );
      const tokenAnswer = await fetch(`${servers[0]!.authUrl}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: 'client:admin',
          client_id: clientId,
          client_secret: secret,
        }),
      });

      const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;
      const limit = 20;
      const answers = await Promise.all(
        Array.from({ length: limit + 10 }, (_, i) =>
          httpJson(`${i % 2 === 0 ? a : b}/rest/webhook_endpoints`, token, {
            method: 'POST',
            body: {
              data: { type: 'webhook_endpoints', attributes: { url: `https://partner.example/hooks/${i}` } },
            },
          }),
        ),
      );
      assert.deepEqual(tally(answers.map(outcome)), { '201': limit, '400 INVALID_PARAMETERS': 10 });
      const { rows } = await sql<{ n: number }>`select count(*)::integer as n from webhook_endpoints
      where client_id = ${clientId}`.execute(world.db);
      assert.equal(rows[0]!.n, limit);
    },
  );

  for (const server of servers) assert.equal(await server.stop(), 0, server.output());
});
