import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import {
  advanceRequest,
  availableMinor,
  createFundedWorker,
  openMoneyWorld,
  postAdvance,
  startApiProcesses,
} from '../helpers/money-world.ts';
import { onPostgres } from '../helpers/test-database.ts';

const MANY_ADVANCES = { daily_transfer_count_max: 1000, daily_transfer_amount_max_minor: 100_000_000 };
/** Default policy (50 % accessible of net, 25 % withheld): 80,000 earned makes 30,000 available. */
const GROSS_FOR_30_000 = 80_000;

test('balances kept by two API processes stay exact under advances of one person and of many at once', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const env = { ...world.env, EWA_DUPLICATE_TRANSFER_WINDOW_SECONDS: '0' };
  const urls = await startApiProcesses(world, env, 2);
  const workers = [];
  for (let i = 0; i < 5; i++)
    workers.push(
      await createFundedWorker(world, urls[i % 2]!, { policy: MANY_ADVANCES, grossMinor: GROSS_FOR_30_000 }),
    );

  // 12 advances of 1,000 to 2,900 for each of five people, and 40 of 1,000 more for the first (above their
  // balance), all at once across both processes.
  const requests = workers.flatMap((worker, w) =>
    Array.from({ length: w === 0 ? 52 : 12 }, (_, i) => ({ worker, amount: 1000 + ((i * 170) % 2000) })),
  );
  const answers = await Promise.all(
    requests.map(({ worker, amount }, i) =>
      postAdvance(urls[i % 2]!, worker, advanceRequest(worker, amount), randomUUID()),
    ),
  );
  const unexpected = answers.filter(
    (answer) => answer.status !== 200 && answer.json.errors?.[0]?.code !== 'EARNINGS_BALANCE_EXCEEDED',
  );
  assert.deepEqual(
    unexpected.map((answer) => `${answer.status} ${answer.text}`),
    [],
  );

  for (const worker of workers) {
    const taken = requests.reduce(
      (sum, request, i) =>
        request.worker === worker && answers[i]!.status === 200 ? sum + request.amount : sum,
      0,
    );
    for (const url of urls) assert.equal(await availableMinor(url, worker), 30_000 - taken);
    const { rows } = await sql<{ kept: string; entries: string }>`select la.balance_minor::text as kept,
        (select sum(case when e.direction = 'CREDIT' then e.amount_minor else -e.amount_minor end)
          from ledger_entries e where e.ledger_account_id = la.id)::text as entries
      from ledger_accounts la where la.account_id = ${worker.balanceAccountId}::uuid`.execute(world.db);
    assert.deepEqual(rows, [{ kept: String(30_000 - taken), entries: String(30_000 - taken) }]);
  }
  assert.ok(
    answers.some((answer) => answer.json.errors?.[0]?.code === 'EARNINGS_BALANCE_EXCEEDED'),
    'the first person asked for more than they had',
  );
  assert.deepEqual(await checkLedgerInvariants(world.db), []);
});
