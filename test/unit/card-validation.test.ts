import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  passesLuhn,
  validateCardRequest,
  wellFormedCardNumber,
} from '../../src/tokenization/card-validation.ts';
import { clientAddressKey } from '../../src/tokenization/client-address.ts';
import { ISO_3166_ALPHA2 } from '../../src/tokenization/countries.ts';

test('Luhn: known numbers pass, and changing any one digit of a passing number fails', () => {
  for (const number of [
    '4111111111111111',
    '5555555555554444',
    '4007589999999912',
    '378282246310005',
    '79927398713',
  ]) {
    assert.ok(passesLuhn(number), number);
  }
  assert.ok(!passesLuhn('4111111111111112'));
  fc.assert(
    fc.property(
      fc.stringMatching(/^[0-9]{11,18}$/),
      fc.nat(),
      fc.integer({ min: 1, max: 9 }),
      (body, position, delta) => {
        const check = [...'0123456789'].find((digit) => passesLuhn(body + digit))!;
        const number = body + check;
        const index = position % number.length;
        const changed = (Number(number[index]) + delta) % 10;
        const mutated = number.slice(0, index) + changed + number.slice(index + 1);
        return passesLuhn(number) && !passesLuhn(mutated);
      },
    ),
  );
});

test('validation never throws and never repeats a value, whatever the body', () => {
  const now = new Date('2026-03-11T00:00:00Z');
  fc.assert(
    fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), (anything, fields) => {
      for (const body of [anything, fields, { ...fields, card_number: '4111111111111111' }]) {
        const result = validateCardRequest(body, now);
        if (!result.ok) assert.ok(!result.error.detail.includes('4111111111111111'));
        wellFormedCardNumber(body);
      }
    }),
  );
});

test('client addresses: IPv4 as is (also IPv4-mapped), IPv6 by /64', () => {
  assert.equal(clientAddressKey('203.0.113.7'), '203.0.113.7');
  assert.equal(clientAddressKey('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientAddressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(clientAddressKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientAddressKey('::1'), '0:0:0:0::/64');
  assert.equal(clientAddressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientAddressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
});

test('the country list is the 249 assigned ISO 3166-1 alpha-2 codes, each with a name', () => {
  assert.equal(ISO_3166_ALPHA2.size, 249);
  const names = new Intl.DisplayNames(['en'], { type: 'region' });
  for (const code of ISO_3166_ALPHA2) {
    assert.match(code, /^[A-Z]{2}$/);
    assert.notEqual(names.of(code), code, `${code} is a region Intl knows`);
  }
  for (const code of ['UK', 'EU', 'XK', 'ZZ']) assert.ok(!ISO_3166_ALPHA2.has(code), code);
});
