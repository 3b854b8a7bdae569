import type { ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { ErrorDocument } from '../errors/error-document.ts';

const PERSON = '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001';
const DEFAULT_DOCUMENT = 'd15c1051-0000-4000-8000-000000000001';
const OTHER_PERSON = '182d55a6-49a9-4e7d-abf9-85f35847c580';

/**
 * The examples of the disclosure operations, taken like the others from a sandbox server: the demo worker Alex
 * Rivera, moved to Connecticut (PATCH /rest/people/{id}), reads and accepts the default document.
 */
export function disclosureExamples(
  error: (code: ErrorCode, detail: string, source?: ErrorSource) => ErrorDocument,
): Record<string, { request?: unknown; answer?: unknown; errors?: Record<string, ErrorDocument> }> {
  const notFound = error('RECORD_NOT_FOUND', `No person ${OTHER_PERSON} is visible to this token.`);
  const acceptance = {
    data: {
      type: 'disclosure_acceptances',
      id: '3c0f5a8e-1d2b-4c7a-9e6f-0a1b2c3d4e5f',
      attributes: { version: 1, accepted_at: '2026-03-11T15:30:00.000Z' },
      relationships: {
        disclosure: { data: { type: 'disclosures', id: DEFAULT_DOCUMENT } },
        person: { data: { type: 'people', id: PERSON } },
      },
    },
  };
  const utahV2 = {
    type: 'disclosures',
    id: '7e1d2c3b-4a5f-4e6d-8c7b-9a0f1e2d3c4b',
    attributes: {
      state: 'UT',
      product: 'ODP',
      version: 2,
      title: 'Utah earned wage access terms',
      body: 'Before each request you will see its terms. A free option is always offered. No suits, collections, credit reporting, interest or late fees. Cancel at any time.',
      effective_from: '2026-04-10T06:00:00.000Z',
      published_at: '2026-03-11T15:30:00.000Z',
    },
  };
  return {
    // GET /admin/disclosures
    adminListDisclosures: {
      answer: {
        data: [
          {
            type: 'disclosures',
            id: DEFAULT_DOCUMENT,
            attributes: {
              state: null,
              product: 'ODP',
              version: 1,
              title: 'Earned wage access terms',
              body: 'You may receive part of the wages you have already earned before payday. …',
              effective_from: '2024-01-01T00:00:00.000Z',
              published_at: '2024-01-01T00:00:00.000Z',
            },
          },
          utahV2,
        ],
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'filter[state] must be the two-letter code of a US state or DC (got "XX").',
          {
            parameter: 'filter[state]',
          },
        ),
      },
    },
    // POST /admin/disclosures
    adminPublishDisclosure: {
      request: {
        data: {
          type: 'disclosures',
          attributes: {
            state: 'UT',
            title: 'Utah earned wage access terms',
            body: utahV2.attributes.body,
            effective_from: '2026-04-10T06:00:00Z',
          },
        },
      },
      answer: { data: utahV2 },
      errors: {
        '400': error('INVALID_PARAMETERS', 'title must be 1 to 200 characters.', {
          pointer: '/data/attributes/title',
        }),
      },
    },
    // GET /admin/transfers/{transfer_id}/disclosure
    adminReadTransferDisclosure: {
      answer: {
        data: {
          type: 'transfer_disclosures',
          id: '0eac8d87-1e1b-47ad-a663-3544c145abdf',
          attributes: {
            amount: 1500,
            fee: 0,
            amount_received: 1500,
            currency: 'USD',
            destination_account_id: '6b0d9b58-7a78-4308-812b-aad355248c08',
            schedule: 'NEXT_BUSINESS_DAY',
            expected_on: '2026-03-12',
            debit_on: '2026-03-20',
            disclosure_id: 'd15c1051-0000-4000-8000-000000000002',
            disclosure_version: 1,
            acknowledged_at: '2026-03-11T15:30:00.000Z',
            created_at: '2026-03-11T15:30:00.000Z',
          },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'transfer_id must be a UUID (got "nope").', {
          parameter: 'transfer_id',
        }),
        '404': error(
          'RECORD_NOT_FOUND',
          'No disclosure is recorded for transfer 182d55a6-49a9-4e7d-abf9-85f35847c580.',
        ),
      },
    },
    // GET /rest/people/{person_id}/disclosures
    listPersonDisclosures: {
      answer: {
        data: [
          {
            type: 'disclosures',
            id: DEFAULT_DOCUMENT,
            attributes: {
              state: null,
              product: 'ODP',
              version: 1,
              title: 'Earned wage access terms',
              body:
                'You may receive part of the wages you have already earned before payday. Fees: a fee applies only ' +
                'to the transfer schedules that show one; the fee is taken from the amount and shown before you ' +
                'confirm. A free option is always offered: a next-business-day transfer to your bank account. No ' +
                'recourse: we will never sue you, send you to collections, report you to a credit bureau, or charge ' +
                'interest or late fees. The amount is recovered from the paycheck it was taken against, on payday. ' +
                'You may cancel this service at any time, without a fee.',
              effective_from: '2024-01-01T00:00:00.000Z',
              published_at: '2024-01-01T00:00:00.000Z',
              accepted: false,
              accepted_at: null,
            },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': notFound,
      },
    },
    // POST /rest/people/{person_id}/disclosure_acceptances
    acceptDisclosure: {
      request: {
        data: {
          type: 'disclosure_acceptances',
          relationships: { disclosure: { data: { type: 'disclosures', id: DEFAULT_DOCUMENT } } },
        },
      },
      answer: acceptance,
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          `disclosure ${DEFAULT_DOCUMENT} is version 1 of "Earned wage access terms"; the current version to accept is 2 (id 7e1d2c3b-4a5f-4e6d-8c7b-9a0f1e2d3c4b).`,
          { pointer: '/data/relationships/disclosure/data/id' },
        ),
        '404': notFound,
      },
    },
  };
}
