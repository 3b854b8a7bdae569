import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO } from '../../src/seed/demo.ts';
import { cliDatabaseEnv, ewa } from '../helpers/cli.ts';
import { PRODUCTION_RAIL_ENV } from '../helpers/production-env.ts';

test('clients: create, list, show, rotate-secret and delete, secrets shown once and stored hashed', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'seed', '--json')).code, 0);
  const created = await ewa(
    env,
    'clients',
    'create',
    '--name',
    'Acme Payroll App',
    '--confidential',
    '--scopes',
    'client:admin health:read openid user:read',
    '--redirect-uri',
    'https://app.acme.example/cb',
    '--organizations',
    DEMO.organizations.acme.id,
    '--logo-uri',
    'https://app.acme.example/logo.png',
    '--policy-uri',
    'https://app.acme.example/privacy',
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
  const client = created.json();
  assert.match(client.client_id, /^ewa_/);
  assert.ok(client.client_secret.length >= 40);
  assert.deepEqual(client.organizations, [DEMO.organizations.acme.id]);
  assert.equal(client.token_endpoint_auth_method, 'client_secret_basic');

  const listed = await ewa(env, 'clients', 'list', '--json');
  const ids = listed.json().map((entry: { client_id: string }) => entry.client_id);
  assert.ok(ids.includes(client.client_id) && ids.includes(DEMO.clients.confidential.clientId));
  assert.ok(!listed.stdout.includes(client.client_secret), 'the secret is never shown again');
  const shown = await ewa(env, 'clients', 'show', client.client_id);
  assert.match(shown.stdout, /Acme Payroll App/);
  assert.match(shown.stdout, /confidential \(client_secret_basic\)/);

  const rotated = await ewa(env, 'clients', 'rotate-secret', client.client_id, '--json');
  assert.notEqual(rotated.json().client_secret, client.client_secret);
  const publicClient = await ewa(
    env,
    'clients',
    'create',
    '--name',
    'Mobile',
    '--public',
    '--scopes',
    'openid user:read',
    '--redirect-uri',
    'com.acme.app:/cb',
    '--json',
  );
  assert.equal(publicClient.json().client_secret, null);
  const noSecret = await ewa(env, 'clients', 'rotate-secret', publicClient.json().client_id);
  assert.equal(noSecret.code, 1, 'refused by the record: the command ran and failed');
  assert.match(noSecret.stderr, /authenticates with none: it has no secret/);

  assert.equal((await ewa(env, 'clients', 'delete', client.client_id)).code, 0);
  assert.equal((await ewa(env, 'clients', 'show', client.client_id)).code, 1);
});

test('clients link and unlink: employers added to and taken from a client, each named, unknown ones refused', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'seed', '--json')).code, 0);
  const { acme, northwind } = DEMO.organizations;
  const client = (
    await ewa(
      env,
      'clients',
      'create',
      '--name',
      'Partner',
      '--confidential',
      '--scopes',
      'client:admin',
      '--json',
    )
  ).json().client_id as string;
  const linked = await ewa(
    env,
    'clients',
    'link',
    client,
    '--organizations',
    `${acme.id} ${northwind.id}`,
    '--json',
  );
  assert.equal(linked.code, 0, linked.stderr);
  assert.deepEqual([...linked.json().organizations].sort(), [acme.id, northwind.id].sort());
  const again = await ewa(env, 'clients', 'link', client, '--organizations', acme.id, '--json');
  assert.equal(again.code, 0, 'linking one already linked changes nothing');
  assert.equal(again.json().organizations.length, 2);
  const unlinked = await ewa(env, 'clients', 'unlink', client, '--organizations', acme.id);
  assert.equal(unlinked.code, 0, unlinked.stderr);
  assert.match(unlinked.stdout, new RegExp(`^organizations {2}${northwind.id}$`, 'm'));
  const ghost = '00000000-0000-4000-8000-000000000000';
  for (const [argv, code, message] of [
    [['clients', 'link', client, '--organizations', ghost], 1, new RegExp(`No organization ${ghost}\\.`)],
    [['clients', 'link', 'no-such-client', '--organizations', acme.id], 1, /No client no-such-client\./],
    [['clients', 'link', client], 2, /name the organizations to link with --organizations/],
    [
      ['clients', 'unlink', client, '--organizations', 'acme'],
      2,
      /--organizations must be a UUID \(got "acme"\)/,
    ],
  ] as const) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, code, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
  const shown = await ewa(env, 'clients', 'show', client, '--json');
  assert.deepEqual(shown.json().organizations, [northwind.id], 'a refused link changed nothing');
  assert.equal((await ewa(env, 'clients', 'delete', client)).code, 0);
  const deleted = await ewa(env, 'clients', 'link', client, '--organizations', acme.id);
  assert.equal(deleted.code, 1, 'a deleted client is no client');
});

