import type { ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { ErrorDocument } from '../errors/error-document.ts';

const CT_SOURCE = 'Conn. Gen. Stat. 36a-555 et seq. (Public Act 25-155)';
const OPERATOR = 'client:ewa_YWPHp9mehMMh3--Cd3cD';

/**
 * The examples of the operator's compliance rules (/admin/compliance/rules), taken like the others from a sandbox
 * server: Connecticut's rules, with the operator's lower cap on a fee per advance.
 */
export function complianceExamples(
  base: string,
  error: (code: ErrorCode, detail: string, source?: ErrorSource) => ErrorDocument,
): Record<string, { request?: unknown; answer?: unknown; errors?: Record<string, ErrorDocument> }> {
  const rule = (id: string, attributes: Record<string, unknown>) => ({
    type: 'compliance_rules',
    id,
    attributes,
    links: { self: `${base}/admin/compliance/rules/${id}` },
  });
  const lowerCap = rule('CT-FEE-CAP-ADVANCE', {
    state: 'CT',
    kind: 'FEE_CAP_PER_ADVANCE',
    params: { tiers: [{ max_fee_minor: 300 }] },
    effective_from: '2025-10-01',
    source: CT_SOURCE,
    origin: 'FILE_CHANGED',
    enabled: true,
    changed_by: 'alice',
    changed_at: '2026-03-11T15:30:00.000Z',
  });
  const fromFile = (id: string, kind: string, params: Record<string, unknown>) =>
    rule(id, {
      state: 'CT',
      kind,
      params,
      effective_from: '2025-10-01',
      source: CT_SOURCE,
      origin: 'FILE',
      enabled: true,
      changed_by: null,
      changed_at: null,
    });
  const notFound = error(
    'RECORD_NOT_FOUND',
    'No compliance rule NOPE: neither the rule file nor an override has it.',
  );
  const badId = error(
    'INVALID_PARAMETERS',
    'the rule id must be capitals, digits, dots, dashes or underscores, 1 to 64 of them (got "bad id").',
    { parameter: 'rule_id' },
  );
  const badCap = error(
    'INVALID_PARAMETERS',
    'params.tiers[0].max_fee_minor must be a whole number of minor units from 0 to 100000000000 (got -1).',
    { pointer: '/data/attributes/params/tiers/0/max_fee_minor' },
  );
  return {
    // GET /admin/compliance/rules
    adminListComplianceRules: {
      answer: {
        data: [
          fromFile('CT-FREE-OPTION', 'FREE_OPTION_REQUIRED', {}),
          lowerCap,
          fromFile('CT-FEE-CAP-MONTH', 'FEE_CAP_PER_MONTH', { max_fees_minor: 3000 }),
          fromFile('CT-AMOUNT-PER-PERIOD', 'AMOUNT_LIMIT_PER_PERIOD', { less_than_minor: 75000 }),
          fromFile('CT-FEE-ADVANCES-PER-PERIOD', 'FEE_BEARING_ADVANCES_PER_PERIOD', { max_advances: 1 }),
        ],
        meta: { file_version: '2026-11-26' },
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'filter[state] must be the two-letter code of a US state or DC (got "XX").',
          { parameter: 'filter[state]' },
        ),
      },
    },
    // GET /admin/compliance/rules/{rule_id}
    adminReadComplianceRule: { answer: { data: lowerCap }, errors: { '400': badId, '404': notFound } },
    // POST /admin/compliance/rules
    adminSetComplianceRule: {
      request: {
        data: {
          type: 'compliance_rules',
          id: 'NY-NO-SERVICE',
          attributes: {
            state: 'NY',
            kind: 'NO_SERVICE',
            params: { reason: 'Not licensed in New York yet.' },
            effective_from: '2026-12-01',
            source: 'Operator decision',
          },
        },
      },
      answer: {
        data: rule('NY-NO-SERVICE', {
          state: 'NY',
          kind: 'NO_SERVICE',
          params: { reason: 'Not licensed in New York yet.' },
          effective_from: '2026-12-01',
          source: 'Operator decision',
          origin: 'OPERATOR',
          enabled: true,
          changed_by: OPERATOR,
          changed_at: '2026-03-11T15:30:00.000Z',
        }),
      },
      errors: { '400': badCap },
    },
    // PATCH /admin/compliance/rules/{rule_id}
    adminUpdateComplianceRule: {
      request: { data: { type: 'compliance_rules', id: 'MD-FREE-OPTION', attributes: { enabled: false } } },
      answer: {
        data: rule('MD-FREE-OPTION', {
          state: 'MD',
          kind: 'FREE_OPTION_REQUIRED',
          params: {},
          effective_from: '2025-10-01',
          source: 'Md. Code, Com. Law 12-1501 et seq.',
          origin: 'FILE',
          enabled: false,
          changed_by: OPERATOR,
          changed_at: '2026-03-11T15:30:00.000Z',
        }),
      },
      errors: { '400': badCap, '404': notFound },
    },
    // DELETE /admin/compliance/rules/{rule_id}
    adminRemoveComplianceOverride: {
      errors: {
        '400': badId,
        '404': error('RECORD_NOT_FOUND', 'No override of compliance rule NOPE.'),
      },
    },
  };
}
