import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors/catalog.ts';

/** The published description's facts, committed with the tests (scripts/reference-facts.ts writes them). */
const REFERENCE_FACTS = join(import.meta.dirname, '..', 'contract', 'reference-facts.json');

/**
 * Where each code is provoked through HTTP. Codes whose operations come with later issues name that issue; when
 * the issue lands, its tests provoke the code and the entry moves to a test file.
 */
export const PROVOKED_BY: Record<ErrorCode, string> = {
  INVALID_USER_INPUT: 'test/api/json-api.test.ts',
  INVALID_PARAMETERS: 'test/api/json-api.test.ts',
  INVALID_VERSION_HEADER: 'test/api/json-api.test.ts',
  INVALID_FILTER_QUERY: 'test/api/json-api.test.ts',
  INVALID_FILTER_FIELD: 'test/api/json-api.test.ts',
  INVALID_FILTER_VALUE: 'test/api/json-api.test.ts',
  INVALID_FIELD_OPERATION: 'test/api/json-api.test.ts',
  MISSING_REQUIRED_FIELD: 'test/api/json-api.test.ts, test/api/accounts.test.ts',
  INVALID_FIELDS: 'test/api/json-api.test.ts, test/api/accounts.test.ts',
  NOT_FOUND: 'test/api/json-api.test.ts',
  METHOD_NOT_ALLOWED: 'test/api/json-api.test.ts',
  NOT_ACCEPTABLE: 'test/api/json-api.test.ts',
  UNSUPPORTED_MEDIA_TYPE: 'test/api/json-api.test.ts',
  PAYLOAD_TOO_LARGE: 'test/api/json-api.test.ts',
  REQUEST_TIMEOUT: 'test/api/framework-errors.test.ts',
  REQUEST_HEADERS_TOO_LARGE: 'test/api/framework-errors.test.ts',
  UNEXPECTED_ERROR: 'test/api/json-api.test.ts',
  SERVICE_UNAVAILABLE:
    'test/api/database-unavailable.test.ts, test/api/load-shedding.test.ts, test/api/health.test.ts',
  INVALID_TOKEN: 'test/api/bearer-auth.test.ts',
  // Kept because clients of the published description know it; the description gives missing tokens to INVALID_TOKEN.
  UNAUTHORIZED: 'never produced: a missing token is INVALID_TOKEN',
  FORBIDDEN: 'test/api/bearer-auth.test.ts',
  TOO_MANY_REQUESTS:
    'issue 5 (card tokenization rate limits); sign-in backoff is an HTML 429 of the auth server',
  RECORD_NOT_FOUND: 'test/api/organizations.test.ts, people, jobs and accounts tests',
  INVALID_RESOURCE_LINK: 'test/api/jobs.test.ts, test/api/accounts.test.ts, test/api/transfer-checks.test.ts',
  ACTIVE_JOB_REQUIRED: 'test/api/jobs.test.ts',
  ACCOUNT_TYPE_INVALID: 'test/api/accounts.test.ts',
  ACCOUNT_SUBTYPE_INVALID: 'test/api/accounts.test.ts',
  ACCOUNT_TYPE_SUBTYPE_MISMATCH: 'test/api/accounts.test.ts',
  BANK_ACCOUNT_CREATION_BLOCKED: 'test/api/accounts.test.ts',
  DUPLICATE_ACCOUNT: 'test/api/accounts.test.ts',
  DEBIT_CARD_CREATION_BLOCKED: 'test/api/card-accounts.test.ts',
  INVALID_DEBIT_CARD: 'test/api/card-accounts.test.ts',
  INVALID_CARD_TOKEN: 'test/api/card-accounts.test.ts',
  INVALID_IDEMPOTENCY_KEY: 'test/api/transfer-checks.test.ts, test/api/idempotency.test.ts',
  IDEMPOTENCY_KEY_LOCKED: 'test/api/idempotency.test.ts',
  ROSTER_IMPORT_RUNNING: 'test/api/roster-import-turns.test.ts',
  DISCLOSURE_REQUIRED: 'test/api/disclosures.test.ts',
  DUPLICATE_TRANSFER: 'test/api/transfer-checks.test.ts',
  EARNINGS_BALANCE_EXCEEDED: 'test/api/transfer-checks.test.ts, test/api/idempotency.test.ts',
  INELIGIBLE_ORIGIN: 'test/api/transfer-checks.test.ts',
  INVALID_DESTINATION: 'test/api/transfer-checks.test.ts',
  INVALID_DIRECT_DEPOSIT_STATUS: 'test/api/transfer-checks.test.ts',
  INVALID_RESOURCE_STATE: 'test/api/accounts.test.ts (DELETE); POST /rest/transfers never answers it',
  INVALID_TRANSFER_SCHEDULE: 'test/api/transfer-checks.test.ts',
  MAXIMUM_AMOUNT_EXCEEDED: 'test/api/transfer-checks.test.ts',
  MAXIMUM_FEE_EXCEEDED: 'test/api/transfer-checks.test.ts',
  MINIMUM_AMOUNT_SUBCEEDED: 'test/api/transfer-checks.test.ts',
  MISSING_DEFAULT_DEPOSITORY_ACCOUNT: 'test/api/transfer-checks.test.ts',
  MISSING_STATE_OF_RESIDENCE: 'test/api/transfer-checks.test.ts',
  // Earnings are never negative, so net pay only grows and advances (at most the accessible share) never exceed it.
  OVERPAYMENT_RESOLVING: 'never produced: no overpayment arises',
  OVERPAYMENT_RESOLUTION_REQUIRED: 'never produced: no overpayment arises',
  TRANSFER_AMOUNT_LIMIT_EXCEEDED: 'test/api/transfer-checks.test.ts',
  TRANSFER_LIMIT_EXCEEDED: 'test/api/transfer-checks.test.ts',
  TRANSFERS_DISABLED: 'test/api/transfer-checks.test.ts',
};

