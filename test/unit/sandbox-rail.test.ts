import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PaymentRail, RailInstruction } from '../../src/rails/payment-rail.ts';
import { createSandboxRail, SANDBOX_FAILURE_AMOUNTS } from '../../src/rails/sandbox-rail.ts';

function instruction(overrides: Partial<RailInstruction> = {}): RailInstruction {
  return {
    instructionId: '7d4c1f9e-3b7a-4c62-9f0e-2a51d8e6b3c4',
    reference: 'tr_1',
    purpose: 'ADVANCE',
    requestedAmountMinor: 5000,
    deliveredAmountMinor: 4700,
    currency: 'USD',
    schedule: 'NEXT_BUSINESS_DAY',
    destinationAccountId: '0b9e7d2c-5a41-4f3e-8c6d-1e2f3a4b5c6d',
    destinationKind: 'DEPOSITORY',
    submittedAt: new Date('2026-03-11T15:00:00Z'),
    ...overrides,
  };
}

/** What the rail answers about one instruction once its time has long passed. */
async function outcomeOf(rail: PaymentRail, sent: RailInstruction) {
  const [outcome] = await rail.outcomes(
    [
      {
        reference: sent.reference,
        purpose: sent.purpose,
        railReference: `sandbox-${sent.reference}`,
        requestedAmountMinor: sent.requestedAmountMinor,
        expectedSettleAt: sent.submittedAt,
      },
    ],
    new Date('2100-01-01T00:00:00Z'),
  );
  const { reference: _reference, ...rest } = outcome!;
  return rest;
}

test('an instant transfer settles after the instant delay and echoes the reference', async () => {
  const submittedAt = new Date('2026-03-11T15:00:00Z');
  const submission = await createSandboxRail().submit(
    instruction({ schedule: 'WITHIN_THIRTY_MINUTES', submittedAt }),
  );
  assert.equal(submission.railReference, 'sandbox-tr_1');
  assert.equal(submission.expectedSettleAt.toISOString(), '2026-03-11T15:02:00.000Z');
  const quick = createSandboxRail({ instantDelayMs: 5_000 });
  assert.equal(
    (
      await quick.submit(instruction({ schedule: 'WITHIN_THIRTY_MINUTES', submittedAt }))
    ).expectedSettleAt.toISOString(),
    '2026-03-11T15:00:05.000Z',
  );
});

test('a Friday-evening next-business-day transfer settles Monday 09:00 New York time, in EST and in EDT', async () => {
  const rail = createSandboxRail();
  // Friday 2026-01-16 20:00 EST; Monday 01-19 is MLK Day, so Tuesday 09:00 EST.
  const winter = await rail.submit(instruction({ submittedAt: new Date('2026-01-17T01:00:00Z') }));
  assert.equal(winter.expectedSettleAt.toISOString(), '2026-01-20T14:00:00.000Z');
  // Friday 2026-02-06 20:00 EST (already Saturday in UTC) → Monday 09:00 EST.
  const est = await rail.submit(instruction({ submittedAt: new Date('2026-02-07T01:00:00Z') }));
  assert.equal(est.expectedSettleAt.toISOString(), '2026-02-09T14:00:00.000Z');
  // Friday 2026-03-06 20:00 EST; clocks spring forward on Sunday → Monday 09:00 EDT.
  const acrossDst = await rail.submit(instruction({ submittedAt: new Date('2026-03-07T01:00:00Z') }));
  assert.equal(acrossDst.expectedSettleAt.toISOString(), '2026-03-09T13:00:00.000Z');
  // Friday 2026-06-05 20:00 EDT → Monday 09:00 EDT.
  const edt = await rail.submit(instruction({ submittedAt: new Date('2026-06-06T00:00:00Z') }));
  assert.equal(edt.expectedSettleAt.toISOString(), '2026-06-08T13:00:00.000Z');
  // Friday 2026-10-30 20:00 EDT; clocks fall back on Sunday → Monday 09:00 EST.
  const fallBack = await rail.submit(instruction({ submittedAt: new Date('2026-10-31T00:00:00Z') }));
  assert.equal(fallBack.expectedSettleAt.toISOString(), '2026-11-02T14:00:00.000Z');
});

