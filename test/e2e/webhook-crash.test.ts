import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createWebhooks } from '../../src/webhooks/webhooks.ts';
import { buildTestAppOn, FIXED_NOW } from '../helpers/build-test-app.ts';
import { createOrganization, linkedClientToken, restClient } from '../helpers/factories.ts';
import { createPaidWorker } from '../helpers/money.ts';
import { type CrashWorld, type DatabaseKind, openCrashWorld } from '../helpers/outbox-crash-world.ts';
import { onPostgres } from '../helpers/test-database.ts';
import { userToken } from '../helpers/tokens.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const CHILD = join(import.meta.dirname, '..', 'helpers', 'webhook-crash-child.ts');
const SILENT = { warn: () => {}, error: () => {} };
/** The receiver is on this host, as a sandbox on a laptop allows. */
const LOCAL_RECEIVERS = { EWA_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' };

/** Runs the child in a mode; resolves with how it ended and what it printed. `started` sees it running. */
function runChild(
  world: CrashWorld,
  mode: string,
  input: Record<string, string>,
  started?: (kill: () => void) => void,
) {
  const child = spawn(process.execPath, [CHILD, mode, JSON.stringify(input)], {
    env: { PATH: process.env.PATH ?? '', ...world.env, ...LOCAL_RECEIVERS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  started?.(() => child.kill('SIGKILL'));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise<{ signal: NodeJS.Signals | null; code: number | null; output: string }>((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    }),
  );
}

for (const kind of ['PGlite', 'PostgreSQL'] as DatabaseKind[]) {
  test(`${kind}: kill -9 after commit, then kill -9 during the send: the event is still delivered`, {
    skip: kind === 'PostgreSQL' && !onPostgres ? 'DATABASE_URL is not set' : false,
  }, async (t) => {
    const world = await openCrashWorld(t, kind, 'sandbox');
    const receiver = await startReceiver(t);
    // A worker, and a partner's endpoint for transfers; what the setup caused is delivered and forgotten.
    const setup = await world.withDatabase(async (database) => {
      const app = await buildTestAppOn(t, { ...database, env: world.databaseEnv }, LOCAL_RECEIVERS, {
        now: () => FIXED_NOW,
      });
      try {
        const organizationId = await createOrganization(app);
        const { client, token } = await linkedClientToken(app, [organizationId], ['client:admin']);
        const created = await restClient(app, token).post('/rest/webhook_endpoints', {
          data: {
            type: 'webhook_endpoints',
            attributes: { url: receiver.url, event_types: ['transfer.created'] },
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        receiver.secrets.push(created.json().data.attributes.secret);
        const worker = await createPaidWorker(app, { organizationId, earnedMinor: 40_000, now: FIXED_NOW });
        // The worker signed in to the partner: their transfers' events may reach it.
        await userToken(app, worker.personId, ['user:read'], client.clientId);
        await app.webhooks.dispatcher.dispatchDue(FIXED_NOW);
        return worker;
      } finally {
        await Promise.all([app.api.close(), app.auth.close(), app.payments.close()]);
      }
    });
    receiver.received.length = 0;

    // 1. A process commits an advance and dies before sending anything.
    const advanced = await runChild(world, 'advance', {
      at: FIXED_NOW.toISOString(),
      personId: setup.personId,
      originId: setup.balanceAccountId,
      destinationId: setup.depositoryId,
    });
    assert.equal(advanced.signal, 'SIGKILL', advanced.output);
    const transferId = JSON.parse(
      advanced.output.split('\n').find((line) => line.includes('committed'))!,
    ).committed;

    // 2. Another process sends it, and dies while the receiver has it and has not answered yet.
    let arrived!: () => void;
    const held = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let answerHeld!: () => void;
    receiver.holdWith(async () => {
      arrived();
      await new Promise<void>((resolve) => {
        answerHeld = resolve;
      });
    });
    const dispatched = await runChild(world, 'dispatch', { at: FIXED_NOW.toISOString() }, (kill) => {
      held.then(kill);
    });
    assert.equal(dispatched.signal, 'SIGKILL', dispatched.output);
    receiver.holdWith(undefined);
    answerHeld();

    // 3. Once its lease has passed, a process that lives sends it again: at least once, with the same webhook-id.
    await world.withDatabase(async (database) => {
      const config = loadConfig({ ...world.env, ...LOCAL_RECEIVERS });
      // Leases run on real time: this test's is fake, and moves with the dispatches.
      let real = new Date(FIXED_NOW.getTime() + 1000);
      const webhooks = createWebhooks(database.db, config, {
        now: () => FIXED_NOW,
        realNow: () => real,
        logger: SILENT,
      });
      const early = await webhooks.dispatcher.dispatchDue(real);
      assert.equal(early.sent, 0, 'not before the lease has passed');
      real = new Date(FIXED_NOW.getTime() + 10 * 60_000);
      await webhooks.dispatcher.dispatchDue(real);
      const { rows } = await sql<{ left: string }>`select count(*) as left from outbox
        where topic = 'webhook.delivery'`.execute(database.db);
      assert.equal(Number(rows[0]!.left), 0);
    });
    await receiver.until((all) => all.some((r) => r.answered === 200));
    const mine = receiver.received.filter((r) => r.payload.data.id === transferId);
    assert.ok(mine.length >= 2, `received ${mine.length}`);
    assert.ok(mine.every((r) => r.verified && r.payload.type === 'transfer.created'));
    assert.equal(new Set(mine.map((r) => r.id)).size, 1, 'one event id on every attempt');
  });
}
