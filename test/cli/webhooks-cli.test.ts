import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO } from '../../src/seed/demo.ts';
import { cliDatabaseEnv, ewa } from '../helpers/cli.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const ZERO_ID = '00000000-0000-4000-8000-000000000000';

test('ewa webhooks: add, list, test, deliveries, redeliver, disable/enable, rotate-secret, remove', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'seed', '--json')).code, 0);
  const receiver = await startReceiver(t);
  const client = DEMO.clients.confidential.clientId;
  const added = await ewa(
    env,
    'webhooks',
    'add',
    '--client',
    client,
    '--url',
    receiver.url,
    '--events',
    'transfer.created,transfer.settled',
    '--json',
  );
  assert.equal(added.code, 0, added.stderr);
  const endpoint = added.json();
  assert.deepEqual(endpoint.event_types, ['transfer.created', 'transfer.settled']);
  assert.match(endpoint.secret, /^whsec_/);
  receiver.secrets.push(endpoint.secret);

  const listed = await ewa(env, 'webhooks', 'list', '--client', client);
  assert.match(listed.stdout, new RegExp(`${endpoint.id} +${client} +ENABLED`));

  const tested = await ewa(env, 'webhooks', 'test', endpoint.id);
  assert.equal(tested.code, 0, tested.stderr + tested.stdout);
  assert.match(tested.stdout, /DELIVERED +200/);
  assert.equal(receiver.received.at(-1)?.payload.type, 'webhook.test');
  assert.ok(receiver.received.at(-1)?.verified);

  receiver.answerWith(() => 500);
  const failing = await ewa(env, 'webhooks', 'test', endpoint.id);
  assert.equal(failing.code, 1);
  assert.match(failing.stdout, /FAILED +500/);
  // The retry's warning says why, not "err":{}.
  assert.match(failing.stderr, /will be retried .*"err":\{"type":"\w+","message":"[^"]+"\}/);
  const log = await ewa(env, 'webhooks', 'deliveries', '--endpoint', endpoint.id, '--json');
  assert.deepEqual(
    log.json().map((d: { outcome: string; status_code: number }) => [d.outcome, d.status_code]),
    [
      ['FAILED', 500],
      ['DELIVERED', 200],
    ],
  );

  receiver.answerWith(() => 200);
  const firstEvent = receiver.received[0]!.id;
  const disabled = await ewa(env, 'webhooks', 'disable', endpoint.id);
  assert.match(disabled.stdout, /DISABLED \(Disabled by request\.\)/);
  const refused = await ewa(env, 'webhooks', 'redeliver', '--event', firstEvent, '--endpoint', endpoint.id);
  assert.equal(refused.code, 1, 'refused by the endpoint: the command ran and failed');
  assert.match(refused.stderr, /disabled: enable it before redelivering/);
  assert.equal((await ewa(env, 'webhooks', 'enable', endpoint.id)).code, 0);
  const again = await ewa(env, 'webhooks', 'redeliver', '--event', firstEvent, '--endpoint', endpoint.id);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /Queued 1 delivery\./);

  const rotated = await ewa(env, 'webhooks', 'rotate-secret', endpoint.id, '--overlap-seconds', '0');
  assert.equal(rotated.code, 0, rotated.stderr);
  assert.match(rotated.stdout, /^secret {2}whsec_/);

  for (const [argv, code, message] of [
    [['webhooks', 'add', '--client', 'ghost', '--url', receiver.url], 1, /No client ghost/],
    [['webhooks', 'add', '--client', client, '--url', 'gopher://x'], 2, /url must start with/],
    [
      ['webhooks', 'add', '--client', client, '--url', receiver.url, '--events', 'nope'],
      2,
      /unknown types \(nope\)/,
    ],
    [['webhooks', 'remove', 'nope'], 2, /ENDPOINT_ID must be a UUID \(got "nope"\)/],
    [['webhooks', 'remove', ZERO_ID], 1, /No webhook endpoint 0{8}-0{4}-4000-8000-0{12}\.\n$/],
    [
      ['webhooks', 'redeliver', '--endpoint', endpoint.id, '--from', 'yesterday', '--to', 'now'],
      2,
      /--from must be an instant/,
    ],
    [['webhooks', 'redeliver', '--endpoint', endpoint.id], 2, /either one event/],
    [['webhooks', 'deliveries', '--limit', '0'], 2, /--limit must be a whole number/],
  ] as const) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  assert.equal((await ewa(env, 'webhooks', 'remove', endpoint.id)).code, 0);
  assert.match((await ewa(env, 'webhooks', 'list')).stdout, /No webhook endpoints\./);
});
