import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import type { ComplianceRule } from '../../src/compliance/compliance-rule.ts';
import {
  ADVANCE_CHECKS,
  type AdvanceFacts,
  describeAdvanceChecks,
  firstRefusal,
} from '../../src/money/advances/advance-checks.ts';
import type { JobTerms } from '../../src/money/earnings/job-terms.ts';
import type { OrganizationPolicy } from '../../src/operator/organization-policy.ts';

const PERSON = '11111111-1111-4111-8111-111111111111';
const ORIGIN = '22222222-2222-4222-8222-222222222222';
const BANK = '33333333-3333-4333-8333-333333333333';
const DOCUMENT = '77777777-7777-4777-8777-777777777777';

const POLICY: OrganizationPolicy = {
  currency: 'USD',
  timeZone: 'America/New_York',
  payFrequency: 'BIWEEKLY',
  payCalendarAnchor: '2026-01-02',
  paydayOffsetDays: 0,
  accessRateBp: 5000,
  withholdingEstimateBp: 2500,
  transfersEnabled: true,
  minimumTransferMinor: 500,
  maximumTransferMinor: 50_000,
  maximumFeeMinor: 500,
  dailyTransferCountMax: 3,
  dailyTransferAmountMaxMinor: 60_000,
  feeCardInstantMinor: 299,
  feeCardNextDayMinor: 0,
  feeBankInstantMinor: 299,
  feeBankNextDayMinor: 100,
  overpaymentDefaultResolution: 'NONE',
  overpaymentInstallments: 2,
  overpaymentWriteOffAfterPeriods: 6,
  overpaymentWriteOffDelinquent: false,
  paydayPayout: 'PROVIDER',
};

function terms(overrides: Partial<JobTerms> = {}): JobTerms {
  return {
    jobId: '44444444-4444-4444-8444-444444444444',
    personId: PERSON,
    organizationId: '55555555-5555-4555-8555-555555555555',
    organizationProducts: ['EWA'],
    activationStatus: 'ACTIVATED',
    directDepositStatus: 'SETUP_COMPLETE',
    wageRateMinor: 2000,
    wageFrequency: 'HOURLY',
    wageCurrency: 'USD',
    earningsBalanceAccountId: ORIGIN,
    defaultDepositoryId: BANK,
    defaultCardId: null,
    policy: POLICY,
    ...overrides,
  };
}

/** An advance that passes every check: each case below breaks exactly one thing. */
function passing(): AdvanceFacts {
  return {
    request: {
      originId: ORIGIN,
      personId: undefined,
      destinationId: BANK,
      amountMinor: 5_000,
      currency: 'USD',
      schedule: 'NEXT_BUSINESS_DAY',
      preview: false,
    },
    personId: PERSON,
    standing: { disallow_reason: null, state_of_residence: 'CA' },
    origin: { id: ORIGIN, account_type: 'EARNINGS_BALANCE' },
    terms: terms(),
    destination: { id: BANK, account_type: 'DEPOSITORY' },
    jurisdiction: { state: 'CA', stateName: 'California', day: '2026-03-11', rules: [] },
    fee: 100,
    railPays: true,
    railPaysSchedule: true,
    money: {
      balanceMinor: 10_000,
      recentCount: 0,
      recentMinor: 0,
      twin: false,
      idTaken: false,
      fundable: [],
      monthFeesMinor: 0,
    },
    disclosure: undefined,
    transferId: '66666666-6666-4666-8666-666666666666',
    duplicateWindowMs: 60_000,
  };
}

/** The facts under one more rule of the person's state (California here), in effect today. */
function underRule(facts: AdvanceFacts, rule: Pick<ComplianceRule, 'kind' | 'params'>): AdvanceFacts {
  const full = {
    id: `CA-${rule.kind}`,
    state: 'CA',
    effective_from: '2025-01-01',
    source: 'Cal. test code 1',
    ...rule,
  } as ComplianceRule;
  return { ...facts, jurisdiction: { ...facts.jurisdiction!, rules: [...facts.jurisdiction!.rules, full] } };
}

