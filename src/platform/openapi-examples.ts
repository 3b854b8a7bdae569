import packageJson from '../../package.json' with { type: 'json' };
import { AppError, type ErrorSource } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { type ErrorDocument, errorDocument } from '../errors/error-document.ts';
import { CARD_PRODUCT_KEY } from '../resources/people/serialize.ts';
import { tokensNeeded } from './bearer-auth.ts';
import { complianceExamples } from './openapi-compliance-examples.ts';
import { disclosureExamples } from './openapi-disclosure-examples.ts';
import { overpaymentExamples } from './openapi-overpayment-examples.ts';
import { reportExamples } from './openapi-report-examples.ts';

/**
 * The examples of the OpenAPI document, by operationId: the request body an operation reads, the body of its
 * success answer, and the error documents that are its own (a 400 or 404 names what that operation checks). They
 * were taken from the answers of a sandbox server with the demo data, at the demo's instant (2026-03-11T15:30Z): the
 * demo worker Alex Rivera, the Acme Logistics employer and the demo partner client. The errors every operation
 * answers alike (401, 403, 406, 415, 500, 503) are made by sharedErrorExample from the operation's own security and
 * media types. test/api/openapi-examples.test.ts checks every example against the schema it illustrates.
 */
export interface OperationExamples {
  /** The request body, as sent: an object for JSON:API and JSON, the file's text for text/csv. */
  request?: unknown;
  /** The body of the success answer (the operation's one 2xx status with a body). */
  answer?: unknown;
  /** Error documents by status, for the statuses whose code or detail is the operation's own. */
  errors?: Record<string, ErrorDocument>;
}

/** The request id every example error document carries (a caller's X-Request-Id, or a UUID the server draws). */
export const EXAMPLE_REQUEST_ID = '5e8f2a9c-3b1d-4f6e-8a7c-2d9b0e1f3a4c';

/** An error document exactly as the server writes one (errorDocument), for the given code, detail and source. */
export function errorExample(
  baseUrl: string,
  code: ErrorCode,
  detail?: string,
  source?: ErrorSource,
): ErrorDocument {
  const error = new AppError(code, {
    ...(detail === undefined ? {} : { detail }),
    ...(source ? { source } : {}),
  });
  return errorDocument(error, { requestId: EXAMPLE_REQUEST_ID, baseUrl });
}

/** What the errors shared by every operation depend on: its security, the media type it answers in and reads. */
export interface OperationFacts {
  security?: Record<string, string[]>[];
  /** The media type of the success answer. */
  answers?: string;
  /** The media type of the request body (JSON:API when the operation reads none, as the server says then). */
  reads?: string;
}

const TOKEN_KINDS: Record<string, string> = {
  oauth_user_token: 'user',
  oauth_client_credentials_token: 'client',
};

/**
 * The error document of a status every operation answers alike, as bearer-auth.ts, json-api.ts and the error
 * handler write it; undefined for the statuses whose document is the operation's own (400, 404, 409, 429).
 */
export function sharedErrorExample(
  baseUrl: string,
  status: string,
  facts: OperationFacts,
): ErrorDocument | undefined {
  switch (status) {
    case '401':
      return errorExample(baseUrl, 'INVALID_TOKEN', 'Send an access token: Authorization: Bearer <token>.', {
        header: 'Authorization',
      });
    case '403': {
      const wanted = (facts.security ?? []).flatMap((requirement) =>
        Object.entries(requirement).map(([scheme, scopes]) => ({ kind: TOKEN_KINDS[scheme]!, scopes })),
      );
      return errorExample(baseUrl, 'FORBIDDEN', tokensNeeded(wanted));
    }
    case '406':
      return errorExample(baseUrl, 'NOT_ACCEPTABLE', `The Accept header must allow ${facts.answers}.`, {
        header: 'Accept',
      });
    case '415':
      return errorExample(
        baseUrl,
        'UNSUPPORTED_MEDIA_TYPE',
        `The request body must be sent as Content-Type: ${facts.reads ?? 'application/vnd.api+json'}.`,
        { header: 'Content-Type' },
      );
    case '500':
      return errorExample(baseUrl, 'UNEXPECTED_ERROR');
    case '503':
      return errorExample(baseUrl, 'SERVICE_UNAVAILABLE');
    default:
      return undefined;
  }
}

