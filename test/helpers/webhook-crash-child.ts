/**
 * One process of the webhook crash test (test/e2e/webhook-crash.test.ts), on the database its environment names
 * (EWA_DATA_DIR or DATABASE_URL), on a fixed clock:
 * - `advance <json>`: takes an advance through the money core and, once it has committed, kills itself with
 *   SIGKILL before anything is sent;
 * - `dispatch <json>`: sends the due webhook deliveries as `ewa serve` does (the test kills it mid-send).
 */
import { writeSync } from 'node:fs';
import { enableCompileCache } from 'node:module';

enableCompileCache();
const [mode, argument] = process.argv.slice(2);
const input = JSON.parse(argument ?? '{}') as Record<string, string>;
const { loadConfig } = await import('../../src/config.ts');
const { openDatabase } = await import('../../src/db/database.ts');
const config = loadConfig(process.env);
const database = await openDatabase(config.database);
const at = new Date(input.at ?? Date.now());
const logger = {
  warn: (object: object, message?: string) => console.error(message, object),
  error: (object: object, message?: string) => console.error(message, object),
};

if (mode === 'advance') {
  const { createMoneyCore } = await import('../../src/money/money-core.ts');
  const money = createMoneyCore(database.db, config, { now: () => at, realNow: () => at, logger });
  const view = await money.transfers.create(
    input.personId!,
    {
      id: undefined,
      amountMinor: 5000,
      currency: 'USD',
      schedule: 'NEXT_BUSINESS_DAY',
      preview: false,
      originId: input.originId!,
      destinationId: input.destinationId,
      personId: input.personId,
    },
    at,
  );
  writeSync(1, `${JSON.stringify({ committed: view.transfer.id })}\n`);
  process.kill(process.pid, 'SIGKILL');
}

if (mode === 'dispatch') {
  const { createWebhooks } = await import('../../src/webhooks/webhooks.ts');
  const webhooks = createWebhooks(database.db, config, { now: () => at, realNow: () => at, logger });
  const report = await webhooks.dispatcher.dispatchDue(at);
  writeSync(1, `${JSON.stringify({ report })}\n`);
  await database.close();
}
