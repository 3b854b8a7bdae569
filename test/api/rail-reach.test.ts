import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { buildTestApp, FIXED_NOW } from '../helpers/build-test-app.ts';
import { advanceBody, createPaidWorker, postTransfer } from '../helpers/money.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';

/**
 * What the configured rails cannot pay is neither offered nor charged for: the ACH rail pays bank accounts on their
 * effective date, never within thirty minutes, whatever fee the employer set for it.
 */

/** An employer that sets a fee for every pair, bank instant included, and a paid worker of it. */
async function workerOn(t: TestContext, env: Record<string, string>) {
  const app = await buildTestApp(t, env, { now: () => FIXED_NOW });
  const worker = await createPaidWorker(app, {
    policy: { fee_bank_instant_minor: 150, fee_bank_next_day_minor: 50 },
    earnedMinor: 40_000,
    now: FIXED_NOW,
  });
  return { app, worker };
}

async function achEnv(t: TestContext): Promise<Record<string, string>> {
  const folder = await mkdtemp(join(tmpdir(), 'ewa-reach-'));
  t.after(() => rm(folder, { recursive: true, force: true }));
  const { EWA_BASE_URL, EWA_AUTH_URL, EWA_PAYMENTS_URL, ...ach } = PRODUCTION_RAIL_ENV;
  return { ...ach, EWA_ACH_OUTBOUND_DIR: join(folder, 'out'), EWA_ACH_INBOUND_DIR: join(folder, 'in') };
}

async function bankSchedules(worker: Awaited<ReturnType<typeof workerOn>>['worker']) {
  const read = await worker.api.get(`/rest/accounts/${worker.depositoryId}`);
  assert.equal(read.statusCode, 200, read.body);
  return read
    .json()
    .data.attributes.capabilities.transfer_destination.map(
      (option: { schedule: string; fee: number }) => `${option.schedule} ${option.fee}`,
    );
}

test('with the ACH rail, a bank account offers no transfer within thirty minutes, and one asked for is refused before anything is written', async (t) => {
  const { app, worker } = await workerOn(t, await achEnv(t));
  assert.deepEqual(await bankSchedules(worker), ['NEXT_BUSINESS_DAY 50']);
  const transfers = () =>
    app.database.db.selectFrom('transfers').select('id').where('person_id', '=', worker.personId).execute();
  const before = await transfers();
  for (const preview of [true, false]) {
    const refused = await postTransfer(
      app,
      worker.token,
      advanceBody(worker, { schedule: 'WITHIN_THIRTY_MINUTES', ...(preview ? { preview: true } : {}) }),
    );
    assert.equal(refused.statusCode, 400, refused.body);
    const [error] = refused.json().errors;
    assert.equal(error.code, 'INVALID_TRANSFER_SCHEDULE');
    assert.equal(
      error.detail,
      'This server pays DEPOSITORY accounts NEXT_BUSINESS_DAY only: its rail for them takes a business day or more.',
    );
    assert.deepEqual(error.source, { pointer: '/data/attributes/schedule' });
  }
  assert.deepEqual(await transfers(), before, 'nothing written');
  const nextDay = await postTransfer(app, worker.token, advanceBody(worker));
  assert.equal(nextDay.statusCode, 200, nextDay.body);
  assert.equal(nextDay.json().data.attributes.fee, 50);
});

test('on the sandbox rail the same employer offers and charges both bank schedules', async (t) => {
  const { app, worker } = await workerOn(t, {});
  assert.deepEqual(await bankSchedules(worker), ['WITHIN_THIRTY_MINUTES 150', 'NEXT_BUSINESS_DAY 50']);
  const instant = await postTransfer(
    app,
    worker.token,
    advanceBody(worker, { schedule: 'WITHIN_THIRTY_MINUTES' }),
  );
  assert.equal(instant.statusCode, 200, instant.body);
  assert.equal(instant.json().data.attributes.fee, 150);
});