/** One paycheck funds the advance, with what its pay period has seen already. */
function fundedFrom(facts: AdvanceFacts, debited: number, feeBearing: number): AdvanceFacts {
  const paycheck = {
    id: 'p1',
    remaining_minor: 10_000,
    debited_minor: debited,
    fee_bearing_advances: feeBearing,
    deposit_expected_at: '2026-03-20T13:00:00.000Z',
  };
  return { ...facts, money: { ...facts.money, fundable: [paycheck] } };
}

const breaks: Record<string, (facts: AdvanceFacts) => AdvanceFacts> = {
  'origin is the caller’s': (f) => ({ ...f, origin: undefined }),
  'person is the caller': (f) => ({ ...f, request: { ...f.request, personId: BANK } }),
  'person allowed': (f) => ({ ...f, standing: { ...f.standing, disallow_reason: 'FRAUD' } }),
  'employer allows': (f) => ({
    ...f,
    terms: terms({ policy: { ...terms().policy, transfersEnabled: false } }),
  }),
  'overpayment resolved': (f) => ({
    ...f,
    standing: {
      ...f.standing,
      overpayment: { id: DOCUMENT, status: 'RESOLUTION_REQUIRED', remainingMinor: 1_200, currency: 'USD' },
    },
  }),
  'no overpayment being recovered': (f) => ({
    ...f,
    standing: {
      ...f.standing,
      overpayment: { id: DOCUMENT, status: 'RECOVERING', remainingMinor: 600, currency: 'USD' },
    },
  }),
  'state of residence known': (f) => ({
    ...f,
    standing: { ...f.standing, state_of_residence: null },
    jurisdiction: undefined,
  }),
  'state served': (f) => underRule(f, { kind: 'NO_SERVICE', params: { reason: 'Not licensed yet.' } }),
  'disclosure accepted': (f) =>
    underRule(
      { ...f, disclosure: { id: DOCUMENT, version: 2, title: 'Terms', acceptedAt: null } },
      { kind: 'DISCLOSURE_BEFORE_FIRST_TRANSFER', params: {} },
    ),
  'this request acknowledged': (f) => underRule(f, { kind: 'DISCLOSURE_AT_EACH_REQUEST', params: {} }),
  'direct deposit set up': (f) => ({ ...f, terms: terms({ directDepositStatus: 'PENDING' }) }),
  'origin is an active earnings balance': (f) => ({
    ...f,
    terms: terms({ activationStatus: 'DEACTIVATED' }),
  }),
  'default depository exists': (f) => ({
    ...f,
    request: { ...f.request, destinationId: undefined },
    destination: undefined,
  }),
  'destination is a bank account or card of the caller': (f) => ({ ...f, destination: undefined }),
  'a rail pays the destination': (f) => ({ ...f, railPays: false }),
  'a rail pays the schedule': (f) => ({ ...f, railPaysSchedule: false }),
  'schedule offered': (f) => ({ ...f, fee: null }),
  'currency of the balance': (f) => ({ ...f, request: { ...f.request, currency: 'EUR' } }),
  'minimum amount': (f) => ({ ...f, request: { ...f.request, amountMinor: 100 } }),
  'maximum amount': (f) => ({
    ...f,
    request: { ...f.request, amountMinor: f.terms!.policy.maximumTransferMinor + 1 },
    money: { ...f.money, balanceMinor: 1_000_000 },
  }),
  'maximum fee': (f) => ({ ...f, fee: 501 }),
  'state fee cap per advance': (f) =>
    underRule(f, {
      kind: 'FEE_CAP_PER_ADVANCE',
      params: { tiers: [{ up_to_amount_minor: 5_000, max_fee_minor: 99 }, { max_fee_minor: 500 }] },
    }),
  'state fee cap per month': (f) =>
    underRule(
      { ...f, money: { ...f.money, monthFeesMinor: 2_950 } },
      { kind: 'FEE_CAP_PER_MONTH', params: { max_fees_minor: 3_000 } },
    ),
  'within the earnings balance': (f) => ({ ...f, money: { ...f.money, balanceMinor: 4_999 } }),
  'advances in 24 hours': (f) => ({
    ...f,
    money: { ...f.money, recentCount: f.terms!.policy.dailyTransferCountMax },
  }),
  'amount in 24 hours': (f) => ({
    ...f,
    money: { ...f.money, recentMinor: f.terms!.policy.dailyTransferAmountMaxMinor - 4_999 },
  }),
  'state amount per pay period': (f) =>
    underRule(fundedFrom(f, 70_000, 0), {
      kind: 'AMOUNT_LIMIT_PER_PERIOD',
      params: { less_than_minor: 75_000 },
    }),
  'state advances with a fee per pay period': (f) =>
    underRule(fundedFrom(f, 0, 1), { kind: 'FEE_BEARING_ADVANCES_PER_PERIOD', params: { max_advances: 1 } }),
  'not a duplicate': (f) => ({ ...f, money: { ...f.money, twin: true } }),
  'transfer id unused': (f) => ({ ...f, money: { ...f.money, idTaken: true } }),
};