test('the settlement day follows the rail time zone, not UTC', async () => {
  const rail = createSandboxRail({ timeZone: 'America/Los_Angeles' });
  // Wednesday 2026-11-25 22:00 in Los Angeles (already Thursday in UTC) → Friday 09:00 PST, past Thanksgiving.
  const submission = await rail.submit(instruction({ submittedAt: new Date('2026-11-26T06:00:00Z') }));
  assert.equal(submission.expectedSettleAt.toISOString(), '2026-11-27T17:00:00.000Z');
  assert.throws(() => createSandboxRail({ timeZone: 'Mars/Olympus_Mons' }), RangeError);
});

test('each magic advance amount fails with its reason; a neighbouring amount settles', async () => {
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
    assert.deepEqual(await outcomeOf(rail, advance), { status: 'FAILED', reason });
    const neighbour = instruction({
      requestedAmountMinor: amountMinor + 1,
      deliveredAmountMinor: amountMinor - 99,
    });
    assert.deepEqual(await outcomeOf(rail, neighbour), { status: 'SETTLED' });
  }
  assert.deepEqual(
    await outcomeOf(rail, instruction({ requestedAmountMinor: 666, deliveredAmountMinor: 666 })),
    {
      status: 'FAILED',
      reason: 'DESTINATION_REJECTED',
    },
  );
  // Matched on the requested amount: a delivered amount of 666 is not magic.
  assert.deepEqual(
    await outcomeOf(rail, instruction({ requestedAmountMinor: 966, deliveredAmountMinor: 666 })),
    {
      status: 'SETTLED',
    },
  );
});

test('a paycheck always settles, even for a magic amount', async () => {
  const rail = createSandboxRail();
  for (const amountMinor of SANDBOX_FAILURE_AMOUNTS.keys()) {
    const paycheck = instruction({
      purpose: 'PAYCHECK',
      requestedAmountMinor: amountMinor,
      deliveredAmountMinor: amountMinor,
    });
    assert.deepEqual(await outcomeOf(rail, paycheck), { status: 'SETTLED' });
  }
});

test('a paycheck is not delivered before its expected deposit instant', async () => {
  const rail = createSandboxRail();
  const paycheck = instruction({ reference: 'pc_1', purpose: 'PAYCHECK', deliveredAmountMinor: 5000 });
  // Submitted Wednesday 2026-03-11; the schedule alone would settle Thursday 09:00 EDT.
  assert.equal((await rail.submit(paycheck)).expectedSettleAt.toISOString(), '2026-03-12T13:00:00.000Z');
  const later = new Date('2026-03-13T04:00:00Z');
  const held = await rail.submit({ ...paycheck, notBefore: later });
  assert.equal(held.railReference, 'sandbox-pc_1');
  assert.equal(held.expectedSettleAt.toISOString(), later.toISOString());
  const earlier = await rail.submit({ ...paycheck, notBefore: new Date('2026-03-11T16:00:00Z') });
  assert.equal(earlier.expectedSettleAt.toISOString(), '2026-03-12T13:00:00.000Z');
  const instant = await rail.submit({ ...paycheck, schedule: 'WITHIN_THIRTY_MINUTES', notBefore: later });
  assert.equal(instant.expectedSettleAt.toISOString(), later.toISOString());
});

test('a malformed instruction is a bug and throws', async () => {
  const rail = createSandboxRail();
  await assert.rejects(rail.submit(instruction({ deliveredAmountMinor: 5001 })));
  await assert.rejects(rail.submit(instruction({ deliveredAmountMinor: 0 })));
  await assert.rejects(rail.submit(instruction({ requestedAmountMinor: 50.5 })));
});