test('statuses follow the published description: closed lists for 401, 403, 404, 409 and 500', () => {
  const byStatus = (status: number) =>
    Object.entries(ERROR_CATALOG)
      .filter(([, entry]) => entry.status === status)
      .map(([code]) => code)
      .sort();
  assert.deepEqual(byStatus(401), ['INVALID_TOKEN', 'UNAUTHORIZED']);
  assert.deepEqual(byStatus(403), ['FORBIDDEN']);
  assert.deepEqual(byStatus(404), ['NOT_FOUND', 'RECORD_NOT_FOUND']);
  // ROSTER_IMPORT_RUNNING is ours: the operator API's roster upload, which the description does not cover.
  assert.deepEqual(byStatus(409), ['IDEMPOTENCY_KEY_LOCKED', 'ROSTER_IMPORT_RUNNING']);
  assert.deepEqual(byStatus(500), ['UNEXPECTED_ERROR']);
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    assert.match(code, /^[A-Z_]+$/);
    assert.ok(entry.detail.length > 10 && entry.detail.endsWith('.'), code);
  }
});

test('every error code of the reference description is in the catalog; each is provoked', () => {
  for (const code of Object.keys(ERROR_CATALOG))
    assert.ok(PROVOKED_BY[code as ErrorCode], `${code} is provoked nowhere`);
  const reference = JSON.parse(readFileSync(REFERENCE_FACTS, 'utf8')) as {
    components: { schemas: Record<string, unknown> };
  };
  const errorCodes = new Set<string>();
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const values = [
      ...(Array.isArray(record.enum) ? record.enum.map(String) : []),
      ...(typeof record.const === 'string' ? [record.const] : []),
      ...(Array.isArray(record.codeNames) ? record.codeNames.map(String) : []),
    ];
    for (const value of values) errorCodes.add(value);
    for (const value of Object.values(record)) walk(value);
  };
  for (const [name, schema] of Object.entries(reference.components.schemas)) {
    if (name.startsWith('Error') || name === 'BadRequestCodes') walk(schema);
  }
  assert.ok(errorCodes.size > 30, "the facts name the description's error codes");
  assert.deepEqual(
    [...errorCodes].filter((code) => !(code in ERROR_CATALOG)),
    [],
    'codes of the reference description',
  );
});
