/** Calls to the EWA REST API (JSON:API), with a bearer token: the person's, or the confidential client's. */

const JSON_API = 'application/vnd.api+json';

/** An answer of the API that is not a success, with its JSON:API errors as sent. */
export class ApiError extends Error {
  constructor(status, errors) {
    super(errors[0]?.detail ?? `The EWA API answered ${status}.`);
    this.status = status;
    this.errors = errors;
  }
}

export async function callApi(apiUrl, token, method, path, { body, headers = {} } = {}) {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: JSON_API,
      ...(body ? { 'content-type': JSON_API } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status === 204) return undefined;
  const document = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, document.errors ?? []);
  return document;
}

/** The resources the home screen shows: the person's jobs, accounts (balance included) and paychecks. */
export async function overview(apiUrl, token) {
  const [jobs, accounts, paychecks] = await Promise.all(
    ['/rest/jobs', '/rest/accounts', '/rest/paychecks'].map((path) => callApi(apiUrl, token, 'GET', path)),
  );
  return { jobs: jobs.data, accounts: accounts.data, paychecks: paychecks.data };
}

/** A new CARD account from a card token; `card` holds the token and the cardholder's details, never the number. */
export function addCard(apiUrl, token, personId, card) {
  return createAccount(apiUrl, token, personId, {
    name: card.name || 'Debit card',
    account_type: 'CARD',
    subtype: 'DEBIT',
    details: pick(card, CARD_DETAILS),
  });
}

export function addBankAccount(apiUrl, token, personId, bank) {
  return createAccount(apiUrl, token, personId, {
    name: bank.name || 'Bank account',
    account_type: 'DEPOSITORY',
    subtype: bank.subtype === 'SAVINGS' ? 'SAVINGS' : 'CHECKING',
    details: pick(bank, ['first_name', 'last_name', 'routing_number', 'account_number']),
  });
}

/**
 * An advance from the earnings balance to one of the person's accounts. `preview: true` prices it (the fee
 * included) and creates nothing. The idempotency key makes a repeated request (a retry, a second click) answer
 * the same transfer instead of making another.
 */
export function createTransfer(apiUrl, token, personId, transfer, idempotencyKey) {
  return callApi(apiUrl, token, 'POST', '/rest/transfers', {
    headers: { 'idempotency-key': idempotencyKey },
    body: {
      data: {
        type: 'transfers',
        attributes: {
          amount: transfer.amount,
          currency: transfer.currency,
          schedule: transfer.schedule,
          preview: transfer.preview === true,
        },
        relationships: {
          origin: { data: { type: 'accounts', id: transfer.origin } },
          destination: { data: { type: 'accounts', id: transfer.destination } },
          person: { data: { type: 'people', id: personId } },
        },
      },
    },
  });
}

const CARD_DETAILS = [
  'token',
  'first_name',
  'last_name',
  'expiration_month',
  'expiration_year',
  'address_line_one',
  'address_line_two',
  'address_city',
  'address_state',
  'address_zip_code',
  'address_country',
];

function createAccount(apiUrl, token, personId, attributes) {
  return callApi(apiUrl, token, 'POST', '/rest/accounts', {
    body: {
      data: {
        type: 'accounts',
        attributes,
        relationships: { person: { data: { type: 'people', id: personId } } },
      },
    },
  });
}

/** Only the named fields, and only those given: the API refuses fields it does not know. */
function pick(source, fields) {
  return Object.fromEntries(
    fields.filter((field) => source[field]).map((field) => [field, String(source[field])]),
  );
}
