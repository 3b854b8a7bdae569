import { type TSchema, Type } from 'typebox';
import { ACTIVATION_STATUSES } from '../domain/job-values.ts';
import {
  POLICY_FIELDS,
  POLICY_KEYS,
  type PolicyField,
  type PolicyKey,
} from '../operator/organization-policy.ts';
import { ORGANIZATION_NAME_LENGTH_MAX, PRODUCTS } from '../operator/organizations.ts';
import { OneOf, RelationshipSchema, UuidString } from '../platform/resource-schemas.ts';
import { errorDocumentSchema } from '../platform/schemas.ts';

/** Who may call the operator API: a client token with admin:operator, on every organization. */
export const OPERATOR = {
  config: [{ kind: 'client' as const, scopes: ['admin:operator'] }],
  openApi: [{ oauth_client_credentials_token: ['admin:operator'] }],
};

/** A policy field's wire schema, from the one table of fields (organization-policy.ts). */
function policyFieldSchema(field: PolicyField): TSchema {
  const { kind, description } = field;
  switch (kind.type) {
    case 'currency':
      return Type.String({ pattern: '^[A-Z]{3}$', description, examples: ['USD'] });
    case 'time-zone':
      return Type.String({ minLength: 1, maxLength: 64, description, examples: ['America/New_York'] });
    case 'enum':
      return OneOf(kind.values, { description });
    case 'date':
      return Type.String({ format: 'date', description, examples: ['2026-01-05'] });
    case 'integer':
      return Type.Integer({ minimum: kind.min, maximum: kind.max, description });
    case 'fee':
      return Type.Union([Type.Integer({ minimum: 0, maximum: kind.max }), Type.Null()], { description });
    case 'boolean':
      return Type.Boolean({ description });
  }
}

const policyProperties = (wrap: (schema: TSchema) => TSchema) =>
  Object.fromEntries(
    POLICY_KEYS.map((key) => [POLICY_FIELDS[key].name, wrap(policyFieldSchema(POLICY_FIELDS[key]))]),
  );

export const PolicyAttributes = Type.Object(policyProperties((schema) => schema));

/** A partial policy: the fields given change, the others stay. Unknown fields are refused by name. */
export const PolicyChangeAttributes = Type.Object(
  policyProperties((schema) => Type.Optional(schema)),
  { additionalProperties: false },
);

/** Wire names (time_zone) back to the policy's keys (timeZone). */
export function policyChangeOf(attributes: Record<string, unknown>): Partial<Record<PolicyKey, unknown>> {
  const change: Partial<Record<PolicyKey, unknown>> = {};
  for (const key of POLICY_KEYS) {
    const name = POLICY_FIELDS[key].name;
    if (Object.hasOwn(attributes, name)) change[key] = attributes[name];
  }
  return change;
}

export const OrganizationResource = Type.Object({
  type: Type.Literal('organizations'),
  id: UuidString,
  attributes: Type.Object({
    name: Type.String(),
    products: Type.Array(OneOf(PRODUCTS)),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    policy: Type.Union([PolicyAttributes, Type.Null()], {
      description: 'Null for an organization made without a policy; setting one starts from the defaults.',
    }),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

export const OrganizationCreateBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('organizations'),
        attributes: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: ORGANIZATION_NAME_LENGTH_MAX }),
            products: Type.Optional(
              Type.Array(OneOf(PRODUCTS), {
                maxItems: PRODUCTS.length,
                description: `Products the organization offers; ${PRODUCTS.join(', ')} by default.`,
              }),
            ),
            policy: Type.Optional(PolicyChangeAttributes),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const PolicyUpdateBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('organization_policies'),
        id: Type.Optional(Type.String({ maxLength: 64, description: 'The organization id, if given.' })),
        attributes: PolicyChangeAttributes,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const PolicyResource = Type.Object({
  type: Type.Literal('organization_policies'),
  id: UuidString,
  attributes: PolicyAttributes,
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

export const RosterImportResource = Type.Object({
  type: Type.Literal('roster_imports'),
  id: UuidString,
  attributes: Type.Object({
    organization_id: UuidString,
    organization_name: Type.String(),
    created: Type.Integer({ minimum: 0, description: 'Lines that created a job (and its person if new).' }),
    updated: Type.Integer({ minimum: 0, description: 'Lines that changed a job or its person.' }),
    unchanged: Type.Integer({ minimum: 0, description: 'Lines that matched what was there.' }),
    rejected: Type.Integer({ minimum: 0, description: 'Lines not imported; nothing of them was written.' }),
    rejected_lines: Type.Array(
      Type.Object({
        line: Type.Integer({ minimum: 1 }),
        field: Type.Union([Type.String(), Type.Null()], {
          description: 'The column at fault; null: the line.',
        }),
        detail: Type.String(),
      }),
    ),
    rejected_lines_truncated: Type.Boolean({
      description: 'True when more lines were rejected than listed.',
    }),
  }),
});

/** The roster upload's 409: one import of an organization at a time (operator/roster-import-turn.ts). */
export const RosterImportRunning = errorDocumentSchema(
  409,
  'Another roster import of this organization is running; nothing of this file was written. Send it again when ' +
    'that import has finished.',
  ['ROSTER_IMPORT_RUNNING'],
);

export const JobActivationResource = Type.Object({
  type: Type.Literal('jobs'),
  id: UuidString,
  attributes: Type.Object({
    external_identifiers: Type.Object({ primary_identifier: Type.String() }),
    activation_status: OneOf(ACTIVATION_STATUSES),
  }),
  relationships: Type.Object({
    person: RelationshipSchema('people'),
    organization: RelationshipSchema('organizations'),
    earnings_balance_account: Type.Object({
      data: Type.Union([Type.Object({ type: Type.Literal('accounts'), id: UuidString }), Type.Null()], {
        description: 'Null when the organization does not offer ODP.',
      }),
    }),
  }),
  meta: Type.Object({
    earnings_balance_account_created: Type.Boolean({
      description: 'True when this call created the account.',
    }),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});
