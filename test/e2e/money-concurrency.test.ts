import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { startApiProcess } from '../helpers/ew-processes.ts';
import {
  advanceRequest,
  availableMinor,
  createFundedWorker,
  type HttpAnswer,
  openMoneyWorld,
  postAdvance,
} from '../helpers/money-world.ts';
import { onPostgres } from '../helpers/test-database.ts';

/** Room for many advances a day, so that only the balance limits them. */
const MANY_ADVANCES = { daily_transfer_count_max: 1000, daily_transfer_amount_max_minor: 100_000_000 };
/** Default policy (50 % accessible of net, 25 % withheld): 80,000 earned makes 30,000 available. */
const GROSS_FOR_30_000 = 80_000;

const codeOf = (answer: HttpAnswer) => answer.json.errors?.[0]?.code;

/** How many answers of each status and code, for failure messages: {"200":30,"400 EARNINGS_BALANCE_EXCEEDED":70}. */
function tally(answers: readonly HttpAnswer[]): string {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const label = `${answer.status} ${codeOf(answer) ?? ''}`.trim();
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return JSON.stringify(counts);
}

test('two API processes on one PostgreSQL never let a balance be spent twice', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  // No duplicate window: equal advances in a burst are what this test sends on purpose.
  const env = { ...world.env, EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0' };
  const servers = [];
  // One after the other, each stopped at the end even if the next fails to start.
  for (let i = 0; i < 2; i++) {
    const server = await startApiProcess(env);
    world.onCleanup(() => server.kill());
    servers.push(server);
  }
  const urls = servers.map((server) => server.apiUrl);

  await t.test('100 advances at once, split across both processes, take at most the balance', async () => {
    const worker = await createFundedWorker(world, urls[0]!, {
      policy: MANY_ADVANCES,
      grossMinor: GROSS_FOR_30_000,
    });
    const before = await availableMinor(urls[1]!, worker);
    assert.equal(before, 30_000);
    // 100 × 1,000 against 30,000, all equal: with the duplicate window off, only the balance may refuse one.
    const amount = 1000;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        postAdvance(urls[i % 2]!, worker, advanceRequest(worker, amount), randomUUID()),
      ),
    );
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.deepEqual(
      [...new Set(refused.map((answer) => `${answer.status} ${codeOf(answer)}`))],
      refused.length === 0 ? [] : ['400 EARNINGS_BALANCE_EXCEEDED'],
      `every refusal is the balance, nothing else (no 500, no duplicate): ${tally(answers)}`,
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    const taken = accepted.reduce((sum, answer) => sum + Number(answer.json.data!.attributes.amount), 0);
    assert.ok(taken <= before, `took ${taken} of ${before}`);
    const after = await availableMinor(urls[0]!, worker);
    assert.equal(after, before - taken, 'the balance fell by exactly what was accepted');
    // A refusal saw less than its amount, and the balance only fell: none was refused while it could be paid.
    assert.ok(after < amount, `refused with ${after} still available`);
    assert.equal(accepted.length, 30, tally(answers));
    const { rows } = await sql<{ n: number; total: number }>`select count(*)::integer as n,
        coalesce(sum(amount_minor), 0)::bigint as total
      from transfers where person_id = ${worker.personId} and origin_account_id is not null`.execute(
      world.db,
    );
    assert.deepEqual(rows[0], { n: accepted.length, total: taken }, 'one transfer row per 200, no more');
    assert.deepEqual(await checkLedgerInvariants(world.db), []);
  });

  await t.test('one Idempotency-Key from 20 clients at once makes one transfer', async () => {
    const worker = await createFundedWorker(world, urls[1]!, {
      policy: MANY_ADVANCES,
      grossMinor: GROSS_FOR_30_000,
    });
    const key = randomUUID();
    const body = advanceRequest(worker, 2500);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postAdvance(urls[i % 2]!, worker, body, key)),
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    const others = answers.filter((answer) => answer.status !== 200);
    assert.ok(accepted.length >= 1, 'the request that held the key answered');
    for (const answer of accepted)
      assert.equal(answer.text, accepted[0]!.text, 'every 200 is the same bytes');
    for (const answer of others)
      assert.deepEqual([answer.status, codeOf(answer)], [409, 'IDEMPOTENCY_KEY_LOCKED'], answer.text);
    const { rows } = await sql<{ id: string }>`select id from transfers
      where person_id = ${worker.personId} and origin_account_id is not null`.execute(world.db);
    assert.deepEqual(
      rows.map((row) => row.id),
      [accepted[0]!.json.data!.id],
    );
    const replay = await postAdvance(urls[0]!, worker, body, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.text, accepted[0]!.text, 'a retry after they all finished replays the answer');
    assert.equal(await availableMinor(urls[0]!, worker), 30_000 - 2500);
    assert.deepEqual(await checkLedgerInvariants(world.db), []);
  });

  for (const server of servers) assert.equal(await server.stop(), 0, server.output());
});
