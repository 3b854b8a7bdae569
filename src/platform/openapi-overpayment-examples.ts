import type { ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { ErrorDocument } from '../errors/error-document.ts';

const PERSON = '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001';
const OVERPAYMENT = '5a0e9c1d-2b3f-4a6e-8d7c-1f2e3d4c5b6a';
const OTHER_PERSON = '182d55a6-49a9-4e7d-abf9-85f35847c580';

function overpayment(changes: Record<string, unknown> = {}) {
  return {
    type: 'overpayments',
    id: OVERPAYMENT,
    attributes: {
      person_id: PERSON,
      job_id: '9d3c1b2a-7e6f-4a5b-8c9d-0e1f2a3b0001',
      paycheck_id: '2f4e6a8c-0b1d-4e3f-9a5b-7c6d8e0f0001',
      organization_id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
      currency: 'USD',
      amount_minor: 3500,
      recovered_minor: 0,
      written_off_minor: 0,
      remaining_minor: 3500,
      status: 'RESOLUTION_REQUIRED',
      resolution: null,
      installments: null,
      installments_left: null,
      resolved_by: null,
      periods_seen: 0,
      detected_at: '2026-03-16T12:00:00.000Z',
      resolved_at: null,
      closed_at: null,
      ...changes,
    },
  };
}

const RECOVERING = {
  status: 'RECOVERING',
  resolution: 'INSTALLMENTS',
  installments: 2,
  installments_left: 2,
  resolved_by: 'PERSON',
  resolved_at: '2026-03-17T14:00:00.000Z',
};

/** The examples of the overpayment operations: the demo worker's paycheck closed 35.00 short of its advances. */
export function overpaymentExamples(
  error: (code: ErrorCode, detail: string, source?: ErrorSource) => ErrorDocument,
): Record<string, { request?: unknown; answer?: unknown; errors?: Record<string, ErrorDocument> }> {
  const resolved = error(
    'INVALID_RESOURCE_STATE',
    `Overpayment ${OVERPAYMENT} is RECOVERING; only an overpayment waiting for a resolution (RESOLUTION_REQUIRED) can be resolved.`,
    { pointer: '/data/relationships/overpayment/data/id' },
  );
  const badInstallments = error(
    'INVALID_PARAMETERS',
    'installments must be a whole number from 2 to 12 with INSTALLMENTS (got 40).',
    { pointer: '/data/attributes/installments' },
  );
  const noOverpayment = error('RECORD_NOT_FOUND', 'No overpayment 4b1f0c2e-8d7a-4e3b-9c6d-5a4f3e2d1c0b.');
  const noPerson = error('RECORD_NOT_FOUND', `No person ${OTHER_PERSON} is visible to this token.`);
  const resolution = {
    data: {
      type: 'overpayment_resolutions',
      attributes: { resolution: 'INSTALLMENTS', installments: 2 },
      relationships: { overpayment: { data: { type: 'overpayments', id: OVERPAYMENT } } },
    },
  };
  return {
    // GET /rest/people/{id}/overpayments
    listPersonOverpayments: {
      answer: { data: [overpayment()] },
      errors: {
        '400': error('INVALID_PARAMETERS', 'person_id must be a UUID (got "me").', {
          parameter: 'person_id',
        }),
        '404': noPerson,
      },
    },
    // POST /rest/people/{id}/overpayment_resolutions
    resolvePersonOverpayments: {
      request: resolution,
      answer: { data: [overpayment(RECOVERING)] },
      errors: { '400': badInstallments, '404': noPerson },
    },
    // GET /admin/overpayments
    adminListOverpayments: {
      answer: { data: [overpayment(RECOVERING)] },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'filter[status] must be one of RESOLUTION_REQUIRED, RECOVERING, RECOVERED, WRITTEN_OFF (got "OPEN").',
          {
            parameter: 'filter[status]',
          },
        ),
      },
    },
    // GET /admin/overpayments/{id}
    adminGetOverpayment: { answer: { data: overpayment(RECOVERING) }, errors: { '404': noOverpayment } },
    // POST /admin/overpayments/{id}/resolution
    adminResolveOverpayment: {
      request: { data: { type: 'overpayment_resolutions', attributes: { resolution: 'NEXT_PAYCHECK' } } },
      answer: {
        data: overpayment({
          ...RECOVERING,
          resolution: 'NEXT_PAYCHECK',
          installments: 1,
          installments_left: 1,
          resolved_by: 'OPERATOR',
        }),
      },
      errors: { '400': badInstallments, '404': noOverpayment },
    },
    // POST /admin/overpayments/{id}/write_off
    adminWriteOffOverpayment: {
      answer: {
        data: overpayment({
          ...RECOVERING,
          status: 'WRITTEN_OFF',
          written_off_minor: 3500,
          remaining_minor: 0,
          installments_left: 0,
          closed_at: '2026-03-18T10:00:00.000Z',
        }),
      },
      errors: { '400': resolved, '404': noOverpayment },
    },
  };
}
