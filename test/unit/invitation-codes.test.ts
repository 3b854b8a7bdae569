import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  invitationCodeHash,
  newInvitationCode,
  normalizeInvitationCode,
} from '../../src/crypto/invitation-codes.ts';

test('a new code is four groups of five characters of Crockford base32, and codes differ', () => {
  const codes = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    const code = newInvitationCode();
    assert.match(code, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
    assert.equal(normalizeInvitationCode(code), code.replaceAll('-', ''));
    codes.add(code);
  }
  assert.equal(codes.size, 2_000);
});

test('a code is read as typed: any case, spaces and dashes, O as 0, I and L as 1', () => {
  const stored = '7K3QM0X9D2A1B4TRHV6N';
  for (const typed of [
    '7K3QM-0X9D2-A1B4T-RHV6N',
    '7k3qm 0x9d2 a1b4t rhv6n',
    ' 7K3QMOX9D2AIB4TRHV6N ',
    '7k3qm-ox9d2-alb4t-rhv6n',
    '7K3QM\u2011OX9D2\u2013A1B4T\u2014RHV6N',
    '\u200b7K3QM-0X9D2-A1B4T-RHV6N\ufeff',
  ]) {
    assert.equal(normalizeInvitationCode(typed), stored, typed);
  }
  assert.equal(
    invitationCodeHash(stored),
    invitationCodeHash(normalizeInvitationCode('7k3qm-0x9d2-a1b4t-rhv6n')!),
  );
  assert.match(invitationCodeHash(stored), /^[0-9a-f]{64}$/);
});

test('what cannot be a code is refused before any lookup', () => {
  for (const typed of [
    '',
    '7K3QM-0X9D2-A1B4T-RHV6',
    '7K3QM-0X9D2-A1B4T-RHV6NN',
    '7K3QU-0X9D2-A1B4T-RHV6N',
    '7K3Q!-0X9D2-A1B4T-RHV6N',
    `${'A'.repeat(20)}${' '.repeat(60)}`,
    '７K3QM0X9D2A1B4TRHV6N',
  ]) {
    assert.equal(normalizeInvitationCode(typed), undefined, JSON.stringify(typed));
  }
});