test('clients create refuses what cannot be used, naming the flag', async (t) => {
  const env = await cliDatabaseEnv(t);
  const cases: [string[], RegExp][] = [
    [
      ['--name', 'x', '--public', '--scopes', 'client:admin', '--redirect-uri', 'https://a.example/cb'],
      /"client:admin" is not allowed for a public client/,
    ],
    [['--name', 'x', '--confidential', '--scopes', 'user:read'], /--redirect-uri is required/],
    [
      ['--name', 'x', '--confidential', '--scopes', 'user:read', '--redirect-uri', 'http://a.example/cb'],
      /--redirect-uri must use https/,
    ],
    [
      [
        '--name',
        'x',
        '--confidential',
        '--scopes',
        'user:read',
        '--redirect-uri',
        'https://a.example/cb#frag',
      ],
      /must not have a #fragment/,
    ],
    [['--name', 'x', '--confidential', '--scopes', 'nope'], /"nope" is not allowed/],
    [
      ['--name', 'x', '--confidential', '--public', '--scopes', 'health:read'],
      /exactly one of --public and --confidential/,
    ],
    [
      ['--name', 'x', '--confidential', '--scopes', 'health:read', '--auth-method', 'private_key_jwt'],
      /needs the client's public keys/,
    ],
    [
      ['--name', 'x', '--confidential', '--scopes', 'health:read', '--organizations', 'acme'],
      /--organizations must be a UUID \(got "acme"\)/,
    ],
  ];
  for (const [flags, message] of cases) {
    const result = await ewa(env, 'clients', 'create', ...flags);
    assert.equal(result.code, 2, flags.join(' '));
    assert.match(result.stderr, message);
  }
  const nowhere = await ewa(
    env,
    'clients',
    'create',
    '--name',
    'x',
    '--confidential',
    '--scopes',
    'health:read',
    '--organizations',
    '00000000-0000-4000-8000-000000000000',
  );
  assert.equal(nowhere.code, 1, 'an organization that does not exist: the command failed');
  assert.match(nowhere.stderr, /No organization 00000000-0000-4000-8000-000000000000/);
  const family = await ewa(env, 'clients', 'frobnicate');
  assert.equal(family.code, 2);
  assert.match(family.stderr, /unknown command "frobnicate".*ewa clients create/);
});

test('keys rotate adds a key; tokens issue mints a user token in the sandbox only', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.equal((await ewa(env, 'seed')).code, 0);
  const person = DEMO.people[0].id;
  const issued = await ewa(
    env,
    'tokens',
    'issue',
    '--person',
    person,
    '--client',
    DEMO.clients.public.clientId,
    '--scopes',
    'user:read user:read_write',
    '--json',
  );
  assert.equal(issued.code, 0, issued.stderr);
  const response = issued.json();
  assert.equal(response.token_type, 'Bearer');
  assert.equal(response.scope, 'user:read user:read_write');
  const [, payload] = response.access_token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  assert.equal(claims.sub, person);
  assert.equal(claims.client_id, DEMO.clients.public.clientId);
  const firstKid = JSON.parse(Buffer.from(response.access_token.split('.')[0], 'base64url').toString()).kid;

  const rotated = await ewa(env, 'keys', 'rotate', '--json');
  assert.equal(rotated.code, 0);
  assert.ok(!rotated.json().kids.includes(firstKid));
  const after = await ewa(
    env,
    'tokens',
    'issue',
    '--person',
    person,
    '--client',
    DEMO.clients.public.clientId,
    '--scopes',
    'user:read',
  );
  const newKid = JSON.parse(Buffer.from(after.stdout.trim().split('.')[0]!, 'base64url').toString()).kid;
  assert.ok(rotated.json().kids.includes(newKid), 'the new key signs from now on');

  // A malformed value is wrong usage (2); a record that does not exist, or refuses, a failure (1).
  const refused = [
    [
      ['--person', person, '--client', DEMO.clients.public.clientId, '--scopes', 'client:admin'],
      /not a user scope/,
      2,
    ],
    [
      ['--person', 'nobody', '--client', DEMO.clients.public.clientId, '--scopes', 'user:read'],
      /--person must be a UUID/,
      2,
    ],
    [
      [
        '--person',
        '00000000-0000-4000-8000-000000000000',
        '--client',
        DEMO.clients.public.clientId,
        '--scopes',
        'user:read',
      ],
      /No person/,
      1,
    ],
    [['--person', person, '--client', 'nobody', '--scopes', 'user:read'], /No client nobody/, 1],
  ] as const;
  for (const [flags, message, code] of refused) {
    const result = await ewa(env, 'tokens', 'issue', ...flags);
    assert.equal(result.code, code, result.stderr);
    assert.match(result.stderr, message);
  }
  const production = await ewa(
    {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      EWA_ENV: 'production',
      EWA_SEED_DEMO: 'false',
      EWA_MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
      ...PRODUCTION_RAIL_ENV,
    },
    'tokens',
    'issue',
    '--person',
    person,
    '--client',
    'x',
    '--scopes',
    'user:read',
  );
  assert.equal(production.code, 1, 'refused by the server: the command ran and failed');
  assert.match(production.stderr, /sandbox only/);
});
