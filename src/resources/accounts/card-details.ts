import { AppError } from '../../errors/app-error.ts';
import { REQUIRED_FIELDS as CARD_REQUIRED_FIELDS } from '../../tokenization/card-validation.ts';
import type { ReceivedCard } from '../../tokenization/received-card.ts';

/** The details of a new CARD account as sent: the token, and what the cardholder says of the card. */
export interface CardAccountDetails {
  token: string;
  firstName: string;
  lastName: string;
  expirationMonth: string;
  expirationYear: string;
  issuer: string | undefined;
}

// The cardholder's fields of tokenization, with the token in place of the card number, which never comes here.
const REQUIRED = ['token', ...CARD_REQUIRED_FIELDS.filter((field) => field !== 'card_number')] as const;
const OPTIONAL = ['address_line_two', 'issuer'] as const;

function pointer(field: string): { pointer: string } {
  return { pointer: `/data/attributes/details/${field}` };
}

/** Reads the card details of the description's create body; each problem names its field. */
export function readCardDetails(details: Record<string, unknown>): CardAccountDetails {
  for (const field of REQUIRED) {
    const value = details[field];
    if (value === undefined || value === null || value === '') {
      throw new AppError('MISSING_REQUIRED_FIELD', {
        detail: `details.${field} is required.`,
        source: pointer(field),
      });
    }
    if (typeof value !== 'string' || value.length > (field === 'token' ? 4096 : 100)) {
      throw new AppError('INVALID_FIELDS', {
        detail: `details.${field} must be text.`,
        source: pointer(field),
      });
    }
  }
  for (const field of OPTIONAL) {
    const value = details[field];
    if (value !== undefined && value !== null && (typeof value !== 'string' || value.length > 100)) {
      throw new AppError('INVALID_FIELDS', {
        detail: `details.${field} must be text.`,
        source: pointer(field),
      });
    }
  }
  const unknown = Object.keys(details).find(
    (key) => !(REQUIRED as readonly string[]).includes(key) && !(OPTIONAL as readonly string[]).includes(key),
  );
  if (unknown !== undefined) {
    throw new AppError('INVALID_PARAMETERS', {
      detail: `details.${unknown} is not a field of a CARD account.`,
      source: pointer(unknown),
    });
  }
  if (!/^[A-Z]{2}$/.test(details.address_state as string)) {
    throw new AppError('INVALID_FIELDS', {
      detail: 'details.address_state must be two capital letters.',
      source: pointer('address_state'),
    });
  }
  const issuer = details.issuer as string | undefined | null;
  if (issuer !== undefined && issuer !== null && !/^\d{6,8}$/.test(issuer)) {
    throw new AppError('INVALID_FIELDS', {
      detail: 'details.issuer must be the first 6 to 8 digits of the card number.',
      source: pointer('issuer'),
    });
  }
  return {
    token: details.token as string,
    firstName: details.first_name as string,
    lastName: details.last_name as string,
    expirationMonth: details.expiration_month as string,
    expirationYear: details.expiration_year as string,
    issuer: issuer ?? undefined,
  };
}

const sameName = (a: string, b: string) =>
  a.trim().toLocaleLowerCase('en-US') === b.trim().toLocaleLowerCase('en-US');

/** The cardholder's details must be those the card was tokenized with. */
export function checkDetailsMatchCard(details: CardAccountDetails, card: ReceivedCard): void {
  const { holder } = card;
  const mismatches: [string, boolean][] = [
    ['first_name', sameName(details.firstName, holder.firstName)],
    ['last_name', sameName(details.lastName, holder.lastName)],
    ['expiration_month', details.expirationMonth === holder.expirationMonth],
    ['expiration_year', details.expirationYear === holder.expirationYear],
    ['issuer', details.issuer === undefined || card.startsWith(details.issuer)],
  ];
  const wrong = mismatches.find(([, matches]) => !matches);
  if (wrong) {
    throw new AppError('INVALID_FIELDS', {
      detail: `details.${wrong[0]} is not what the card was tokenized with.`,
      source: pointer(wrong[0]),
    });
  }
}
