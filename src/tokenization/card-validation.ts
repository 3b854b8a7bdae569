import { AppError } from '../errors/app-error.ts';
import { isPastExpiry } from './card-expiry.ts';
import type { CardData } from './card-token.ts';
import { ISO_3166_ALPHA2 } from './countries.ts';

/** A card request that passed every rule: the card as typed, and the CVV apart because a token never carries it. */
export interface CardRequest {
  card: CardData;
  cvv: string | undefined;
}

export type CardValidation = { ok: true; request: CardRequest } | { ok: false; error: AppError };

/** In the order the published description lists them; the first one missing is the one reported. */
export const REQUIRED_FIELDS = [
  'first_name',
  'last_name',
  'card_number',
  'expiration_year',
  'expiration_month',
  'address_line_one',
  'address_city',
  'address_state',
  'address_zip_code',
  'address_country',
] as const;
export const OPTIONAL_FIELDS = ['cvv', 'address_line_two'] as const;
const KNOWN_FIELDS: ReadonlySet<string> = new Set([...REQUIRED_FIELDS, ...OPTIONAL_FIELDS]);

export const TEXT_LENGTH_MAX = 100;
/** Far enough for any card a network issues; a later year is a typing mistake. */
export const EXPIRY_YEARS_AHEAD_MAX = 20;
/** An unknown field is named in the error only when its name looks like a field name, never like card data. */
const NAMEABLE_FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const CARD_NUMBER = /^[0-9]{12,19}$/;

/**
 * Checks a card tokenization body against the rules of API.md "Card tokenization", in a fixed order: a JSON object,
 * no unknown fields, every required field present and a string, then each field's format, then the expiry against
 * `now`. The first broken rule is returned as an error that names the field. Details never repeat a value the
 * caller sent: card number, CVV and expiry are card data, names and addresses are personal data. Control,
 * bidirectional and zero-width characters are refused before this, at the edge of the route (edge-input.ts), as in
 * every other request body.
 */
export function validateCardRequest(body: unknown, now: Date): CardValidation {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return failure('INVALID_USER_INPUT', '', 'The request body must be a JSON object of card fields.');
  }
  const fields = body as Record<string, unknown>;
  const unknown = unknownFieldError(fields);
  if (unknown) return { ok: false, error: unknown };
  for (const field of REQUIRED_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null)
      return failure('MISSING_REQUIRED_FIELD', field, `${field} is required.`);
    if (typeof value !== 'string') return failure('INVALID_FIELDS', field, `${field} must be a string.`);
  }
  for (const field of OPTIONAL_FIELDS) {
    const value = fields[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return failure('INVALID_FIELDS', field, `${field} must be a string or null.`);
    }
  }
  const text = fields as Record<(typeof REQUIRED_FIELDS)[number], string>;
  const cvv = optionalText(fields.cvv);
  const addressLineTwo = optionalText(fields.address_line_two);
  const problem =
    textError('first_name', text.first_name) ??
    textError('last_name', text.last_name) ??
    cardNumberError(text.card_number) ??
    (/^[0-9]{4}$/.test(text.expiration_year)
      ? undefined
      : invalid('expiration_year', 'expiration_year must be four digits, such as 2031.')) ??
    (/^(0[1-9]|1[0-2])$/.test(text.expiration_month)
      ? undefined
      : invalid('expiration_month', 'expiration_month must be two digits from 01 to 12.')) ??
    (cvv === undefined || /^[0-9]{3,4}$/.test(cvv)
      ? undefined
      : invalid('cvv', 'cvv must be 3 or 4 digits, or null.')) ??
    textError('address_line_one', text.address_line_one) ??
    (addressLineTwo === undefined ? undefined : textError('address_line_two', addressLineTwo)) ??
    textError('address_city', text.address_city) ??
    (/^[A-Z]{2}$/.test(text.address_state)
      ? undefined
      : invalid('address_state', 'address_state must be two capital letters, such as NJ.')) ??
    (/^[0-9]{5}$/.test(text.address_zip_code)
      ? undefined
      : invalid('address_zip_code', 'address_zip_code must be five digits.')) ??
    (ISO_3166_ALPHA2.has(text.address_country)
      ? undefined
      : invalid(
          'address_country',
          'address_country must be an ISO 3166-1 alpha-2 country code in capitals, such as US.',
        )) ??
    expiryError(Number(text.expiration_year), Number(text.expiration_month), now);
  if (problem) return { ok: false, error: problem };
  return {
    ok: true,
    request: {
      card: {
        card_number: text.card_number,
        expiration_month: text.expiration_month,
        expiration_year: text.expiration_year,
        first_name: text.first_name,
        last_name: text.last_name,
        address_line_one: text.address_line_one,
        ...(addressLineTwo === undefined ? {} : { address_line_two: addressLineTwo }),
        address_city: text.address_city,
        address_state: text.address_state,
        address_zip_code: text.address_zip_code,
        address_country: text.address_country,
      },
      cvv,
    },
  };
}

