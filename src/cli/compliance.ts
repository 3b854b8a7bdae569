import { type ComplianceRule, inEffectOn, isCalendarDay, RULE_KINDS } from '../compliance/compliance-rule.ts';
import {
  type EffectiveRule,
  listRules,
  type RuleChange,
  ruleJson,
  setRule,
  switchRule,
} from '../compliance/rule-store.ts';
import { stateRules } from '../compliance/state-rules.ts';
import { isUsState } from '../domain/us-states.ts';
import { type CliContext, type Command, type Flags, UsageError, writeLine } from './command.ts';
import { withMigratedDatabase } from './open-database.ts';

function ruleLine(effective: EffectiveRule): string {
  const { rule } = effective;
  const until = rule.effective_until ? ` until ${rule.effective_until}` : '';
  const status = effective.enabled ? '' : ' [OFF]';
  return `${rule.id.padEnd(28)} ${rule.state}  ${rule.kind.padEnd(31)} ${JSON.stringify(rule.params)}  from ${rule.effective_from}${until}  ${effective.origin}${status}  ${rule.source}`;
}

/** Who changed a rule, for the override's record: --by, else the system user running the command. */
function changedBy(flags: Flags, context: CliContext): string {
  if (typeof flags.by === 'string') {
    if (flags.by.trim().length === 0 || flags.by.length > 200)
      throw new UsageError('--by must name who makes the change, 1 to 200 characters.');
    return flags.by.trim();
  }
  return `cli:${context.env.USER ?? context.env.USERNAME ?? 'operator'}`;
}

function ruleIdOf(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one rule id.');
  return positionals[0]!;
}

const list: Command = {
  name: 'compliance list',
  summary: "List the states' compliance rules: the rule file with the operator's overrides",
  help: [
    'Usage: ewa compliance list [--state XX] [--on YYYY-MM-DD] [--json]',
    '',
    '--state: only that state’s rules. --on: only the rules in effect on that calendar day (switched-off rules',
    'never are). Each line: id, state, kind, parameters, effective dates, origin (FILE, FILE_CHANGED by an',
    'override, OPERATOR for a rule of the operator’s own), [OFF] when switched off, and the source.',
  ].join('\n'),
  options: { state: { type: 'string' }, on: { type: 'string' }, json: { type: 'boolean' } },
  async run(flags, _positionals, context) {
    const state = flags.state;
    if (state !== undefined && (typeof state !== 'string' || !isUsState(state)))
      throw new UsageError(
        `--state must be the two-letter code of a US state or DC, such as CT (got "${state}").`,
      );
    const on = flags.on;
    if (on !== undefined && !isCalendarDay(on))
      throw new UsageError(`--on must be a calendar day YYYY-MM-DD from 2000 to 2100 (got "${String(on)}").`);
    const file = stateRules();
    return withMigratedDatabase(context, async ({ database }) => {
      const rules = (await listRules(database.db, file)).filter(
        (effective) =>
          (state === undefined || effective.rule.state === state) &&
          (on === undefined || (effective.enabled && inEffectOn(effective.rule, on))),
      );
      if (flags.json) writeLine(context.stdout, JSON.stringify(rules.map(ruleJson)));
      else if (rules.length === 0) writeLine(context.stdout, 'No rules match.');
      else {
        writeLine(context.stdout, `Rule file version ${file.version}.`);
        for (const effective of rules) writeLine(context.stdout, ruleLine(effective));
      }
      return 0;
    });
  },
};

/** Flags to the fields of a rule; `--params` is JSON, `--until none` clears the last day. */
function ruleChangeOf(flags: Flags): RuleChange {
  const change: RuleChange = {};
  const text = (flag: string) => (typeof flags[flag] === 'string' ? (flags[flag] as string) : undefined);
  if (text('state') !== undefined) change.state = text('state');
  if (text('kind') !== undefined) change.kind = text('kind');
  if (text('from') !== undefined) change.effective_from = text('from');
  if (text('until') !== undefined) change.effective_until = text('until') === 'none' ? null : text('until');
  if (text('source') !== undefined) change.source = text('source');
  const params = text('params');
  if (params !== undefined) {
    try {
      change.params = JSON.parse(params) as ComplianceRule['params'];
    } catch (error) {
      throw new UsageError(`--params must be a JSON object: ${(error as Error).message}`);
    }
  }
  return change;
}

const set: Command = {
  name: 'compliance set',
  summary: 'Add a rule, or change one (a file rule is overridden by its id)',
  help: [
    'Usage: ewa compliance set RULE_ID [--state XX] [--kind KIND] [--params JSON] [--from DATE] [--until DATE|none]',
    '                          [--source TEXT] [--by NAME] [--json]',
    '',
    'Fields not given keep the rule’s current values (the override’s, else the file’s); a new id needs --state,',
    '--kind, --from and --source, and --params unless the kind has none. The rule is checked whole, as the file is.',
    `Kinds: ${RULE_KINDS.join(', ')}.`,
    'Parameters: FEE_CAP_PER_ADVANCE {"tiers":[{"up_to_amount_minor":7500,"max_fee_minor":500},{"max_fee_minor":750}]},',
    '  FEE_CAP_PER_MONTH {"max_fees_minor":3000}, AMOUNT_LIMIT_PER_PERIOD {"less_than_minor":75000},',
    '  FEE_BEARING_ADVANCES_PER_PERIOD {"max_advances":1}, NO_SERVICE {"reason":"…"}, FREE_OPTION_REQUIRED {}.',
    'Money is in minor units. --by: who makes the change (default: cli:$USER). Every server process applies the',
    'change from its next advance on.',
  ].join('\n'),
  options: {
    state: { type: 'string' },
    kind: { type: 'string' },
    params: { type: 'string' },
    from: { type: 'string' },
    until: { type: 'string' },
    source: { type: 'string' },
    by: { type: 'string' },
    json: { type: 'boolean' },
  },
  allowPositionals: true,
  async run(flags, positionals, context) {
    const id = ruleIdOf(positionals);
    const change = ruleChangeOf(flags);
    if (Object.keys(change).length === 0) throw new UsageError('give at least one field to set.');
    const by = changedBy(flags, context);
    return withMigratedDatabase(context, async ({ database }) => {
      const effective = await setRule(database.db, stateRules(), id, change, by);
      writeLine(context.stdout, flags.json ? JSON.stringify(ruleJson(effective)) : ruleLine(effective));
      return 0;
    });
  },
};

function switchCommand(enabled: boolean): Command {
  const verb = enabled ? 'enable' : 'disable';
  return {
    name: `compliance ${verb}`,
    summary: enabled ? 'Switch a rule on again' : 'Switch a rule off (it applies to no one)',
    help: [
      `Usage: ewa compliance ${verb} RULE_ID [--by NAME] [--json]`,
      '',
      enabled
        ? 'A file rule that was only switched off is the file’s again; a changed or added rule keeps its values.'
        : 'The rule stays listed, marked [OFF]; `ewa compliance enable` switches it on again.',
    ].join('\n'),
    options: { by: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    async run(flags, positionals, context) {
      const id = ruleIdOf(positionals);
      const by = changedBy(flags, context);
      return withMigratedDatabase(context, async ({ database }) => {
        const effective = await switchRule(database.db, stateRules(), id, enabled, by);
        writeLine(context.stdout, flags.json ? JSON.stringify(ruleJson(effective)) : ruleLine(effective));
        return 0;
      });
    },
  };
}

export const complianceCommands: Command[] = [list, set, switchCommand(false), switchCommand(true)];
