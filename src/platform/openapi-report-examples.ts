import type { ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { ErrorDocument } from '../errors/error-document.ts';

const ORGANIZATION = '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001';
const PERSON = '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001';
const JOB = '4a2d6c1e-8b3f-4d7a-9e5c-1f0b2a3c0001';
const PAYCHECK = '9c3e1b7d-2a4f-4e6b-8d0c-5f1a2b3c0001';
const COMPLAINT = 'c0a1b2c3-d4e5-4f60-8a7b-9c0d1e2f3a4b';
const UNKNOWN_ORGANIZATION = '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0009';

/**
 * The examples of the complaints record and the reports, taken like the others from a sandbox server with the
 * demo data: the demo worker Alex Rivera, moved to Wisconsin, took two advances there; a complaint of theirs was
 * answered.
 */
export function reportExamples(
  base: string,
  error: (code: ErrorCode, detail: string, source?: ErrorSource) => ErrorDocument,
): Record<string, { request?: unknown; answer?: unknown; errors?: Record<string, ErrorDocument> }> {
  const open = {
    type: 'complaints',
    id: COMPLAINT,
    attributes: {
      organization_id: ORGANIZATION,
      person_id: PERSON,
      state: 'WI',
      channel: 'PHONE',
      summary: 'The fee of an instant transfer was not expected.',
      status: 'OPEN',
      answer: null,
      resolution: null,
      opened_at: '2026-03-11T15:30:00.000Z',
      answered_at: null,
      closed_at: null,
    },
    links: { self: `${base}/admin/complaints/${COMPLAINT}` },
  };
  const answered = {
    ...open,
    attributes: {
      ...open.attributes,
      status: 'ANSWERED',
      answer: 'The fee was shown before you confirmed; the next-day transfer is free.',
      answered_at: '2026-03-12T14:05:00.000Z',
    },
  };
  const notFound = error('RECORD_NOT_FOUND', `No complaint has the id ${COMPLAINT}.`);
  const badId = error('INVALID_PARAMETERS', 'complaint_id must be a UUID (got "42").', {
    parameter: 'complaint_id',
  });
  const stateReport = {
    state: 'WI',
    period: { from: '2026-01-01', to: '2026-03-31', time_zone: 'UTC' },
    advances: 2,
    unique_users: 1,
    users_with_12_or_more_advances: 0,
    failed_advances: 1,
    returned_advances: 0,
    amounts: [
      {
        currency: 'USD',
        total_amount: 3000,
        total_fees: 300,
        total_tips: 0,
        amount_received: 2700,
        failed_amount: 1313,
        returned_amount: 0,
      },
    ],
    complaints_opened: 1,
    complaints_answered: 1,
    complaints_closed: 0,
    advances_by_current_state: 0,
    notes: [
      'Period: calendar days in UTC, from the first day 00:00 to the end of the last day.',
      'advances counts the advances made in the period (PENDING or SETTLED now), by the state the person lived in when each was made; failed and returned advances are counted apart and in no other figure.',
      'Amounts are integer minor units (cents). amount_received is total_amount less total_fees. total_tips is 0: this server offers no tips.',
      'Complaints are counted by the state of the complainant when the complaint was opened, each figure by the day of that event.',
    ],
  };
  const stateError = error(
    'INVALID_PARAMETERS',
    'state must be the two-letter code of a US state or DC in capitals, such as WI (got "XX").',
    { parameter: 'filter[state]' },
  );
  const remittanceError = error('INVALID_PARAMETERS', `No organization has the id ${UNKNOWN_ORGANIZATION}.`, {
    parameter: 'filter[organization]',
  });
  const line = {
    organization_id: ORGANIZATION,
    job_id: JOB,
    external_employee_id: 'E-1001',
    external_primary_identifier: 'alex.rivera@acme.example',
    person_id: PERSON,
    first_name: 'Alex',
    last_name: 'Rivera',
    paycheck_id: PAYCHECK,
    paycheck_status: 'PROCESSING',
    period_start: '2026-03-02',
    period_end: '2026-03-15',
    pay_date: '2026-03-20',
    currency: 'USD',
    deductions: { advances_minor: 3000 },
    deduction_minor: 3000,
    advances: 2,
  };
  return {
    // GET /admin/complaints
    adminListComplaints: {
      answer: { data: [answered] },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'filter[status] must be one of OPEN, ANSWERED, CLOSED (got "DONE").',
          {
            parameter: 'filter[status]',
          },
        ),
      },
    },
    // POST /admin/complaints
    adminOpenComplaint: {
      request: {
        data: {
          type: 'complaints',
          attributes: {
            organization_id: ORGANIZATION,
            person_id: PERSON,
            channel: 'PHONE',
            summary: 'The fee of an instant transfer was not expected.',
          },
        },
      },
      answer: { data: open },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'state is required when no person is named: the state of residence of the complainant.',
          { pointer: '/data/attributes/state' },
        ),
      },
    },
    // GET /admin/complaints/{complaint_id}
    adminReadComplaint: { answer: { data: answered }, errors: { '400': badId, '404': notFound } },
    // PATCH /admin/complaints/{complaint_id}
    adminUpdateComplaint: {
      request: {
        data: {
          type: 'complaints',
          attributes: {
            status: 'ANSWERED',
            answer: 'The fee was shown before you confirmed; the next-day transfer is free.',
          },
        },
      },
      answer: { data: answered },
      errors: {
        '400': error(
          'INVALID_RESOURCE_STATE',
          `Complaint ${COMPLAINT} is ANSWERED: only OPEN complaints can be answered.`,
        ),
        '404': notFound,
      },
    },
    // GET /admin/reports/state
    adminStateReport: {
      answer: { data: { type: 'state_reports', id: 'WI-2026-01-01-2026-03-31', attributes: stateReport } },
      errors: { '400': stateError },
    },
    // GET /admin/reports/state.csv
    adminStateReportCsv: {
      answer:
        'state,from,to,time_zone,currency,advances,unique_users,total_amount_minor,total_fees_minor,total_tips_minor,amount_received_minor,failed_advances,failed_amount_minor,returned_advances,returned_amount_minor,users_with_12_or_more_advances,complaints_opened,complaints_answered,complaints_closed,advances_by_current_state\r\n' +
        'WI,2026-01-01,2026-03-31,UTC,USD,2,1,3000,300,0,2700,1,1313,0,0,0,1,1,0,0\r\n',
      errors: { '400': stateError },
    },
    // GET /admin/reports/remittance
    adminRemittanceReport: {
      answer: {
        data: {
          type: 'remittance_reports',
          id: `${ORGANIZATION}-2026-03-20-2026-03-20`,
          attributes: {
            organization_id: ORGANIZATION,
            organization_name: 'Acme Logistics',
            time_zone: 'America/New_York',
            from: '2026-03-20',
            to: '2026-03-20',
            deductions: ['advances_minor'],
            totals: [{ currency: 'USD', deduction_minor: 3000, paychecks: 1 }],
            lines: [line],
          },
        },
      },
      errors: { '400': remittanceError },
    },
    // GET /admin/reports/returns
    adminReturnsReport: {
      answer: {
        data: [
          {
            type: 'returns_payable',
            id: PAYCHECK,
            attributes: {
              kind: 'PAYOUT',
              person_id: PERSON,
              email: 'alex.rivera@acme.example',
              organization_id: ORGANIZATION,
              currency: 'USD',
              amount_minor: 30000,
              amount: '300.00',
              return_reason: 'R01',
              returned_at: '2026-03-20T14:00:00.000Z',
            },
          },
        ],
        meta: {
          organization_id: ORGANIZATION,
          organization_name: 'Acme Logistics',
          reconciled: true,
          totals: [
            {
              organization_id: ORGANIZATION,
              currency: 'USD',
              items: 1,
              amount_minor: 30000,
              amount: '300.00',
              ledger_minor: 30000,
              ledger: '300.00',
              differs: false,
            },
          ],
          totals_truncated: false,
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'filter[organization] must be a UUID (got "acme").', {
          parameter: 'filter[organization]',
        }),
        '404': error('RECORD_NOT_FOUND', `No organization ${UNKNOWN_ORGANIZATION}.`),
      },
    },
    // POST /admin/reports/returns/{item_id}/repayment
    adminRecordReturnRepaid: {
      request: { data: { type: 'return_repayments', attributes: { reference: 'WIRE 2026-0321-114' } } },
      answer: {
        data: {
          type: 'return_repayments',
          id: PAYCHECK,
          attributes: {
            kind: 'PAYOUT',
            person_id: PERSON,
            organization_id: ORGANIZATION,
            currency: 'USD',
            amount_minor: 30000,
            reference: 'WIRE 2026-0321-114',
            repaid_at: '2026-03-23T15:00:00.000Z',
            amount: '300.00',
          },
        },
      },
      errors: {
        '400': error('INVALID_RESOURCE_STATE', `${PAYCHECK} was recorded repaid already.`),
        '404': error(
          'RECORD_NOT_FOUND',
          `Nothing owed back has id ${UNKNOWN_ORGANIZATION}: it names no returned payout's paycheck or returned advance.`,
        ),
      },
    },
    // GET /admin/reports/remittance.csv
    adminRemittanceReportCsv: {
      answer:
        'organization_id,organization_name,pay_date,period_start,period_end,job_id,external_employee_id,external_primary_identifier,person_id,first_name,last_name,paycheck_id,paycheck_status,currency,advances_minor,deduction_minor,advances\r\n' +
        `${ORGANIZATION},Acme Logistics,2026-03-20,2026-03-02,2026-03-15,${JOB},E-1001,alex.rivera@acme.example,${PERSON},Alex,Rivera,${PAYCHECK},PROCESSING,USD,3000,3000,2\r\n`,
      errors: { '400': remittanceError },
    },
  };
}
