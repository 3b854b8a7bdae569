import { parseInstant } from '../domain/date-text.ts';
import { isUsState } from '../domain/us-states.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * A disclosure document: the terms a person accepts before advances where their state asks for it
 * (DISCLOSURE_BEFORE_FIRST_TRANSFER). Documents are never edited: a change is a new version of the same state and
 * product, and only the current version's acceptance counts.
 */
export interface DisclosureDocument {
  id: string;
  /** Null for the default document, which applies wherever a state has none of its own. */
  state: string | null;
  product: string;
  version: number;
  title: string;
  body: string;
  effective_from: Date;
  published_at: Date;
}

export const DISCLOSURE_PRODUCT = 'ODP';
const TITLE_MAX = 200;
const BODY_MAX = 20_000;

/** What an operator publishes: the version and the instants are the server's. */
export interface Publication {
  state: string | null;
  title: string;
  body: string;
  /** Absent: from the moment it is published. */
  effectiveFrom: Date | undefined;
}

/** Checks a publication as given by the CLI or /admin; throws an InputError naming the field. */
export function checkPublication(input: Record<string, unknown>): Publication {
  const { state, title, body, effective_from: from } = input;
  if (state !== undefined && state !== null && (typeof state !== 'string' || !isUsState(state)))
    throw new InputError(
      'state must be the two-letter code of a US state or DC in capitals, such as UT, or null.',
      {
        field: 'state',
      },
    );
  if (typeof title !== 'string' || title.trim().length === 0 || title.length > TITLE_MAX)
    throw new InputError(`title must be 1 to ${TITLE_MAX} characters.`, { field: 'title' });
  if (typeof body !== 'string' || body.trim().length === 0 || body.length > BODY_MAX)
    throw new InputError(`body must be the document's text, 1 to ${BODY_MAX} characters.`, { field: 'body' });
  let effectiveFrom: Date | undefined;
  if (from !== undefined && from !== null) {
    // With its offset: a bare day or time would leave the zone to guess, and Date to take the server's.
    effectiveFrom = parseInstant(from);
    if (!effectiveFrom)
      throw new InputError(
        'effective_from must be an instant with its offset, such as 2026-04-01T00:00:00Z, on the calendar and from year 0001 ' +
          `to 9999 (got ${JSON.stringify(String(from).slice(0, 40))}).`,
        { field: 'effective_from' },
      );
  }
  return { state: (state as string | null | undefined) ?? null, title: title.trim(), body, effectiveFrom };
}

/** The document as JSON:API attributes, for /rest and /admin. */
export function documentAttributes(document: DisclosureDocument) {
  return {
    state: document.state,
    product: document.product,
    version: document.version,
    title: document.title,
    body: document.body,
    effective_from: document.effective_from.toISOString(),
    published_at: document.published_at.toISOString(),
  };
}
