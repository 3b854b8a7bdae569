import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RailInstruction } from '../../src/rails/payment-rail.ts';
import { createSandboxRail, SANDBOX_FAILURE_AMOUNTS } from '../../src/rails/sandbox-rail.ts';

function instruction(overrides: Partial<RailInstruction> = {}): RailInstruction {
  return {
    reference: 'tr_1',
    purpose: 'ADVANCE',
    requestedAmountMinor: 5000,
    deliveredAmountMinor: 4700,
    currency: 'USD',
    schedule: 'NEXT_BUSINESS_DAY',
    destinationKind: 'DEPOSITORY',
    submittedAt: new Date('2026-03-11T15:00:00Z'),
    ...overrides,
  };
}

test('an instant transfer settles after the instant delay and echoes the reference', () => {
  const submittedAt = new Date('2026-03-11T15:00:00Z');
  const submission = createSandboxRail().submit(
    instruction({ schedule: 'WITHIN_THIRTY_MINUTES', submittedAt }),
  );
  assert.equal(submission.railReference, 'sandbox-tr_1');
  assert.equal(submission.settleAfter.toISOString(), '2026-03-11T15:02:00.000Z');
  const quick = createSandboxRail({ instantDelayMs: 5_000 });
  assert.equal(
    quick.submit(instruction({ schedule: 'WITHIN_THIRTY_MINUTES', submittedAt })).settleAfter.toISOString(),
    '2026-03-11T15:00:05.000Z',
  );
});

test('a Friday-evening next-business-day transfer settles Monday 09:00 New York time, in EST and in EDT', () => {
  const rail = createSandboxRail();
  // Friday 2026-01-16 20:00 EST; Monday 01-19 is MLK Day, so Tuesday 09:00 EST.
  const winter = rail.submit(instruction({ submittedAt: new Date('2026-01-17T01:00:00Z') }));
  assert.equal(winter.settleAfter.toISOString(), '2026-01-20T14:00:00.000Z');
  // Friday 2026-02-06 20:00 EST (already Saturday in UTC) → Monday 09:00 EST.
  const est = rail.submit(instruction({ submittedAt: new Date('2026-02-07T01:00:00Z') }));
  assert.equal(est.settleAfter.toISOString(), '2026-02-09T14:00:00.000Z');
  // Friday 2026-03-06 20:00 EST; clocks spring forward on Sunday → Monday 09:00 EDT.
  const acrossDst = rail.submit(instruction({ submittedAt: new Date('2026-03-07T01:00:00Z') }));
  assert.equal(acrossDst.settleAfter.toISOString(), '2026-03-09T13:00:00.000Z');
  // Friday 2026-06-05 20:00 EDT → Monday 09:00 EDT.
  const edt = rail.submit(instruction({ submittedAt: new Date('2026-06-06T00:00:00Z') }));
  assert.equal(edt.settleAfter.toISOString(), '2026-06-08T13:00:00.000Z');
  // Friday 2026-10-30 20:00 EDT; clocks fall back on Sunday → Monday 09:00 EST.
  const fallBack = rail.submit(instruction({ submittedAt: new Date('2026-10-31T00:00:00Z') }));
  assert.equal(fallBack.settleAfter.toISOString(), '2026-11-02T14:00:00.000Z');
});

test('the settlement day follows the rail time zone, not UTC', () => {
  const rail = createSandboxRail({ timeZone: 'America/Los_Angeles' });
  // Wednesday 2026-11-25 22:00 in Los Angeles (already Thursday in UTC) → Friday 09:00 PST, past Thanksgiving.
  const submission = rail.submit(instruction({ submittedAt: new Date('2026-11-26T06:00:00Z') }));
  assert.equal(submission.settleAfter.toISOString(), '2026-11-27T17:00:00.000Z');
  assert.throws(() => createSandboxRail({ timeZone: 'Mars/Olympus_Mons' }), RangeError);
});

test('each magic advance amount fails with its reason; a neighbouring amount settles', () => {
  const rail = createSandboxRail();
  assert.deepEqual(
    [...SANDBOX_FAILURE_AMOUNTS.keys()].sort((a, b) => a - b),
    [666, 1313, 4040],
  );
  for (const [amountMinor, reason] of SANDBOX_FAILURE_AMOUNTS) {
    const advance = instruction({
      requestedAmountMinor: amountMinor,
      deliveredAmountMinor: amountMinor - 100,
    });
    assert.deepEqual(rail.outcome(advance), { status: 'FAILED', reason });
    const neighbour = instruction({
      requestedAmountMinor: amountMinor + 1,
      deliveredAmountMinor: amountMinor - 99,
    });
    assert.deepEqual(rail.outcome(neighbour), { status: 'SETTLED' });
  }
  assert.deepEqual(rail.outcome(instruction({ requestedAmountMinor: 666, deliveredAmountMinor: 666 })), {
    status: 'FAILED',
    reason: 'DESTINATION_REJECTED',
  });
  // Matched on the requested amount: a delivered amount of 666 is not magic.
  assert.deepEqual(rail.outcome(instruction({ requestedAmountMinor: 966, deliveredAmountMinor: 666 })), {
    status: 'SETTLED',
  });
});

test('a paycheck always settles, even for a magic amount', () => {
  const rail = createSandboxRail();
  for (const amountMinor of SANDBOX_FAILURE_AMOUNTS.keys()) {
    const paycheck = instruction({
      purpose: 'PAYCHECK',
      requestedAmountMinor: amountMinor,
      deliveredAmountMinor: amountMinor,
    });
    assert.deepEqual(rail.outcome(paycheck), { status: 'SETTLED' });
  }
});

test('a paycheck is not delivered before its expected deposit instant', () => {
  const rail = createSandboxRail();
  const paycheck = instruction({ reference: 'pc_1', purpose: 'PAYCHECK', deliveredAmountMinor: 5000 });
  // Submitted Wednesday 2026-03-11; the schedule alone would settle Thursday 09:00 EDT.
  assert.equal(rail.submit(paycheck).settleAfter.toISOString(), '2026-03-12T13:00:00.000Z');
  const later = new Date('2026-03-13T04:00:00Z');
  const held = rail.submit({ ...paycheck, notBefore: later });
  assert.equal(held.railReference, 'sandbox-pc_1');
  assert.equal(held.settleAfter.toISOString(), later.toISOString());
  const earlier = rail.submit({ ...paycheck, notBefore: new Date('2026-03-11T16:00:00Z') });
  assert.equal(earlier.settleAfter.toISOString(), '2026-03-12T13:00:00.000Z');
  const instant = rail.submit({ ...paycheck, schedule: 'WITHIN_THIRTY_MINUTES', notBefore: later });
  assert.equal(instant.settleAfter.toISOString(), later.toISOString());
});

test('a malformed instruction is a bug and throws', () => {
  const rail = createSandboxRail();
  assert.throws(() => rail.submit(instruction({ deliveredAmountMinor: 5001 })));
  assert.throws(() => rail.submit(instruction({ deliveredAmountMinor: 0 })));
  assert.throws(() => rail.submit(instruction({ requestedAmountMinor: 50.5 })));
});
