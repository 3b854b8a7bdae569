import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRuleFile } from '../../src/compliance/state-rules.ts';
import { cliDatabaseEnv, ewa } from '../helpers/cli.ts';

type RuleJson = {
  id: string;
  state: string;
  kind: string;
  params: unknown;
  origin: string;
  enabled: boolean;
};

test('compliance list: the file, one state, the rules of a day, as text and JSON', async (t) => {
  const env = await cliDatabaseEnv(t);
  const all = await ewa(env, 'compliance', 'list', '--json');
  assert.equal(all.code, 0, all.stderr);
  const rules = all.json() as RuleJson[];
  assert.ok(rules.some((rule) => rule.id === 'CT-FEE-CAP-MONTH' && rule.origin === 'FILE' && rule.enabled));
  const ct = (await ewa(env, 'compliance', 'list', '--state', 'CT', '--json')).json() as RuleJson[];
  assert.deepEqual(ct.map((rule) => rule.kind).sort(), [
    'AMOUNT_LIMIT_PER_PERIOD',
    'DISCLOSURE_BEFORE_FIRST_TRANSFER',
    'FEE_BEARING_ADVANCES_PER_PERIOD',
    'FEE_CAP_PER_ADVANCE',
    'FEE_CAP_PER_MONTH',
    'FREE_OPTION_REQUIRED',
  ]);
  // Connecticut's rules start on 2025-10-01.
  const before = await ewa(env, 'compliance', 'list', '--state', 'CT', '--on', '2025-09-30', '--json');
  assert.deepEqual(before.json(), []);
  const on = await ewa(env, 'compliance', 'list', '--state', 'CT', '--on', '2025-10-01', '--json');
  assert.equal((on.json() as RuleJson[]).length, 6);
  const text = await ewa(env, 'compliance', 'list', '--state', 'MD');
  assert.equal(text.code, 0);
  assert.match(text.stdout, /MD-FEE-CAP-ADVANCE +MD {2}FEE_CAP_PER_ADVANCE/);
});

test('compliance set, disable, enable: an override of a file rule, a rule of the operator, who made them', async (t) => {
  const env = await cliDatabaseEnv(t);
  const lower = await ewa(
    env,
    'compliance',
    'set',
    'CT-FEE-CAP-ADVANCE',
    '--params',
    '{"tiers":[{"max_fee_minor":300}]}',
    '--by',
    'alice',
    '--json',
  );
  assert.equal(lower.code, 0, lower.stderr);
  const changed = lower.json();
  assert.equal(changed.origin, 'FILE_CHANGED');
  assert.deepEqual(changed.params, { tiers: [{ max_fee_minor: 300 }] });
  assert.equal(changed.source, 'Conn. Gen. Stat. 36a-555 et seq. (Public Act 25-155)', 'kept from the file');
  assert.equal(changed.changed_by, 'alice');

  const added = await ewa(
    env,
    'compliance',
    'set',
    'NY-NO-SERVICE',
    '--state',
    'NY',
    '--kind',
    'NO_SERVICE',
    '--params',
    '{"reason":"Not licensed in New York yet."}',
    '--from',
    '2026-01-01',
    '--source',
    'Operator decision',
    '--json',
  );
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.json().origin, 'OPERATOR');

  const off = await ewa(env, 'compliance', 'disable', 'MD-FREE-OPTION', '--json');
  assert.equal(off.code, 0, off.stderr);
  assert.equal(off.json().enabled, false);
  const listed = (
    await ewa(env, 'compliance', 'list', '--state', 'MD', '--on', '2026-03-11', '--json')
  ).json();
  assert.ok(!(listed as RuleJson[]).some((rule) => rule.id === 'MD-FREE-OPTION'), 'off: in effect on no day');
  const on = await ewa(env, 'compliance', 'enable', 'MD-FREE-OPTION', '--json');
  assert.equal(on.code, 0, on.stderr);
  assert.equal(on.json().enabled, true);
  assert.equal(on.json().origin, 'FILE', 'only switched off: the file rule again');
});

test('compliance: exit 2 for wrong usage or a value refused on its face, 1 for a rule that does not exist', async (t) => {
  const env = await cliDatabaseEnv(t);
  const usage: [string[], RegExp][] = [
    [['compliance', 'list', '--state', 'XX'], /--state must be the two-letter code/],
    [['compliance', 'list', '--on', '2026-02-30'], /--on must be a calendar day/],
    [['compliance', 'set', 'CT-FEE-CAP-MONTH'], /give at least one field to set/],
    [['compliance', 'set', 'CT-FEE-CAP-MONTH', '--params', '{oops'], /--params must be a JSON object/],
    [
      ['compliance', 'set', 'CT-FEE-CAP-MONTH', '--params', '{"max_fees_minor":-1}'],
      /params\.max_fees_minor must be a whole number of minor units/,
    ],
    [
      ['compliance', 'set', 'CT-FEE-CAP-MONTH', '--params', '{"cap":1}'],
      /params\.cap is not a parameter of FEE_CAP_PER_MONTH/,
    ],
    [
      ['compliance', 'set', 'CT-FEE-CAP-MONTH', '--until', '2020-01-01'],
      /effective_until must be on or after/,
    ],
    [['compliance', 'set', 'NEW-RULE', '--state', 'CT'], /kind must be one of/],
    [['compliance', 'set', 'bad id', '--state', 'CT'], /the rule id must be capitals/],
    [['compliance', 'set', 'X-1', '--kind', 'TIP_CAP', '--state', 'CT'], /kind must be one of/],
    [['compliance', 'disable'], /name one rule id/],
  ];
  for (const [argv, message] of usage) {
    const run = await ewa(env, ...argv);
    assert.equal(run.code, 2, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message, argv.join(' '));
  }
  const missing = await ewa(env, 'compliance', 'disable', 'NO-SUCH-RULE');
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(missing.stderr, /No compliance rule NO-SUCH-RULE/);
  // Nothing was written by any of them.
  const rules = (await ewa(env, 'compliance', 'list', '--json')).json() as RuleJson[];
  assert.ok(rules.every((rule) => rule.origin === 'FILE' && rule.enabled));
});

test('a broken rule file is refused with a message that says where', () => {
  const good = {
    id: 'CT-X',
    state: 'CT',
    kind: 'FEE_CAP_PER_MONTH',
    params: { max_fees_minor: 3000 },
    effective_from: '2025-10-01',
    source: 'Conn. Gen. Stat. 36a-555',
  };
  const cases: [unknown, RegExp][] = [
    ['{', /is not JSON/],
    [{ rules: [] }, /"version" must be a non-empty string/],
    [
      { version: '1', rules: [{ ...good, state: 'ZZ' }] },
      /rule 1 \(CT-X\): state must be the two-letter code/,
    ],
    [{ version: '1', rules: [good, good] }, /rule 2 \(CT-X\): id CT-X is used by an earlier rule/],
    [
      {
        version: '1',
        rules: [
          {
            ...good,
            kind: 'FEE_CAP_PER_ADVANCE',
            params: { tiers: [{ up_to_amount_minor: 1, max_fee_minor: 1 }] },
          },
        ],
      },
      /last tier: it has no up_to_amount_minor/,
    ],
  ];
  for (const [content, message] of cases)
    assert.throws(
      () => parseRuleFile(typeof content === 'string' ? content : JSON.stringify(content), 'rules.json'),
      message,
    );
  assert.equal(parseRuleFile(JSON.stringify({ version: '1', rules: [good] })).rules.length, 1);
});
