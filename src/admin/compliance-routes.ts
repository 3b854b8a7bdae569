import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkRule, inEffectOn, isCalendarDay, RULE_KINDS } from '../compliance/compliance-rule.ts';
import {
  type EffectiveRule,
  findRule,
  listRules,
  type RuleChange,
  removeOverride,
  ruleJson,
  setRule,
  switchRule,
} from '../compliance/rule-store.ts';
import { stateRules } from '../compliance/state-rules.ts';
import type { Db } from '../db/database.ts';
import { isUsState } from '../domain/us-states.ts';
import { AppError } from '../errors/app-error.ts';
import { InputError } from '../errors/input-error.ts';
import { errorResponses } from '../platform/schemas.ts';
import { pointingAt } from './input-errors.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];

const RuleAttributes = Type.Object({
  state: Type.String({ description: 'Two-letter code of the US state or DC.' }),
  kind: Type.String({ description: `One of ${RULE_KINDS.join(', ')}.` }),
  params: Type.Record(Type.String(), Type.Unknown(), { description: "The kind's parameters." }),
  effective_from: Type.String({ format: 'date', description: 'First calendar day it applies.' }),
  effective_until: Type.Optional(
    Type.String({ format: 'date', description: 'Last calendar day it applies.' }),
  ),
  source: Type.String({ description: 'The statute or regulation.' }),
  origin: Type.String({ description: 'FILE, FILE_CHANGED (overridden by id) or OPERATOR (added).' }),
  enabled: Type.Boolean({ description: 'False: switched off, it applies to no one.' }),
  changed_by: Type.Union([Type.String(), Type.Null()]),
  changed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const RuleResource = Type.Object({
  type: Type.Literal('compliance_rules'),
  id: Type.String(),
  attributes: RuleAttributes,
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

/** The body's attributes are checked by the rule's own checks (compliance-rule.ts), which name the field at fault. */
const RuleBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('compliance_rules'),
    id: Type.Optional(Type.String({ maxLength: 100 })),
    attributes: Type.Record(Type.String(), Type.Unknown()),
  }),
});

const RuleIdParam = Type.Object({ rule_id: Type.String({ minLength: 1, maxLength: 100 }) });

/** `params.tiers[0].max_fee_minor` → `/data/attributes/params/tiers/0/max_fee_minor`; `id` → `/data/id`. */
function pointerOf(field: string | undefined): { pointer: string } {
  if (field === undefined) return { pointer: '/data/attributes' };
  if (field === 'id') return { pointer: '/data/id' };
  return { pointer: `/data/attributes/${field.replace(/\[(\d+)\]/g, '.$1').replaceAll('.', '/')}` };
}

const RULE_FIELDS = ['state', 'kind', 'params', 'effective_from', 'effective_until', 'source'] as const;

/** A member name as a JSON pointer segment (RFC 6901: `~` is `~0`, `/` is `~1`). */
function pointerSegment(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The attributes as a change of the rule's fields and its switch. A member that is not one of them (the read-only
 * origin, changed_by, changed_at included) is refused by name, as every /admin body refuses an unknown member;
 * its pointer is built here, since a member name may hold the dots and brackets pointerOf reads as a path.
 */
function ruleChangeOf(attributes: Record<string, unknown>): { change: RuleChange; enabled?: boolean } {
  const change: RuleChange = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'enabled') continue;
    if (!(RULE_FIELDS as readonly string[]).includes(key))
      throw new AppError('INVALID_PARAMETERS', {
        detail: `${key} is not an attribute of a rule that can be set (${RULE_FIELDS.join(', ')}, enabled).`,
        source: { pointer: `/data/attributes/${pointerSegment(key)}` },
      });
    change[key as keyof RuleChange] = value;
  }
  const { enabled } = attributes;
  if (enabled !== undefined && typeof enabled !== 'boolean')
    throw new InputError('enabled must be true or false.', { field: 'enabled' });
  return enabled === undefined ? { change } : { change, enabled };
}

function whoOf(request: FastifyRequest): string {
  return `client:${request.caller?.clientId ?? 'unknown'}`;
}

/**
 * The operator's view of the states' compliance rules: the effective set (the repository's rule file with the
 * overrides), and the overrides themselves, which every server process applies from its next advance on.
 */
