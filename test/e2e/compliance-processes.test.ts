import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { runCli } from '../../src/cli/run.ts';
import { advanceReadStatements } from '../../src/money/advances/advance-store.ts';
import { capture } from '../helpers/cli.ts';
import { startApiProcess } from '../helpers/ew-processes.ts';
import {
  advanceRequest,
  createFundedWorker,
  type FundedWorker,
  type HttpAnswer,
  openMoneyWorld,
  postAdvance,
} from '../helpers/money-world.ts';
import { onPostgres } from '../helpers/test-database.ts';

/**
 * An operator's change of the compliance rules, made by `ewa compliance` beside two running server processes on
 * one PostgreSQL, applies to the next advance of either process: each reads the rules' version counter with the
 * advance and reloads when it moved.
 */

const codeOf = (answer: HttpAnswer) => answer.json.errors?.[0]?.code ?? 'OK';

async function cli(env: Record<string, string>, ...argv: string[]) {
  const run = capture(env);
  const code = await runCli(argv, run.context);
  assert.equal(code, 0, `ewa ${argv.join(' ')}: ${run.stderr()}`);
}

/** A preview of an advance within thirty minutes (fee 300) on each process: the code each answers. */
async function previewOnEach(urls: readonly string[], worker: FundedWorker): Promise<string[]> {
  const body = advanceRequest(worker, 1000);
  const attributes = { ...body.data.attributes, schedule: 'WITHIN_THIRTY_MINUTES', preview: true };
  return Promise.all(
    urls.map(async (url) =>
      codeOf(await postAdvance(url, worker, { data: { ...body.data, attributes } }, randomUUID())),
    ),
  );
}

test('an override made by the CLI applies at once in two server processes on one PostgreSQL', async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: set DATABASE_URL (two server processes share one database)');
    return;
  }
  const world = await openMoneyWorld(t);
  const urls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const server = await startApiProcess(world.env);
    world.onCleanup(() => server.kill());
    urls.push(server.apiUrl);
  }
  const worker = await createFundedWorker(world, urls[0]!, {
    policy: { fee_bank_instant_minor: 300 },
    grossMinor: 40_000,
  });
  await world.db
    .updateTable('people')
    .set({ state_of_residence: 'CT' })
    .where('id', '=', worker.personId)
    .execute();
  // Connecticut asks for a disclosure first (test/api/disclosures.test.ts): the worker accepted the default one.
  await world.db
    .insertInto('disclosure_acceptances')
    .values({
      id: randomUUID(),
      person_id: worker.personId,
      document_id: 'd15c1051-0000-4000-8000-000000000001',
      version: 1,
      client_id: null,
      ip_address: null,
      accepted_at: new Date(),
    })
    .execute();

  // Both processes have read the rules once.
  assert.deepEqual(await previewOnEach(urls, worker), ['OK', 'OK']);
  await cli(
    world.env,
    'compliance',
    'set',
    'CT-FEE-CAP-ADVANCE',
    '--params',
    '{"tiers":[{"max_fee_minor":250}]}',
  );
  assert.deepEqual(await previewOnEach(urls, worker), ['MAXIMUM_FEE_EXCEEDED', 'MAXIMUM_FEE_EXCEEDED']);
  await cli(world.env, 'compliance', 'disable', 'CT-FEE-CAP-ADVANCE');
  assert.deepEqual(await previewOnEach(urls, worker), ['OK', 'OK']);
  await cli(
    world.env,
    'compliance',
    'set',
    'CT-NO-SERVICE',
    '--state',
    'CT',
    '--kind',
    'NO_SERVICE',
    '--params',
    '{"reason":"Licence pending."}',
    '--from',
    '2025-01-01',
    '--source',
    'Operator decision',
  );
  assert.deepEqual(await previewOnEach(urls, worker), ['TRANSFERS_DISABLED', 'TRANSFERS_DISABLED']);
  await cli(world.env, 'compliance', 'disable', 'CT-NO-SERVICE');
  assert.deepEqual(await previewOnEach(urls, worker), ['OK', 'OK']);
});

test("the money state's reads of the month's fees and the period's advances go through indexes", async (t) => {
  if (!onPostgres) {
    t.skip('needs PostgreSQL: EXPLAIN of the plans PostgreSQL makes');
    return;
  }
  const world = await openMoneyWorld(t);
  const now = new Date();
  const [, , , money] = advanceReadStatements(
    world.db,
    [
      {
        personId: randomUUID(),
        originId: randomUUID(),
        destinationId: undefined,
        amountMinor: 1000,
        clientId: undefined,
        recentSince: new Date(now.getTime() - 86_400_000),
        startedAt: now,
        twinSince: undefined,
        preview: false,
      },
    ],
    () => sql`true`,
  );
  const { rows } = await sql
    .raw(`explain ${money!.sql.replace(/\$(\d+)/g, (_m, n) => literal(money!.parameters[Number(n) - 1]))}`)
    .execute(world.db);
  const plan = (rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n');
  t.diagnostic(plan);
  for (const table of ['transfers', 'funding_sources', 'paychecks'])
    assert.doesNotMatch(plan, new RegExp(`Seq Scan on ${table}\\b`), `${table} is read by index:\n${plan}`);
});

/** A parameter as an SQL literal, for EXPLAIN of a statement with its values. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value))
    return `'{${value.map((item) => (item === null ? 'NULL' : `"${String(item)}"`)).join(',')}}'`;
  if (typeof value === 'number') return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}