test('an advance that breaks nothing passes every check', () => {
  assert.equal(firstRefusal(passing()), undefined);
});

test('each check refuses what it names, with its code, and only it', () => {
  assert.deepEqual(
    ADVANCE_CHECKS.map((check) => check.name),
    Object.keys(breaks),
    'every check has a case here',
  );
  for (const check of ADVANCE_CHECKS) {
    const facts = breaks[check.name]!(passing());
    const refusal = firstRefusal(facts);
    assert.equal(refusal?.code, check.code, check.name);
    assert.equal(refusal?.status, 400, check.name);
    // A later check whose precondition the break removed (no fee without a schedule) cannot run: it does not refuse.
    const refuses = (other: (typeof ADVANCE_CHECKS)[number]) => {
      try {
        return other.refusal(facts) !== undefined;
      } catch {
        return false;
      }
    };
    const refusing = ADVANCE_CHECKS.filter(refuses);
    assert.deepEqual(
      refusing.map((other) => other.name),
      [check.name],
      `${check.name}: no other check refuses`,
    );
  }
});

test('a disclosure rule passes once the current version is accepted; a preview needs no acknowledgement', () => {
  const accepted = underRule(
    {
      ...passing(),
      disclosure: { id: DOCUMENT, version: 2, title: 'Terms', acceptedAt: '2026-03-11T15:30:00Z' },
    },
    { kind: 'DISCLOSURE_BEFORE_FIRST_TRANSFER', params: {} },
  );
  assert.equal(firstRefusal(accepted), undefined);
  const detail = firstRefusal({
    ...accepted,
    disclosure: { ...accepted.disclosure!, acceptedAt: null },
  })?.detail;
  assert.match(detail ?? '', new RegExp(`GET /rest/people/${PERSON}/disclosures`));
  const eachRequest = underRule(passing(), { kind: 'DISCLOSURE_AT_EACH_REQUEST', params: {} });
  assert.equal(
    firstRefusal({ ...eachRequest, request: { ...eachRequest.request, preview: true } }),
    undefined,
  );
  assert.equal(
    firstRefusal({ ...eachRequest, request: { ...eachRequest.request, disclosureAcknowledged: true } }),
    undefined,
  );
});

test('the first refusal in the table answers when several would', () => {
  const facts = passing();
  const broken = breaks['not a duplicate']!(breaks['within the earnings balance']!(facts));
  assert.equal(firstRefusal(broken)?.code, 'EARNINGS_BALANCE_EXCEEDED');
});

test('the sandbox page lists the checks as the table has them', async () => {
  const page = await readFile(new URL('../../docs/integrators/sandbox.md', import.meta.url), 'utf8');
  const block = /<!-- advance-checks:start -->\n([\s\S]*?)<!-- advance-checks:end -->/.exec(page);
  assert.ok(block, 'docs/integrators/sandbox.md has the advance-checks block');
  assert.equal(
    block[1]!.trimEnd(),
    describeAdvanceChecks('markdown'),
    'regenerate the block from describeAdvanceChecks("markdown")',
  );
});

test('the plain description names every code in order', () => {
  const plain = describeAdvanceChecks('plain');
  let from = 0;
  for (const check of ADVANCE_CHECKS) {
    const at = plain.indexOf(check.code, from);
    assert.ok(at >= from, `${check.code} after position ${from}`);
    from = at + check.code.length;
  }
});
