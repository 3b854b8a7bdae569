import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { feesWithinReach } from '../../src/money/advances/advance-rules.ts';
import { AccountPricer } from '../../src/resources/accounts/account-pricing.ts';
import { transferDestinations } from '../../src/resources/accounts/capabilities.ts';

const FEES = {
  feeCardInstantMinor: 299,
  feeCardNextDayMinor: 0,
  feeBankInstantMinor: 150,
  feeBankNextDayMinor: 50,
};

test('what the rails cannot pay is not offered, whatever the employer set', () => {
  assert.deepEqual(feesWithinReach(FEES, {}), FEES, 'no word from the rails: every pair');
  assert.deepEqual(feesWithinReach(FEES, { payable: ['DEPOSITORY'], instant: [] }), {
    feeCardInstantMinor: null,
    feeCardNextDayMinor: null,
    feeBankInstantMinor: null,
    feeBankNextDayMinor: 50,
  });
  assert.deepEqual(feesWithinReach(FEES, { payable: ['DEPOSITORY', 'CARD'], instant: ['CARD'] }), {
    ...FEES,
    feeBankInstantMinor: null,
  });
});

test("an account's capabilities leave out a card no rail pays and a bank schedule it cannot keep (production with ACH)", async () => {
  const pricer = new AccountPricer({ payable: ['DEPOSITORY'], instant: [] });
  const schedule = {
    currency: 'USD',
    fee_card_instant_minor: 299,
    fee_card_next_day_minor: 0,
    fee_bank_instant_minor: 150,
    fee_bank_next_day_minor: 50,
    jurisdiction: undefined,
  };
  // No jurisdiction: no state rule is read, so no database is asked.
  const priced = await pricer.priced(undefined as unknown as Kysely<DB>, schedule);
  assert.deepEqual(transferDestinations('CARD', priced), []);
  assert.deepEqual(transferDestinations('DEPOSITORY', priced), [
    { schedule: 'NEXT_BUSINESS_DAY', fee: 50, currency: 'USD' },
  ]);
});
