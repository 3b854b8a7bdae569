import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPrivateAddress } from '../../src/webhooks/private-addresses.ts';

test('addresses a webhook may not reach, in every spelling that carries one; public ones pass', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '169.254.169.254',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:0:7f00:1',
    '::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '100::1',
    'fc00::1',
    'fe80::1',
    'fec0::1',
    'ff02::1',
  ])
    assert.equal(isPrivateAddress(address), true, address);
  for (const address of [
    '8.8.8.8',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '2606:4700::1111',
    '2a00:1450:4001::1',
  ])
    assert.equal(isPrivateAddress(address), false, address);
});
