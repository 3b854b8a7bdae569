/**
 * The one catalog of REST error codes: each code's HTTP status and the default text shown to the caller.
 * Codes of the published description keep their names exactly; the few marked "ours" cover HTTP situations the
 * description leaves open (405, 406, 408, 413, 415, 429, 431, 503).
 */
export const ERROR_CATALOG = {
  // 400, generic
  INVALID_USER_INPUT: {
    status: 400,
    detail: 'The request could not be understood: check its syntax and structure.',
  },
  INVALID_PARAMETERS: { status: 400, detail: 'A request parameter is missing or invalid.' },
  INVALID_IDEMPOTENCY_KEY: {
    status: 400,
    detail:
      'The idempotency key was already used for a different request; reuse a key only for an identical request.',
  },
  INVALID_RESOURCE_LINK: {
    status: 400,
    detail: 'A relationship names a resource that is missing or invalid.',
  },
  INVALID_VERSION_HEADER: {
    status: 400,
    detail: 'The Service-API-Version header names a version this server does not serve; use 3.',
  },
  INVALID_FILTER_QUERY: { status: 400, detail: 'The filter query is malformed.' },
  INVALID_FILTER_FIELD: {
    status: 400,
    detail: 'The filter names a field this resource cannot be filtered by.',
  },
  INVALID_FILTER_VALUE: { status: 400, detail: 'The filter value is not in the format its field needs.' },
  INVALID_FIELD_OPERATION: { status: 400, detail: 'The filter operation is not supported for this field.' },
  // 400, jobs
  ACTIVE_JOB_REQUIRED: {
    status: 400,
    detail: 'The job must be ACTIVATED before default accounts can be set.',
  },
  // 400, accounts
  ACCOUNT_TYPE_INVALID: { status: 400, detail: 'The account type must be DEPOSITORY or CARD.' },
  ACCOUNT_SUBTYPE_INVALID: { status: 400, detail: 'The account subtype must be CHECKING, SAVINGS or DEBIT.' },
  ACCOUNT_TYPE_SUBTYPE_MISMATCH: { status: 400, detail: 'The subtype is not allowed for this account type.' },
  DEBIT_CARD_CREATION_BLOCKED: {
    status: 400,
    detail: 'Debit cards with this card number prefix cannot be added.',
  },
  BANK_ACCOUNT_CREATION_BLOCKED: {
    status: 400,
    detail: 'Bank accounts with this routing and account number cannot be added.',
  },
  DUPLICATE_ACCOUNT: { status: 400, detail: 'This account already exists for this person.' },
  INVALID_DEBIT_CARD: { status: 400, detail: 'The debit card is invalid.' },
  INVALID_CARD_TOKEN: { status: 400, detail: 'The card token is invalid, expired or already used.' },
  INVALID_FIELDS: { status: 400, detail: 'One or more fields have an invalid format.' },
  MISSING_REQUIRED_FIELD: { status: 400, detail: 'A required field is missing.' },
  // 400, transfers
  DISCLOSURE_REQUIRED: { status: 400, detail: 'A signed wage disclosure is required before this transfer.' },
  DUPLICATE_TRANSFER: {
    status: 400,
    detail: 'A transfer of the same amount to the same destination was just made.',
  },
  EARNINGS_BALANCE_EXCEEDED: {
    status: 400,
    detail: 'The amount is more than the available earnings balance.',
  },
  INELIGIBLE_ORIGIN: { status: 400, detail: 'The origin cannot be transferred from at this time.' },
  INVALID_DESTINATION: {
    status: 400,
    detail: 'The destination must be an existing DEPOSITORY or CARD account of this person.',
  },
  INVALID_DIRECT_DEPOSIT_STATUS: {
    status: 400,
    detail: 'Transfers from this origin need a job whose direct_deposit_status is SETUP_COMPLETE.',
  },
  INVALID_RESOURCE_STATE: {
    status: 400,
    detail: 'Another resource is in a state that prevents this transfer.',
  },
  INVALID_TRANSFER_SCHEDULE: { status: 400, detail: 'The schedule is not offered for this destination.' },
  MAXIMUM_AMOUNT_EXCEEDED: { status: 400, detail: 'The amount is above the largest transfer allowed.' },
  MAXIMUM_FEE_EXCEEDED: { status: 400, detail: 'The fee is above the largest fee allowed.' },
  MINIMUM_AMOUNT_SUBCEEDED: { status: 400, detail: 'The amount is below the smallest transfer allowed.' },
  MISSING_DEFAULT_DEPOSITORY_ACCOUNT: { status: 400, detail: 'The job has no default depository account.' },
  MISSING_STATE_OF_RESIDENCE: {
    status: 400,
    detail: 'The person needs a state_of_residence before transferring.',
  },
  OVERPAYMENT_RESOLVING: { status: 400, detail: 'An overpayment is being resolved; try again later.' },
  OVERPAYMENT_RESOLUTION_REQUIRED: {
    status: 400,
    detail: 'An overpayment must be resolved before transferring.',
  },
  TRANSFER_AMOUNT_LIMIT_EXCEEDED: {
    status: 400,
    detail: 'The transfers of the last 24 hours would exceed the amount limit.',
  },
  TRANSFER_LIMIT_EXCEEDED: {
    status: 400,
    detail: 'The number of transfers in the last 24 hours has reached its limit.',
  },
  TRANSFERS_DISABLED: { status: 400, detail: 'Transfers are disabled for this person or employer.' },
  // 401, 403, 404
  INVALID_TOKEN: { status: 401, detail: 'The access token is missing, expired, revoked or malformed.' },
  UNAUTHORIZED: { status: 401, detail: 'Authentication is required.' },
  FORBIDDEN: { status: 403, detail: 'The token does not allow this operation.' },
  RECORD_NOT_FOUND: { status: 404, detail: 'No record with this id was found.' },
  NOT_FOUND: { status: 404, detail: 'No resource matches this path.' },
  // ours
  METHOD_NOT_ALLOWED: { status: 405, detail: 'This path does not accept this method.' },
  NOT_ACCEPTABLE: {
    status: 406,
    detail: 'The Accept header excludes every media type this endpoint produces.',
  },
  REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time; send it again.' },
  PAYLOAD_TOO_LARGE: { status: 413, detail: 'The request body is larger than this server accepts.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    detail: 'The request body must be sent in the media type this endpoint reads.',
  },
  TOO_MANY_REQUESTS: { status: 429, detail: 'Too many requests; wait as Retry-After says and try again.' },
  REQUEST_HEADERS_TOO_LARGE: {
    status: 431,
    detail: 'The request line and headers are larger than this server reads (16 KiB).',
  },
  // 409, 500, 503
  IDEMPOTENCY_KEY_LOCKED: {
    status: 409,
    detail: 'A request with this idempotency key is still being processed; it is safe to retry.',
  },
  // ours: the operator API's roster upload, one import of an organization at a time
  ROSTER_IMPORT_RUNNING: {
    status: 409,
    detail:
      'Another roster import of this organization is running; send the file again when it has finished.',
  },
  UNEXPECTED_ERROR: { status: 500, detail: 'Something unexpected went wrong on our side.' },
  // ours: nothing was done; the same request can succeed later
  SERVICE_UNAVAILABLE: {
    status: 503,
    detail:
      'The service cannot answer now (overloaded, or its database is busy or unreachable); retry after Retry-After seconds.',
  },
} as const satisfies Record<string, { status: number; detail: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function statusOf(code: ErrorCode): number {
  return ERROR_CATALOG[code].status;
}
