import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { type ComplianceRule, checkRule } from '../../src/compliance/compliance-rule.ts';
import { jurisdictionOf } from '../../src/compliance/jurisdiction.ts';
import { mergeRules } from '../../src/compliance/rule-store.ts';
import { stateRules } from '../../src/compliance/state-rules.ts';
import { feeFor } from '../../src/money/advances/advance-rules.ts';
import type { OrganizationPolicy } from '../../src/operator/organization-policy.ts';

const POLICY = {
  currency: 'USD',
  timeZone: 'America/New_York',
  feeCardInstantMinor: 299,
  feeCardNextDayMinor: 100,
  feeBankInstantMinor: 300,
  feeBankNextDayMinor: 100,
} as OrganizationPolicy;

const FREE_OPTION = checkRule({
  id: 'WI-FREE-OPTION',
  state: 'WI',
  kind: 'FREE_OPTION_REQUIRED',
  effective_from: '2024-09-01',
  source: 'Wis. Stat. ch. 203',
});

const inWisconsin = (instant: string, rules: readonly ComplianceRule[] = [FREE_OPTION]) =>
  jurisdictionOf(rules, 'WI', new Date(instant), 'America/Chicago');

test('the rule file of the repository is valid, its ids unique', () => {
  const file = stateRules();
  assert.ok(file.rules.length >= 15);
  assert.equal(new Set(file.rules.map((rule) => rule.id)).size, file.rules.length);
});

test("the operators' page lists the rules of the file: id, state, kind and first day", async () => {
  const page = await readFile(new URL('../../docs/operators/compliance.md', import.meta.url), 'utf8');
  const table = page.slice(page.indexOf('## The rules in the file'));
  const rows = table
    .split('\n')
    .filter((line) => /^\| [A-Z]{2}-/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  assert.deepEqual(
    rows.map(([, id, state, kind, , from]) => [id, state, kind, from!.slice(0, 10)]),
    stateRules().rules.map((rule) => [rule.id, rule.state, rule.kind, rule.effective_from]),
  );
});

test("a rule applies from its first day to its last, on the employer's calendar", () => {
  const rule = { ...FREE_OPTION, effective_from: '2026-03-12', effective_until: '2026-03-13' };
  // 2026-03-12 04:59 UTC is still 2026-03-11 in Chicago (CDT, UTC-5, since March 8).
  assert.equal(inWisconsin('2026-03-12T04:59:00Z', [rule]).rules.length, 0);
  assert.equal(inWisconsin('2026-03-12T05:00:00Z', [rule]).rules.length, 1);
  assert.equal(inWisconsin('2026-03-14T04:59:00Z', [rule]).rules.length, 1);
  assert.equal(inWisconsin('2026-03-14T05:00:00Z', [rule]).rules.length, 0);
  assert.equal(jurisdictionOf([rule], 'MN', new Date('2026-03-13T12:00:00Z'), 'UTC').rules.length, 0);
});

test('feeFor: the free option a state requires is the next-day bank transfer, only when nothing is free', () => {
  const wi = inWisconsin('2026-03-11T12:00:00Z');
  assert.equal(feeFor(POLICY, 'DEPOSITORY', 'NEXT_BUSINESS_DAY', wi), 0);
  assert.equal(feeFor(POLICY, 'DEPOSITORY', 'WITHIN_THIRTY_MINUTES', wi), 300);
  assert.equal(feeFor(POLICY, 'CARD', 'NEXT_BUSINESS_DAY', wi), 100);
  assert.equal(feeFor(POLICY, 'DEPOSITORY', 'NEXT_BUSINESS_DAY'), 100, 'no state rule');
  assert.equal(feeFor({ ...POLICY, feeBankNextDayMinor: null }, 'DEPOSITORY', 'NEXT_BUSINESS_DAY', wi), 0);
  const freeCard = { ...POLICY, feeCardNextDayMinor: 0 };
  assert.equal(
    feeFor(freeCard, 'DEPOSITORY', 'NEXT_BUSINESS_DAY', wi),
    100,
    'the free card transfer is the option',
  );
  // ...unless no rail pays cards (production without a card rail): then it is no option.
  assert.equal(feeFor(freeCard, 'DEPOSITORY', 'NEXT_BUSINESS_DAY', wi, ['DEPOSITORY']), 0);
});

test('overrides: a file rule replaced, one switched off, one added; a bad row is never trusted', () => {
  const file = stateRules();
  const at = new Date('2026-03-01T00:00:00Z');
  const merged = mergeRules(file, [
    {
      rule_id: 'CT-FEE-CAP-MONTH',
      rule: {
        ...file.rules.find((rule) => rule.id === 'CT-FEE-CAP-MONTH'),
        params: { max_fees_minor: 1000 },
      },
      disabled: false,
      changed_by: 'alice',
      changed_at: at,
    },
    { rule_id: 'MD-FREE-OPTION', rule: null, disabled: true, changed_by: 'bob', changed_at: at },
    {
      rule_id: 'TX-NO-SERVICE',
      rule: {
        id: 'TX-NO-SERVICE',
        state: 'TX',
        kind: 'NO_SERVICE',
        params: { reason: 'Not yet.' },
        effective_from: '2026-01-01',
        source: 'Operator',
      },
      disabled: false,
      changed_by: 'carol',
      changed_at: at,
    },
  ]);
  const byId = new Map(merged.map((effective) => [effective.rule.id, effective]));
  assert.deepEqual(byId.get('CT-FEE-CAP-MONTH')?.rule.params, { max_fees_minor: 1000 });
  assert.equal(byId.get('CT-FEE-CAP-MONTH')?.origin, 'FILE_CHANGED');
  assert.equal(byId.get('MD-FREE-OPTION')?.enabled, false);
  assert.equal(byId.get('MD-FREE-OPTION')?.origin, 'FILE');
  assert.equal(byId.get('TX-NO-SERVICE')?.origin, 'OPERATOR');
  assert.equal(byId.get('TX-NO-SERVICE')?.changedBy, 'carol');
  assert.throws(
    () =>
      mergeRules(file, [
        { rule_id: 'X', rule: { id: 'X', state: 'TX' }, disabled: false, changed_by: 'x', changed_at: at },
      ]),
    /kind must be one of/,
  );
});