/**
 * The card number of a body when it is one a card network could issue (12–19 digits passing the Luhn check),
 * whatever else is wrong with the body: the per-card rate limit counts attempts on a card, valid or not.
 */
export function wellFormedCardNumber(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>).card_number;
  return typeof value === 'string' && cardNumberError(value) === undefined ? value : undefined;
}

/** The Luhn (mod 10) check digit test every payment card number passes. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * An empty optional field is taken as absent: a browser form sends "" for an input left blank, and refusing it
 * would only push every client to write the same conversion.
 */
function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function unknownFieldError(fields: Record<string, unknown>): AppError | undefined {
  const unknown = Object.keys(fields).filter((field) => !KNOWN_FIELDS.has(field));
  if (unknown.length === 0) return undefined;
  const nameable = unknown.filter((field) => NAMEABLE_FIELD.test(field));
  if (nameable.length !== unknown.length) {
    return new AppError('INVALID_FIELDS', {
      detail: `The body has a field that is not part of a card token request; the fields are ${[...KNOWN_FIELDS].join(', ')}.`,
      source: { pointer: '' },
    });
  }
  const names = nameable.slice(0, 5).join(', ') + (nameable.length > 5 ? ', …' : '');
  return new AppError('INVALID_FIELDS', {
    detail: `${nameable.length === 1 ? 'This field is' : 'These fields are'} not part of a card token request: ${names}.`,
    source: { pointer: `/${nameable[0]}` },
  });
}

function textError(field: string, value: string): AppError | undefined {
  const length = [...value].length;
  if (value.trim() === '') return invalid(field, `${field} must not be empty.`);
  if (length > TEXT_LENGTH_MAX)
    return invalid(field, `${field} must be at most ${TEXT_LENGTH_MAX} characters.`);
  return undefined;
}

function cardNumberError(value: string): AppError | undefined {
  if (!CARD_NUMBER.test(value)) {
    return invalid('card_number', 'card_number must be 12 to 19 digits, without spaces or dashes.');
  }
  if (!passesLuhn(value)) {
    return invalid('card_number', 'card_number is not a valid card number: its check digit is wrong.');
  }
  return undefined;
}

function expiryError(year: number, month: number, now: Date): AppError | undefined {
  const currentYear = now.getUTCFullYear();
  if (isPastExpiry(year, month, now)) {
    return year < currentYear
      ? invalid('expiration_year', 'The card has expired: expiration_year is past.')
      : invalid('expiration_month', 'The card has expired: expiration_month is past for this year.');
  }
  if (year > currentYear + EXPIRY_YEARS_AHEAD_MAX) {
    return invalid(
      'expiration_year',
      `expiration_year must be at most ${EXPIRY_YEARS_AHEAD_MAX} years from now.`,
    );
  }
  return undefined;
}

function invalid(field: string, detail: string): AppError {
  return new AppError('INVALID_FIELDS', { detail, source: { pointer: `/${field}` } });
}

function failure(
  code: 'INVALID_USER_INPUT' | 'INVALID_FIELDS' | 'MISSING_REQUIRED_FIELD',
  field: string,
  detail: string,
): CardValidation {
  return { ok: false, error: new AppError(code, { detail, source: { pointer: field ? `/${field}` : '' } }) };
}