/** The examples of every operation, with links on `baseUrl` as the server writes them. */
export function operationExamples(baseUrl: string): Record<string, OperationExamples> {
  const base = baseUrl;
  const error = (code: ErrorCode, detail: string, source?: ErrorSource) =>
    errorExample(baseUrl, code, detail, source);
  return {
    ...complianceExamples(base, error),
    ...disclosureExamples(error),
    ...reportExamples(base, error),
    ...overpaymentExamples(error),
    // GET /rest/health
    getHealth: { answer: { status: 'UP', version: packageJson.version } },
    // GET /rest/organizations
    listOrganizations: {
      answer: {
        data: [
          {
            type: 'organizations',
            id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
            attributes: { name: 'Acme Logistics', products: ['ODP'] },
            links: { self: `${base}/rest/organizations/6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001` },
          },
          {
            type: 'organizations',
            id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0002',
            attributes: { name: 'Northwind Cafes', products: ['ODP'] },
            links: { self: `${base}/rest/organizations/6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0002` },
          },
        ],
      },
      errors: {
        '400': error('INVALID_FILTER_QUERY', 'Unexpected "=" at position 5.', { parameter: 'filter' }),
      },
    },
    // GET /rest/organizations/{organization_id}
    readOrganization: {
      answer: {
        data: {
          type: 'organizations',
          id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
          attributes: { name: 'Acme Logistics', products: ['ODP'] },
          links: { self: `${base}/rest/organizations/6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580 is linked to this client.',
        ),
      },
    },
    // POST /admin/organizations
    adminCreateOrganization: {
      request: {
        data: {
          type: 'organizations',
          attributes: {
            name: 'Bayside Provisions',
            products: ['ODP'],
            policy: {
              pay_frequency: 'BIWEEKLY',
              pay_calendar_anchor: '2026-01-05',
              time_zone: 'America/Chicago',
            },
          },
        },
      },
      answer: {
        data: {
          type: 'organizations',
          id: '8ab73cab-0672-4b07-adf5-fc61ec3afaf3',
          attributes: {
            name: 'Bayside Provisions',
            products: ['ODP'],
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            policy: {
              currency: 'USD',
              time_zone: 'America/Chicago',
              pay_frequency: 'BIWEEKLY',
              pay_calendar_anchor: '2026-01-05',
              payday_offset_days: 5,
              access_rate_bp: 5000,
              withholding_estimate_bp: 2500,
              transfers_enabled: true,
              minimum_transfer_minor: 500,
              maximum_transfer_minor: 100000,
              maximum_fee_minor: 999,
              daily_transfer_count_max: 5,
              daily_transfer_amount_max_minor: 100000,
              fee_card_instant_minor: 299,
              fee_card_next_day_minor: 0,
              fee_bank_instant_minor: null,
              fee_bank_next_day_minor: 0,
              overpayment_default_resolution: 'NONE',
              overpayment_installments: 2,
              overpayment_write_off_after_periods: 6,
              overpayment_write_off_delinquent: false,
              payday_payout: 'PROVIDER',
            },
          },
          links: { self: `${base}/admin/organizations/8ab73cab-0672-4b07-adf5-fc61ec3afaf3` },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', '/data/attributes/name must NOT have fewer than 1 characters.', {
          pointer: '/data/attributes/name',
        }),
      },
    },
    // GET /admin/organizations
    adminListOrganizations: {
      answer: {
        data: [
          {
            type: 'organizations',
            id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
            attributes: {
              name: 'Acme Logistics',
              products: ['ODP'],
              created_at: '2026-03-11T15:30:00.000Z',
              updated_at: '2026-03-11T15:30:00.000Z',
              policy: {
                currency: 'USD',
                time_zone: 'America/New_York',
                pay_frequency: 'BIWEEKLY',
                pay_calendar_anchor: '2026-01-05',
                payday_offset_days: 5,
                access_rate_bp: 5000,
                withholding_estimate_bp: 2500,
                transfers_enabled: true,
                minimum_transfer_minor: 500,
                maximum_transfer_minor: 100000,
                maximum_fee_minor: 999,
                daily_transfer_count_max: 5,
                daily_transfer_amount_max_minor: 100000,
                fee_card_instant_minor: 299,
                fee_card_next_day_minor: 0,
                fee_bank_instant_minor: null,
                fee_bank_next_day_minor: 0,
                overpayment_default_resolution: 'NONE',
                overpayment_installments: 2,
                overpayment_write_off_after_periods: 6,
                overpayment_write_off_delinquent: false,
                payday_payout: 'PROVIDER',
              },
            },
            links: { self: `${base}/admin/organizations/6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001` },
          },
          {
            type: 'organizations',
            id: '8ab73cab-0672-4b07-adf5-fc61ec3afaf3',
            attributes: {
              name: 'Bayside Provisions',
              products: ['ODP'],
              created_at: '2026-03-11T15:30:00.000Z',
              updated_at: '2026-03-11T15:30:00.000Z',
              policy: {
                currency: 'USD',
                time_zone: 'America/Chicago',
                pay_frequency: 'BIWEEKLY',
                pay_calendar_anchor: '2026-01-05',
                payday_offset_days: 5,
                access_rate_bp: 5000,
                withholding_estimate_bp: 2500,
                transfers_enabled: true,
                minimum_transfer_minor: 500,
                maximum_transfer_minor: 100000,
                maximum_fee_minor: 999,
                daily_transfer_count_max: 5,
                daily_transfer_amount_max_minor: 100000,
                fee_card_instant_minor: 299,
                fee_card_next_day_minor: 0,
                fee_bank_instant_minor: null,
                fee_bank_next_day_minor: 0,
                overpayment_default_resolution: 'NONE',
                overpayment_installments: 2,
                overpayment_write_off_after_periods: 6,
                overpayment_write_off_delinquent: false,
                payday_payout: 'PROVIDER',
              },
            },
            links: { self: `${base}/admin/organizations/8ab73cab-0672-4b07-adf5-fc61ec3afaf3` },
          },
        ],
        links: {
          self: `${base}/admin/organizations?page%5Boffset%5D=0&page%5Blimit%5D=2`,
          next: `${base}/admin/organizations?page%5Boffset%5D=2&page%5Blimit%5D=2`,
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'page[limit] must be a whole number from 1 to 1000.', {
          parameter: 'page[limit]',
        }),
      },
    },
    // GET /admin/organizations/{organization_id}
    adminReadOrganization: {
      answer: {
        data: {
          type: 'organizations',
          id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
          attributes: {
            name: 'Acme Logistics',
            products: ['ODP'],
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            policy: {
              currency: 'USD',
              time_zone: 'America/New_York',
              pay_frequency: 'BIWEEKLY',
              pay_calendar_anchor: '2026-01-05',
              payday_offset_days: 5,
              access_rate_bp: 5000,
              withholding_estimate_bp: 2500,
              transfers_enabled: true,
              minimum_transfer_minor: 500,
              maximum_transfer_minor: 100000,
              maximum_fee_minor: 999,
              daily_transfer_count_max: 5,
              daily_transfer_amount_max_minor: 100000,
              fee_card_instant_minor: 299,
              fee_card_next_day_minor: 0,
              fee_bank_instant_minor: null,
              fee_bank_next_day_minor: 0,
              overpayment_default_resolution: 'NONE',
              overpayment_installments: 2,
              overpayment_write_off_after_periods: 6,
              overpayment_write_off_delinquent: false,
              payday_payout: 'PROVIDER',
            },
          },
          links: { self: `${base}/admin/organizations/6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001` },
        },
      },
      errors: { '404': error('RECORD_NOT_FOUND', 'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580.') },
    },
    // PATCH /admin/organizations/{organization_id}/policy
    adminUpdateOrganizationPolicy: {
      request: {
        data: {
          type: 'organization_policies',
          attributes: { access_rate_bp: 5000, fee_bank_instant_minor: 199 },
        },
      },
      answer: {
        data: {
          type: 'organization_policies',
          id: '8ab73cab-0672-4b07-adf5-fc61ec3afaf3',
          attributes: {
            currency: 'USD',
            time_zone: 'America/Chicago',
            pay_frequency: 'BIWEEKLY',
            pay_calendar_anchor: '2026-01-05',
            payday_offset_days: 5,
            access_rate_bp: 5000,
            withholding_estimate_bp: 2500,
            transfers_enabled: true,
            minimum_transfer_minor: 500,
            maximum_transfer_minor: 100000,
            maximum_fee_minor: 999,
            daily_transfer_count_max: 5,
            daily_transfer_amount_max_minor: 100000,
            fee_card_instant_minor: 299,
            fee_card_next_day_minor: 0,
            fee_bank_instant_minor: 199,
            fee_bank_next_day_minor: 0,
            overpayment_default_resolution: 'NONE',
            overpayment_installments: 2,
            overpayment_write_off_after_periods: 6,
            overpayment_write_off_delinquent: false,
            payday_payout: 'PROVIDER',
          },
          links: { self: `${base}/admin/organizations/8ab73cab-0672-4b07-adf5-fc61ec3afaf3/policy` },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', '/data/attributes/currency must match pattern "^[A-Z]{3}$".', {
          pointer: '/data/attributes/currency',
        }),
        '404': error('RECORD_NOT_FOUND', 'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580.'),
      },
    },
    // POST /admin/organizations/{organization_id}/roster
    adminImportRoster: {
      request:
        'Primary_Identifier,First_Name,Last_Name,Email,Wage_Amount,Wage_Frequency,Group\nH-3001,Jordan,Lee,jordan.lee@example.com,22.50,HOURLY,warehouse\nH-3002,Sam,Ortiz,sam.ortiz@example.com,-1,HOURLY,warehouse\n',
      answer: {
        data: {
          type: 'roster_imports',
          id: '4c4a6870-f7c1-432a-a66b-bfe0a6a0ca1a',
          attributes: {
            organization_id: '8ab73cab-0672-4b07-adf5-fc61ec3afaf3',
            organization_name: 'Bayside Provisions',
            created: 1,
            updated: 0,
            unchanged: 0,
            rejected: 1,
            rejected_lines: [
              {
                line: 3,
                field: 'wage_amount',
                detail:
                  'wage_amount must be an amount such as 24.00: digits, at most 2 after the point, no sign, symbol or separator (got "-1").',
              },
            ],
            rejected_lines_truncated: false,
          },
        },
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'The roster is empty: it needs a header line naming its columns, then a line per job.',
          { pointer: '' },
        ),
        '404': error('RECORD_NOT_FOUND', 'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580.'),
        '409': error(
          'ROSTER_IMPORT_RUNNING',
          'A roster import of organization Bayside Provisions (8ab73cab-0672-4b07-adf5-fc61ec3afaf3) is already ' +
            'running; import this file when it has finished.',
        ),
      },
    },
    // POST /admin/organizations/{organization_id}/invitations
    adminIssueInvitations: {
      request: {
        data: { type: 'invitations', attributes: { emails: ['jordan.lee@example.com'], valid_for_days: 14 } },
      },
      answer: {
        data: [
          {
            type: 'invitations',
            id: '0d6f3a52-8e1b-4c7a-9f20-5b8e4d1c7a36',
            attributes: {
              person_id: 'e2b7c1d4-3f5a-4e8b-9c6d-7a1f2e3b4c5d',
              email: 'jordan.lee@example.com',
              first_name: 'Jordan',
              last_name: 'Lee',
              invitation_code: '7K3QM-X9D2A-0B4TR-HV6NC',
              expires_at: '2026-03-25T15:30:00.000Z',
              replaces_password: false,
            },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'No code was issued. sam.ortiz@example.com: no person with this email has a job at Bayside Provisions.',
          { pointer: '/data/attributes/emails' },
        ),
        '404': error('RECORD_NOT_FOUND', 'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580.'),
      },
    },
    // POST /admin/jobs/{job_id}/activate
    adminActivateJob: {
      answer: {
        data: {
          type: 'jobs',
          id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
          attributes: {
            external_identifiers: { primary_identifier: 'A-1001-primary' },
            activation_status: 'ACTIVATED',
          },
          relationships: {
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            organization: { data: { type: 'organizations', id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001' } },
            earnings_balance_account: {
              data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' },
            },
          },
          meta: { earnings_balance_account_created: false },
          links: { self: `${base}/rest/jobs/c9c5a9d8-ca0c-4b55-8198-94a6264eed4b` },
        },
      },
      errors: { '404': error('RECORD_NOT_FOUND', 'No job 182d55a6-49a9-4e7d-abf9-85f35847c580.') },
    },
    // POST /admin/jobs/{job_id}/deactivate
    adminDeactivateJob: {
      answer: {
        data: {
          type: 'jobs',
          id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
          attributes: {
            external_identifiers: { primary_identifier: 'A-1001-primary' },
            activation_status: 'DEACTIVATED',
          },
          relationships: {
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            organization: { data: { type: 'organizations', id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001' } },
            earnings_balance_account: {
              data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' },
            },
          },
          meta: { earnings_balance_account_created: false },
          links: { self: `${base}/rest/jobs/c9c5a9d8-ca0c-4b55-8198-94a6264eed4b` },
        },
      },
      errors: { '404': error('RECORD_NOT_FOUND', 'No job 182d55a6-49a9-4e7d-abf9-85f35847c580.') },
    },
    // POST /admin/organizations/{organization_id}/earnings
    adminImportEarnings: {
      request:
        'row_id,primary_identifier,date,hours,amount\nS-1041,A-1001-primary,2026-03-10,7.5,\nS-1042,A-1001-primary,2026-03-10,,80.00\n',
      answer: {
        data: {
          type: 'earnings_imports',
          id: '7c0524ef-cc2a-4db7-a5e0-802b57bc62ba',
          attributes: {
            organization_id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001',
            organization_name: 'Acme Logistics',
            currency: 'USD',
            lines: 2,
            recorded: 2,
            duplicates: 0,
            rejected: 0,
            rejected_lines: [],
            rejected_lines_truncated: false,
            recorded_minor: 26000,
            credited_minor: 9750,
          },
        },
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'The earnings file is empty: it needs a header line naming its columns, then a line per shift.',
          { pointer: '' },
        ),
        '404': error('RECORD_NOT_FOUND', 'No organization 182d55a6-49a9-4e7d-abf9-85f35847c580.'),
      },
    },
    // GET /admin/sandbox/clock
    adminGetSandboxClock: {
      answer: {
        data: {
          type: 'sandbox_clocks',
          id: 'sandbox',
          attributes: { now: '2026-03-11T15:30:00.000Z', real_now: '2026-03-11T15:30:00.000Z', offset_ms: 0 },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'Parameter at is not a known field.', { parameter: 'at' }),
      },
    },
    // POST /admin/sandbox/clock
    adminAdvanceSandboxClock: {
      request: { data: { type: 'sandbox_clocks', id: 'sandbox', attributes: { days: 1 } } },
      answer: {
        data: {
          type: 'sandbox_clocks',
          id: 'sandbox',
          attributes: {
            now: '2026-03-12T15:30:00.000Z',
            real_now: '2026-03-11T15:30:00.000Z',
            offset_ms: 86400000,
          },
          meta: {
            advanced_from: '2026-03-11T15:30:00.000Z',
            advanced_to: '2026-03-12T15:30:00.000Z',
            steps: 96,
            jobs: {
              'settle-due': {
                runs: 96,
                settled: 6,
                failed: 0,
                deposited: 0,
                returned: 0,
                sent: 6,
                retried: 0,
                refused: 0,
              },
              'salary-accrual': { runs: 25, jobs: 0, days: 0, creditedMinor: 0, refreshedMinor: 0 },
              payroll: { runs: 25, closed: 0, paid: 0, held: 0 },
              'idempotency-key-purge': { runs: 25, purged: 0 },
            },
          },
        },
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          "to 2026-03-01T00:00:00.000Z is not later than the sandbox's time, 2026-03-11T15:30:00.000Z: the sandbox clock only moves forward (ewa sandbox reset puts it back to real time).",
          { pointer: '/data/attributes/to' },
        ),
      },
    },
    // POST /admin/sandbox/reset
    adminResetSandbox: {
      request: { data: { type: 'sandbox_resets' } },
      answer: {
        data: {
          type: 'sandbox_resets',
          id: 'c4fa55ac-dfc1-43f7-aa7a-b081ed24b94e',
          attributes: {
            demo: 'SEEDED',
            clock: { now: '2026-03-11T15:30:00.000Z', real_now: '2026-03-11T15:30:00.000Z', offset_ms: 0 },
          },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', '/data/type must be "sandbox_resets".', { pointer: '/data/type' }),
      },
    },
    // GET /rest/people/{person_id}
    readPerson: {
      answer: {
        data: {
          type: 'people',
          id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001',
          attributes: {
            disallow_reason: null,
            products: { [CARD_PRODUCT_KEY]: { eligible: false, enrolled: false } },
            state_of_residence: 'NY',
          },
          links: { self: `${base}/rest/people/0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No person 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // PATCH /rest/people/{person_id}
    updatePerson: {
      request: {
        data: {
          type: 'people',
          id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001',
          attributes: { state_of_residence: 'NY' },
        },
      },
      answer: {
        data: {
          type: 'people',
          id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001',
          attributes: {
            disallow_reason: null,
            products: { [CARD_PRODUCT_KEY]: { eligible: false, enrolled: false } },
            state_of_residence: 'NY',
          },
          links: { self: `${base}/rest/people/0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001` },
        },
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'state_of_residence must be the two-letter code of a US state or DC in capitals, such as NY (got "XX").',
          { pointer: '/data/attributes/state_of_residence' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No person 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // GET /rest/jobs
    listJobs: {
      answer: {
        data: [
          {
            type: 'jobs',
            id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
            attributes: {
              external_identifiers: {
                primary_identifier: 'A-1001-primary',
                employee_id: 'A-1001',
                group: 'acme',
              },
              first_name: 'Alex',
              last_name: 'Rivera',
              title: 'Associate',
              department: 'Operations',
              activation_status: 'ACTIVATED',
              wage_rate: { amount: 2400, currency: 'USD', frequency: 'HOURLY' },
              direct_deposit_status: 'SETUP_COMPLETE',
              location: 'Main site',
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
              organization: { data: { type: 'organizations', id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001' } },
              direct_deposit_default_depository: {
                data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' },
              },
            },
            links: { self: `${base}/rest/jobs/c9c5a9d8-ca0c-4b55-8198-94a6264eed4b` },
          },
        ],
      },
      errors: {
        '400': error('INVALID_FILTER_VALUE', 'filter[person.id] must be a UUID.', {
          parameter: 'filter[person.id]',
        }),
      },
    },
    // GET /rest/jobs/{job_id}
    readJob: {
      answer: {
        data: {
          type: 'jobs',
          id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
          attributes: {
            external_identifiers: {
              primary_identifier: 'A-1001-primary',
              employee_id: 'A-1001',
              group: 'acme',
            },
            first_name: 'Alex',
            last_name: 'Rivera',
            title: 'Associate',
            department: 'Operations',
            activation_status: 'ACTIVATED',
            wage_rate: { amount: 2400, currency: 'USD', frequency: 'HOURLY' },
            direct_deposit_status: 'SETUP_COMPLETE',
            location: 'Main site',
          },
          relationships: {
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            organization: { data: { type: 'organizations', id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001' } },
            direct_deposit_default_depository: {
              data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' },
            },
          },
          links: { self: `${base}/rest/jobs/c9c5a9d8-ca0c-4b55-8198-94a6264eed4b` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No job 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // PATCH /rest/jobs/{job_id}
    updateJob: {
      request: {
        data: {
          type: 'jobs',
          id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
          relationships: {
            direct_deposit_default_depository: {
              data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' },
            },
          },
        },
      },
      answer: {
        data: {
          type: 'jobs',
          id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b',
          attributes: {
            external_identifiers: {
              primary_identifier: 'A-1001-primary',
              employee_id: 'A-1001',
              group: 'acme',
            },
            first_name: 'Alex',
            last_name: 'Rivera',
            title: 'Associate',
            department: 'Operations',
            activation_status: 'ACTIVATED',
            wage_rate: { amount: 2400, currency: 'USD', frequency: 'HOURLY' },
            direct_deposit_status: 'SETUP_COMPLETE',
            location: 'Main site',
          },
          relationships: {
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            organization: { data: { type: 'organizations', id: '6f1c2a4e-0b7d-4c1e-9a35-3d2f1e0c0001' } },
            direct_deposit_default_depository: {
              data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' },
            },
          },
          links: { self: `${base}/rest/jobs/c9c5a9d8-ca0c-4b55-8198-94a6264eed4b` },
        },
      },
      errors: {
        '400': error(
          'INVALID_RESOURCE_LINK',
          "direct_deposit_default_depository must be one of this person's own DEPOSITORY accounts; 34dea43d-ff58-43e1-ae3b-5851f954fdfd is not.",
          { pointer: '/data/relationships/direct_deposit_default_depository/data/id' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No job 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // GET /rest/paychecks
    listPaychecks: {
      answer: {
        data: [
          {
            type: 'paychecks',
            id: '29f2eaa1-488c-46a4-a21a-8ae354fd30b6',
            attributes: {
              status: 'DEPOSITED',
              pay_period_starts_at: '2026-02-16T05:00:00.000Z',
              pay_period_ends_at: '2026-03-01T05:00:00.000Z',
              deposit_expected_at: '2026-03-06T05:00:00.000Z',
              total_debited: 5000,
              gross_earnings: 192000,
              employer_withholdings: 48000,
              net_earnings: 144000,
              currency: 'USD',
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
              job: { data: { type: 'jobs', id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b' } },
            },
            links: { self: `${base}/rest/paychecks/29f2eaa1-488c-46a4-a21a-8ae354fd30b6` },
          },
          {
            type: 'paychecks',
            id: 'ec8201c7-9299-4643-a8aa-457fb6002b4d',
            attributes: {
              status: 'ESTIMATED',
              pay_period_starts_at: '2026-03-02T05:00:00.000Z',
              pay_period_ends_at: '2026-03-15T04:00:00.000Z',
              deposit_expected_at: '2026-03-20T04:00:00.000Z',
              total_debited: 1000,
              gross_earnings: 153600,
              employer_withholdings: 38400,
              net_earnings: 115200,
              currency: 'USD',
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
              job: { data: { type: 'jobs', id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b' } },
            },
            links: { self: `${base}/rest/paychecks/ec8201c7-9299-4643-a8aa-457fb6002b4d` },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_FILTER_VALUE',
          'filter[status] must be one of ESTIMATED, PROCESSING, IN_TRANSIT, DEPOSITED.',
          { parameter: 'filter[status]' },
        ),
      },
    },
    // GET /rest/paychecks/{paycheck_id}
    readPaycheck: {
      answer: {
        data: {
          type: 'paychecks',
          id: '29f2eaa1-488c-46a4-a21a-8ae354fd30b6',
          attributes: {
            status: 'DEPOSITED',
            pay_period_starts_at: '2026-02-16T05:00:00.000Z',
            pay_period_ends_at: '2026-03-01T05:00:00.000Z',
            deposit_expected_at: '2026-03-06T05:00:00.000Z',
            total_debited: 5000,
            gross_earnings: 192000,
            employer_withholdings: 48000,
            net_earnings: 144000,
            currency: 'USD',
          },
          relationships: {
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            job: { data: { type: 'jobs', id: 'c9c5a9d8-ca0c-4b55-8198-94a6264eed4b' } },
          },
          links: { self: `${base}/rest/paychecks/29f2eaa1-488c-46a4-a21a-8ae354fd30b6` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No paycheck 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // GET /rest/accounts
    listAccounts: {
      answer: {
        data: [
          {
            type: 'accounts',
            id: 'b288df5f-5325-47a3-a201-fe9d2f14caeb',
            attributes: {
              name: 'Savings',
              account_type: 'DEPOSITORY',
              subtype: 'SAVINGS',
              verification_status: 'VERIFIED',
              balances: { available: null, current: null, currency: 'USD' },
              capabilities: {
                transfer_destination: [{ schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' }],
              },
              details: {
                first_name: 'Alex',
                last_name: 'Rivera',
                routing_number: 'XXXXX0000',
                account_number: 'XXXXX4321',
              },
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            },
            links: { self: `${base}/rest/accounts/b288df5f-5325-47a3-a201-fe9d2f14caeb` },
          },
          {
            type: 'accounts',
            id: '6b0d9b58-7a78-4308-812b-aad355248c08',
            attributes: {
              name: 'Checking',
              account_type: 'DEPOSITORY',
              subtype: 'CHECKING',
              verification_status: 'VERIFIED',
              balances: { available: null, current: null, currency: 'USD' },
              capabilities: {
                transfer_destination: [{ schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' }],
              },
              details: {
                first_name: 'Alex',
                last_name: 'Rivera',
                routing_number: 'XXXXX0000',
                account_number: 'XXXXXXXX0001',
              },
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            },
            links: { self: `${base}/rest/accounts/6b0d9b58-7a78-4308-812b-aad355248c08` },
          },
          {
            type: 'accounts',
            id: '7b4a7cac-f130-470a-a9cd-00fef58b155f',
            attributes: {
              name: 'Debit card',
              account_type: 'CARD',
              subtype: 'DEBIT',
              verification_status: 'VERIFIED',
              balances: { available: null, current: null, currency: 'USD' },
              capabilities: {
                transfer_destination: [
                  { schedule: 'WITHIN_THIRTY_MINUTES', fee: 299, currency: 'USD' },
                  { schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' },
                ],
              },
              details: {
                first_name: 'Alex',
                last_name: 'Rivera',
                last_four: '1111',
                issuer: '411111',
                expiration_month: '02',
                expiration_year: '2030',
              },
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            },
            links: { self: `${base}/rest/accounts/7b4a7cac-f130-470a-a9cd-00fef58b155f` },
          },
          {
            type: 'accounts',
            id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8',
            attributes: {
              name: 'Earnings balance',
              account_type: 'EARNINGS_BALANCE',
              subtype: 'ODP',
              verification_status: 'VERIFIED',
              balances: { available: 56600, current: 56600, currency: 'USD' },
              capabilities: { transfer_destination: [] },
              details: {},
            },
            relationships: {
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            },
            links: { self: `${base}/rest/accounts/92c4ff52-5947-4f59-8225-6bdd0d43bce8` },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'With a client token, filter[person.id] is required: accounts are listed one person at a time.',
          { parameter: 'filter[person.id]' },
        ),
      },
    },
    // POST /rest/accounts
    createAccount: {
      request: {
        data: {
          type: 'accounts',
          attributes: {
            name: 'Rainy day savings',
            account_type: 'DEPOSITORY',
            subtype: 'SAVINGS',
            details: {
              first_name: 'Alex',
              last_name: 'Rivera',
              routing_number: '110000000',
              account_number: '987654321',
            },
          },
          relationships: { person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } } },
        },
      },
      answer: {
        data: {
          type: 'accounts',
          id: 'a0628b17-29e6-4192-b467-bc40ce04b73b',
          attributes: {
            name: 'Rainy day savings',
            account_type: 'DEPOSITORY',
            subtype: 'SAVINGS',
            verification_status: 'VERIFIED',
            balances: { available: null, current: null, currency: 'USD' },
            capabilities: {
              transfer_destination: [{ schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' }],
            },
            details: {
              first_name: 'Alex',
              last_name: 'Rivera',
              routing_number: 'XXXXX0000',
              account_number: 'XXXXX4321',
            },
          },
          relationships: { person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } } },
          links: { self: `${base}/rest/accounts/a0628b17-29e6-4192-b467-bc40ce04b73b` },
        },
      },
      errors: {
        '400': error('MISSING_REQUIRED_FIELD', 'details.first_name is required.', {
          pointer: '/data/attributes/details/first_name',
        }),
      },
    },
    // GET /rest/accounts/{account_id}
    readAccount: {
      answer: {
        data: {
          type: 'accounts',
          id: '6b0d9b58-7a78-4308-812b-aad355248c08',
          attributes: {
            name: 'Checking',
            account_type: 'DEPOSITORY',
            subtype: 'CHECKING',
            verification_status: 'VERIFIED',
            balances: { available: null, current: null, currency: 'USD' },
            capabilities: {
              transfer_destination: [{ schedule: 'NEXT_BUSINESS_DAY', fee: 0, currency: 'USD' }],
            },
            details: {
              first_name: 'Alex',
              last_name: 'Rivera',
              routing_number: 'XXXXX0000',
              account_number: 'XXXXXXXX0001',
            },
          },
          relationships: { person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } } },
          links: { self: `${base}/rest/accounts/6b0d9b58-7a78-4308-812b-aad355248c08` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No account 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // DELETE /rest/accounts/{account_id}
    deleteAccount: {
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No account 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // GET /rest/transfers
    listTransfers: {
      answer: {
        data: [
          {
            type: 'transfers',
            id: '21651779-bb9e-4e60-a720-f93c4224ce55',
            attributes: {
              amount: 14400,
              currency: 'USD',
              schedule: 'WITHIN_THIRTY_MINUTES',
              preview: false,
              status: 'SETTLED',
              submitted_at: '2026-02-17T22:00:00.000Z',
              resolved_at: '2026-02-17T22:00:00.000Z',
              fee: 0,
            },
            relationships: {
              origin: { data: { type: 'paychecks', id: '29f2eaa1-488c-46a4-a21a-8ae354fd30b6' } },
              destination: { data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' } },
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
              estimated_funding_sources: { data: [] },
              final_funding_sources: { data: [] },
            },
            links: { self: `${base}/rest/transfers/21651779-bb9e-4e60-a720-f93c4224ce55` },
          },
          {
            type: 'transfers',
            id: 'a372ce4d-3e6b-4964-a4b9-c3b5586b1c61',
            attributes: {
              amount: 5000,
              currency: 'USD',
              schedule: 'NEXT_BUSINESS_DAY',
              preview: false,
              status: 'SETTLED',
              submitted_at: '2026-02-17T23:00:00.000Z',
              resolved_at: '2026-02-18T14:00:00.000Z',
              fee: 0,
            },
            relationships: {
              origin: { data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' } },
              destination: { data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' } },
              person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
              estimated_funding_sources: {
                data: [{ type: 'funding_sources', id: '76028e513ee437cc2c1acd830d34afb5' }],
              },
              final_funding_sources: {
                data: [{ type: 'funding_sources', id: 'e9d00b3e1ceaa954d77ed7ee3008497f' }],
              },
            },
            links: { self: `${base}/rest/transfers/a372ce4d-3e6b-4964-a4b9-c3b5586b1c61` },
          },
        ],
        included: [
          {
            type: 'funding_sources',
            id: '76028e513ee437cc2c1acd830d34afb5',
            attributes: { amount: 5000, currency: 'USD' },
            relationships: {
              source: { data: { type: 'paychecks', id: '29f2eaa1-488c-46a4-a21a-8ae354fd30b6' } },
              transfer: { data: { type: 'transfers', id: 'a372ce4d-3e6b-4964-a4b9-c3b5586b1c61' } },
            },
          },
          {
            type: 'funding_sources',
            id: '5f25ee565dcfc5efb54733d4e1f1e39e',
            attributes: { amount: 1313, currency: 'USD' },
            relationships: {
              source: { data: { type: 'paychecks', id: '29f2eaa1-488c-46a4-a21a-8ae354fd30b6' } },
              transfer: { data: { type: 'transfers', id: 'e979110f-1ef8-4808-aaa7-7f2cb662b623' } },
            },
          },
          {
            type: 'funding_sources',
            id: '9bd7bf8d5aef76df4b3b05f089f2b184',
            attributes: { amount: 1000, currency: 'USD' },
            relationships: {
              source: { data: { type: 'paychecks', id: 'ec8201c7-9299-4643-a8aa-457fb6002b4d' } },
              transfer: { data: { type: 'transfers', id: '1ba84e01-046e-419d-aa87-0a6a2f3b2312' } },
            },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_FILTER_VALUE',
          'filter[submitted_at__gt] must be an ISO 8601 date-time with an offset, such as 2026-03-20T14:00:00Z, on ' +
            'the calendar and from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.',
          { parameter: 'filter[submitted_at__gt]' },
        ),
      },
    },
    // POST /rest/transfers
    createTransfer: {
      request: {
        data: {
          type: 'transfers',
          attributes: { amount: 5000, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY' },
          relationships: {
            origin: { data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' } },
            destination: { data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' } },
          },
        },
      },
      answer: {
        data: {
          type: 'transfers',
          id: '3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7e9b41',
          attributes: {
            amount: 5000,
            currency: 'USD',
            schedule: 'NEXT_BUSINESS_DAY',
            preview: false,
            status: 'PENDING',
            submitted_at: '2026-03-11T15:30:00.000Z',
            resolved_at: null,
            fee: 0,
          },
          links: { self: `${base}/rest/transfers/3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7e9b41` },
          relationships: {
            origin: { data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' } },
            destination: { data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' } },
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            estimated_funding_sources: {
              data: [{ type: 'funding_sources', id: '6bf7b41d9f55bbf32234ee096ac7bb4a' }],
            },
            final_funding_sources: { data: [] },
          },
        },
      },
      errors: {
        '400': error('MAXIMUM_AMOUNT_EXCEEDED', 'amount must be at most 100000.', {
          pointer: '/data/attributes/amount',
        }),
        '409': errorExample(baseUrl, 'IDEMPOTENCY_KEY_LOCKED', undefined, { header: 'Idempotency-Key' }),
      },
    },
    // GET /rest/transfers/{transfer_id}
    readTransfer: {
      answer: {
        data: {
          type: 'transfers',
          id: '3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7e9b41',
          attributes: {
            amount: 5000,
            currency: 'USD',
            schedule: 'NEXT_BUSINESS_DAY',
            preview: false,
            status: 'PENDING',
            submitted_at: '2026-03-11T15:30:00.000Z',
            resolved_at: null,
            fee: 0,
          },
          relationships: {
            origin: { data: { type: 'accounts', id: '92c4ff52-5947-4f59-8225-6bdd0d43bce8' } },
            destination: { data: { type: 'accounts', id: '6b0d9b58-7a78-4308-812b-aad355248c08' } },
            person: { data: { type: 'people', id: '0b4e7d1a-5c2f-4e8b-8d1c-7a9e2f3b0001' } },
            estimated_funding_sources: {
              data: [{ type: 'funding_sources', id: '6bf7b41d9f55bbf32234ee096ac7bb4a' }],
            },
            final_funding_sources: { data: [] },
          },
          links: { self: `${base}/rest/transfers/3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7e9b41` },
        },
        included: [
          {
            type: 'funding_sources',
            id: '6bf7b41d9f55bbf32234ee096ac7bb4a',
            attributes: { amount: 5000, currency: 'USD' },
            relationships: {
              source: { data: { type: 'paychecks', id: 'ec8201c7-9299-4643-a8aa-457fb6002b4d' } },
              transfer: { data: { type: 'transfers', id: '3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7e9b41' } },
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
        '404': error(
          'RECORD_NOT_FOUND',
          'No transfer 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this token.',
        ),
      },
    },
    // GET /rest/webhook_endpoints
    listWebhookEndpoints: {
      answer: {
        data: [
          {
            type: 'webhook_endpoints',
            id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
            attributes: {
              url: 'https://partner.example/webhooks/ewa',
              description: 'Transfers to our ledger',
              event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
              status: 'ENABLED',
              disabled_reason: null,
              created_at: '2026-03-11T15:30:00.000Z',
              updated_at: '2026-03-11T15:30:00.000Z',
            },
            links: { self: `${base}/rest/webhook_endpoints/d330849c-6ce2-4a2e-a4f6-a219ff5bbe4f` },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'page[after] is not a cursor of this list: take it, unchanged, from links.next of the previous answer.',
          { parameter: 'page[after]' },
        ),
      },
    },
    // POST /rest/webhook_endpoints
    createWebhookEndpoint: {
      request: {
        data: {
          type: 'webhook_endpoints',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'Transfers to our ledger',
            event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
          },
        },
      },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'Transfers to our ledger',
            event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            secret: 'whsec_rWnhBZr3ZC+UKWbsYmWOLnOF5En6LGA9HEBg2wF+r9s=',
          },
          links: { self: `${base}/rest/webhook_endpoints/d330849c-6ce2-4a2e-a4f6-a219ff5bbe4f` },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'url must start with https:// or http://.', {
          pointer: '/data/attributes/url',
        }),
      },
    },
    // GET /rest/webhook_endpoints/{endpoint_id}
    readWebhookEndpoint: {
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'Transfers to our ledger',
            event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
          },
          links: { self: `${base}/rest/webhook_endpoints/d330849c-6ce2-4a2e-a4f6-a219ff5bbe4f` },
        },
      },
      errors: {
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // PATCH /rest/webhook_endpoints/{endpoint_id}
    updateWebhookEndpoint: {
      request: {
        data: {
          type: 'webhook_endpoints',
          id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
          attributes: { status: 'DISABLED' },
        },
      },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'Transfers to our ledger',
            event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
            status: 'DISABLED',
            disabled_reason: 'Disabled by request.',
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
          },
          links: { self: `${base}/rest/webhook_endpoints/d330849c-6ce2-4a2e-a4f6-a219ff5bbe4f` },
        },
      },
      errors: {
        '400': error('INVALID_FIELDS', '/data/attributes/event_types/0 must be "transfer.created".', {
          pointer: '/data/attributes/event_types/0',
        }),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // DELETE /rest/webhook_endpoints/{endpoint_id}
    deleteWebhookEndpoint: {
      errors: {
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /rest/webhook_endpoints/{endpoint_id}/rotate_secret
    rotateWebhookSecret: {
      request: { data: { type: 'webhook_secret_rotations', attributes: { overlap_seconds: 86400 } } },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'Transfers to our ledger',
            event_types: ['transfer.created', 'transfer.settled', 'transfer.failed'],
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            secret: 'whsec_nVYG/CXmhB4O7hdNnU37wk6Pon9GWP10KSNV/zv7Gns=',
          },
          links: { self: `${base}/rest/webhook_endpoints/d330849c-6ce2-4a2e-a4f6-a219ff5bbe4f` },
          meta: { previous_secrets_expire_at: '2026-03-12T15:30:00.000Z' },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /rest/webhook_endpoints/{endpoint_id}/test
    testWebhookEndpoint: {
      answer: { meta: { queued: 1, event_id: '13c59b5b-bc7c-4176-a781-fa1db0e409b7' } },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
        '429': error(
          'TOO_MANY_REQUESTS',
          '5 test events already wait for this endpoint; try again once they are delivered.',
        ),
      },
    },
    // GET /rest/webhook_endpoints/{endpoint_id}/deliveries
    listWebhookDeliveries: {
      answer: {
        data: [
          {
            type: 'webhook_deliveries',
            id: 'fb3b94a1-20dd-43da-adb2-d5cc45261e07',
            attributes: {
              event_id: '91296792-661c-48e6-ad39-34cf3eb5c596',
              event_type: 'webhook.test',
              endpoint_id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
              attempt: 1,
              attempted_at: '2026-03-11T15:30:00.000Z',
              duration_ms: 18,
              status_code: 200,
              outcome: 'DELIVERED',
              error: null,
            },
          },
          {
            type: 'webhook_deliveries',
            id: '532395ca-e820-424c-a914-e9c44eef5ded',
            attributes: {
              event_id: '13c59b5b-bc7c-4176-a781-fa1db0e409b7',
              event_type: 'webhook.test',
              endpoint_id: 'd330849c-6ce2-4a2e-a4f6-a219ff5bbe4f',
              attempt: 1,
              attempted_at: '2026-03-11T15:30:00.000Z',
              duration_ms: 19,
              status_code: 200,
              outcome: 'DELIVERED',
              error: null,
            },
          },
        ],
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'limit must be a whole number from 1 to 1000.', {
          parameter: 'limit',
        }),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /rest/webhook_endpoints/{endpoint_id}/redeliveries
    redeliverWebhookEvents: {
      request: {
        data: {
          type: 'webhook_redeliveries',
          attributes: { from: '2026-03-11T00:00:00.000Z', to: '2026-03-11T16:00:00.000Z' },
        },
      },
      answer: { meta: { queued: 2 } },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'Event 1e08d056-242f-4e11-ad3e-a9bb80aaecb4 does not exist (events are kept for EWA_WEBHOOK_RETENTION_DAYS), or no enabled endpoint of this caller receives it.',
          { pointer: '/data/attributes/event_id' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // GET /admin/webhook_endpoints
    adminListWebhookEndpoints: {
      answer: {
        data: [
          {
            type: 'webhook_endpoints',
            id: '190f1d99-071e-4209-a5da-9bba34715f23',
            attributes: {
              url: 'https://partner.example/webhooks/ewa',
              description: null,
              event_types: null,
              status: 'ENABLED',
              disabled_reason: null,
              created_at: '2026-03-11T15:30:00.000Z',
              updated_at: '2026-03-11T15:30:00.000Z',
              client_id: 'demo-partner-server',
            },
            links: { self: `${base}/rest/webhook_endpoints/190f1d99-071e-4209-a5da-9bba34715f23` },
          },
        ],
      },
      errors: {
        '400': error(
          'INVALID_PARAMETERS',
          'page[after] is not a cursor of this list: take it, unchanged, from links.next of the previous answer.',
          { parameter: 'page[after]' },
        ),
      },
    },
    // POST /admin/webhook_endpoints
    adminCreateWebhookEndpoint: {
      request: {
        data: {
          type: 'webhook_endpoints',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            client_id: 'demo-partner-server',
            event_types: null,
          },
        },
      },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: '190f1d99-071e-4209-a5da-9bba34715f23',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: null,
            event_types: null,
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            client_id: 'demo-partner-server',
            secret: 'whsec_xQOv8RhrRmun5eOuneYc/g76wae0yOdYaTcAHtwOJqI=',
          },
          links: { self: `${base}/rest/webhook_endpoints/190f1d99-071e-4209-a5da-9bba34715f23` },
        },
      },
      errors: {
        '400': error('INVALID_PARAMETERS', 'No client nobody.', { pointer: '/data/attributes/client_id' }),
      },
    },
    // GET /admin/webhook_endpoints/{endpoint_id}
    adminReadWebhookEndpoint: {
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: '190f1d99-071e-4209-a5da-9bba34715f23',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: null,
            event_types: null,
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            client_id: 'demo-partner-server',
          },
          links: { self: `${base}/rest/webhook_endpoints/190f1d99-071e-4209-a5da-9bba34715f23` },
        },
      },
      errors: {
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // PATCH /admin/webhook_endpoints/{endpoint_id}
    adminUpdateWebhookEndpoint: {
      request: {
        data: {
          type: 'webhook_endpoints',
          id: '190f1d99-071e-4209-a5da-9bba34715f23',
          attributes: { description: 'All events' },
        },
      },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: '190f1d99-071e-4209-a5da-9bba34715f23',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'All events',
            event_types: null,
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            client_id: 'demo-partner-server',
          },
          links: { self: `${base}/rest/webhook_endpoints/190f1d99-071e-4209-a5da-9bba34715f23` },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // DELETE /admin/webhook_endpoints/{endpoint_id}
    adminDeleteWebhookEndpoint: {
      errors: {
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /admin/webhook_endpoints/{endpoint_id}/rotate_secret
    adminRotateWebhookSecret: {
      request: { data: { type: 'webhook_secret_rotations', attributes: { overlap_seconds: 3600 } } },
      answer: {
        data: {
          type: 'webhook_endpoints',
          id: '190f1d99-071e-4209-a5da-9bba34715f23',
          attributes: {
            url: 'https://partner.example/webhooks/ewa',
            description: 'All events',
            event_types: null,
            status: 'ENABLED',
            disabled_reason: null,
            created_at: '2026-03-11T15:30:00.000Z',
            updated_at: '2026-03-11T15:30:00.000Z',
            client_id: 'demo-partner-server',
            secret: 'whsec_rMWF0ojby7RG8EUn90eTzEI08v/EoYujfXbAlsDhB/o=',
          },
          links: { self: `${base}/rest/webhook_endpoints/190f1d99-071e-4209-a5da-9bba34715f23` },
          meta: { previous_secrets_expire_at: '2026-03-11T16:30:00.000Z' },
        },
      },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /admin/webhook_endpoints/{endpoint_id}/test
    adminTestWebhookEndpoint: {
      answer: { meta: { queued: 1, event_id: 'fe4364df-22a0-498c-a772-896fbdf76000' } },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
        '429': error(
          'TOO_MANY_REQUESTS',
          '5 test events already wait for this endpoint; try again once they are delivered.',
        ),
      },
    },
    // GET /admin/webhook_endpoints/{endpoint_id}/deliveries
    adminListWebhookDeliveries: {
      answer: {
        data: [
          {
            type: 'webhook_deliveries',
            id: 'a2451aa0-2905-49a3-ac2f-8fb1dba55e47',
            attributes: {
              event_id: 'fe4364df-22a0-498c-a772-896fbdf76000',
              event_type: 'webhook.test',
              endpoint_id: '190f1d99-071e-4209-a5da-9bba34715f23',
              attempt: 1,
              attempted_at: '2026-03-11T15:30:00.000Z',
              duration_ms: 18,
              status_code: 200,
              outcome: 'DELIVERED',
              error: null,
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
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /admin/webhook_endpoints/{endpoint_id}/redeliveries
    adminRedeliverWebhookEvents: {
      request: {
        data: {
          type: 'webhook_redeliveries',
          attributes: { from: '2026-03-11T00:00:00.000Z', to: '2026-03-11T16:00:00.000Z' },
        },
      },
      answer: { meta: { queued: 3 } },
      errors: {
        '400': error(
          'INVALID_VERSION_HEADER',
          'The Service-API-Version header names a version this server does not serve; use 3.',
          { header: 'Service-API-Version' },
        ),
        '404': error(
          'RECORD_NOT_FOUND',
          'No webhook endpoint 182d55a6-49a9-4e7d-abf9-85f35847c580 is visible to this caller.',
        ),
      },
    },
    // POST /cards/generic
    createGenericCardToken: {
      request: {
        first_name: 'Alex',
        last_name: 'Rivera',
        card_number: '4111111111111111',
        expiration_year: '2030',
        expiration_month: '02',
        cvv: '123',
        address_line_one: '1 Main St',
        address_line_two: null,
        address_city: 'Albany',
        address_state: 'NY',
        address_zip_code: '12207',
        address_country: 'US',
      },
      answer: {
        token:
          'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIsImVuYyI6IkEyNTZHQ00iLCJraWQiOiJtMSIsInR5cCI6ImNhcmQrand0IiwiZXBrIjp7IngiOiJzblJwak8ydjlzanFQSTIyVVBRZmFJWnlYdVVpSTdJOUNIdVJYcTZBNjM4IiwiY3J2IjoiUC0yNTYiLCJrdHkiOiJFQyIsInkiOiJPR0lDNmxWSUJKam03Y2dVNEwxMXpDM3EyLUxldTlNd2lZcHVnc08ta1V3In19.BJiArxK6BUTHs9DXgLCTpmiIG3o29-g9XBkHqkorUtQi1hbj_K1d-A.E_7vjvRArrGe9CiG.u-l5OHbThoZJwukZPbXU5vsjUoKGCA-8kXVkda3Hig0aRKrpwwKTB4mxUW-e3BGy-dmIyieDezwYlJAv2FpCdiMqmY0RxRJnsdcB_tnKLMa_T-gxpQAu4SEuMbZG0uUx9Wv4hP1s1ulsMEIGoH1FB1yCqakDj9-Rnclz-FOVerVqdjOEoNBUoOhgYH73QNv-vgRmU-lm_UFHSZSEW-JZVTsTCU34KDu4IdPi3jiYUnlD9T-AWGNXMyufBDYU-2x5WcvarbMD98bwcUxiNmku8VgSnfjS-QQYFfueZDL1JrBMGrf9OCF4aaxdCLqJe7RoLYc06_ly6YY8f2iqqk-7JRncpadxHskhoPfIxtj_Y1c1Cf3FZmx4LdE7KyJPkpQGcxxFUEqN-4v71e2tPX3SM-Sghsup1Z4hPgVGe9jKURL09pPefPLqFy6TD4u19_a5D1g.JROO6NuCaahWOQwbiHeUhw',
      },
      errors: {
        '400': error('INVALID_FIELDS', 'card_number is not a valid card number: its check digit is wrong.', {
          pointer: '/card_number',
        }),
        '415': error(
          'UNSUPPORTED_MEDIA_TYPE',
          'Send the card as a JSON object with Content-Type: application/json.',
          {
            header: 'Content-Type',
          },
        ),
        '429': error(
          'TOO_MANY_REQUESTS',
          'Too many card token requests for this card; try again in 42 seconds.',
        ),
      },
    },
  };
}