export const adminComplianceRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string }> = async (
  app,
  { db, baseUrl },
) => {
  const file = stateRules();
  const selfOf = (id: string) => `${baseUrl}/admin/compliance/rules/${encodeURIComponent(id)}`;
  const resource = (effective: EffectiveRule) => {
    const { id, ...attributes } = ruleJson(effective);
    return { type: 'compliance_rules' as const, id, attributes, links: { self: selfOf(id) } };
  };
  const one = { 200: Type.Object({ data: RuleResource }) };

  app.get(
    '/admin/compliance/rules',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminListComplianceRules',
        tags,
        summary: "The states' compliance rules: the rule file with the operator's overrides",
        description:
          'Every rule, switched off ones included (enabled false). filter[state] keeps one state; filter[on] (a ' +
          'calendar day) keeps the rules in effect that day. meta.file_version is the rule file’s version.',
        security: OPERATOR.openApi,
        querystring: Type.Object(
          {
            'filter[state]': Type.Optional(Type.String({ maxLength: 100 })),
            'filter[on]': Type.Optional(Type.String({ maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(RuleResource),
            meta: Type.Object({ file_version: Type.String() }),
          }),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      const state = query['filter[state]'];
      const on = query['filter[on]'];
      const rules = await pointingAt(
        (field) => ({ parameter: `filter[${field}]` }),
        async () => {
          if (state !== undefined && !isUsState(state))
            throw new InputError(
              `filter[state] must be the two-letter code of a US state or DC (got "${state}").`,
              {
                field: 'state',
              },
            );
          if (on !== undefined && !isCalendarDay(on))
            throw new InputError(
              `filter[on] must be a calendar day YYYY-MM-DD from 2000 to 2100 (got "${on}").`,
              {
                field: 'on',
              },
            );
          return listRules(db, file);
        },
      );
      return {
        data: rules
          .filter(
            (effective) =>
              (state === undefined || effective.rule.state === state) &&
              (on === undefined || (effective.enabled && inEffectOn(effective.rule, on))),
          )
          .map(resource),
        meta: { file_version: file.version },
      };
    },
  );

  app.get(
    '/admin/compliance/rules/:rule_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminReadComplianceRule',
        tags,
        summary: 'One compliance rule as it is in effect',
        security: OPERATOR.openApi,
        params: RuleIdParam,
        response: { ...one, ...errorResponses(400, 401, 403, 404, 406, 500) },
      },
    },
    async (request) => {
      const { rule_id: id } = request.params as { rule_id: string };
      return {
        data: resource(
          await pointingAt(
            () => ({ parameter: 'rule_id' }),
            () => findRule(db, file, id),
          ),
        ),
      };
    },
  );

  app.post(
    '/admin/compliance/rules',
    {
      config: { security: OPERATOR.config, schemaErrorCodes: { missing: 'MISSING_REQUIRED_FIELD' } },
      schema: {
        operationId: 'adminSetComplianceRule',
        tags,
        summary: 'Add a rule, or replace a rule of the file by its id',
        description:
          'data.id is the rule id; the attributes are the whole rule (state, kind, params, effective_from, ' +
          'effective_until, source), and enabled if wanted. A rule of the file with that id is overridden (a ' +
          "lower cap); another id adds the operator's own rule (NO_SERVICE for a state where no service is " +
          'offered). enabled false adds or replaces it switched off, in the same transaction (it never applies ' +
          'until switched on); true switches it on; absent, the rule keeps its switch (a new rule is on). Checked ' +
          'as the file is: a wrong field, or any other member, is 400 pointing at it.',
        security: OPERATOR.openApi,
        body: RuleBody,
        response: { ...one, ...errorResponses(400, 401, 403, 406, 415, 500) },
      },
    },
    async (request) => {
      const { data } = request.body as { data: { id?: string; attributes: Record<string, unknown> } };
      const effective = await pointingAt(pointerOf, async () => {
        if (data.id === undefined) throw new InputError('data.id must be the rule id.', { field: 'id' });
        const { change, enabled } = ruleChangeOf(data.attributes);
        // The whole rule is given here: nothing is taken from the file's rule of the same id.
        checkRule({ ...change, id: data.id });
        return setRule(db, file, data.id, change, whoOf(request), enabled);
      });
      return { data: resource(effective) };
    },
  );

  app.patch(
    '/admin/compliance/rules/:rule_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminUpdateComplianceRule',
        tags,
        summary: 'Change some fields of a rule, or switch it off or on',
        description:
          'Attributes not given keep their values (effective_until null clears the last day); enabled false ' +
          'switches the rule off for everyone, true switches it on again.',
        security: OPERATOR.openApi,
        params: RuleIdParam,
        body: RuleBody,
        response: { ...one, ...errorResponses(400, 401, 403, 404, 406, 415, 500) },
      },
    },
    async (request) => {
      const { rule_id: id } = request.params as { rule_id: string };
      const { data } = request.body as { data: { id?: string; attributes: Record<string, unknown> } };
      const effective = await pointingAt(pointerOf, async () => {
        if (data.id !== undefined && data.id !== id)
          throw new InputError(`data.id ${data.id} is not the rule of the path, ${id}.`, { field: 'id' });
        const { change, enabled } = ruleChangeOf(data.attributes);
        if (Object.keys(change).length === 0 && enabled === undefined)
          throw new InputError('give at least one attribute to change.');
        const current = await findRule(db, file, id);
        // Fields and switch change in one transaction: the new values never apply before the switch does.
        if (Object.keys(change).length > 0) return setRule(db, file, id, change, whoOf(request), enabled);
        if (enabled !== undefined && enabled !== current.enabled)
          return switchRule(db, file, id, enabled, whoOf(request));
        return current;
      });
      return { data: resource(effective) };
    },
  );

  app.delete(
    '/admin/compliance/rules/:rule_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminRemoveComplianceOverride',
        tags,
        summary: "Remove the operator's override of a rule",
        description:
          "Answers 204. A rule of the file is the file's again (on, with its values); a rule the operator added is gone.",
        security: OPERATOR.openApi,
        params: RuleIdParam,
        response: {
          204: Type.Null({ description: 'Removed.' }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request, reply) => {
      const { rule_id: id } = request.params as { rule_id: string };
      await pointingAt(
        () => ({ parameter: 'rule_id' }),
        () => removeOverride(db, file, id),
      );
      return reply.code(204).send();
    },
  );
};
