import { textProblem } from '../domain/input-text.ts';
import { isUsState } from '../domain/us-states.ts';
import { isUuid } from '../domain/uuid.ts';
import { InputError } from '../errors/input-error.ts';

/**
 * A complaint to the operator, as the states' reports count it (NV, SC and MD ask how many were opened and
 * resolved; UT, MO and AR a procedure for them): OPEN → ANSWERED → CLOSED, or OPEN → CLOSED when it is withdrawn or
 * resolved at once (it then has no answer and counts as closed only).
 */
export const COMPLAINT_STATUSES = ['OPEN', 'ANSWERED', 'CLOSED'] as const;
export type ComplaintStatus = (typeof COMPLAINT_STATUSES)[number];

export const COMPLAINT_CHANNELS = ['EMAIL', 'PHONE', 'MAIL', 'WEB', 'IN_APP', 'REGULATOR', 'OTHER'] as const;
export type ComplaintChannel = (typeof COMPLAINT_CHANNELS)[number];

export const COMPLAINT_TEXT_MAX = 5000;

export interface Complaint {
  id: string;
  organization_id: string;
  person_id: string | null;
  /** The complainant's state of residence when the complaint was opened. */
  state: string;
  channel: ComplaintChannel;
  summary: string;
  status: ComplaintStatus;
  answer: string | null;
  resolution: string | null;
  opened_at: string;
  answered_at: string | null;
  closed_at: string | null;
}

/** What opening a complaint takes, checked on its face (the records are checked by the store). */
export interface ComplaintOpening {
  organizationId: string;
  personId: string | undefined;
  /** Given when there is no person, or the person has no state on record. */
  state: string | undefined;
  channel: ComplaintChannel;
  summary: string;
}

/** A piece of text the operator writes (summary, answer, resolution): 1 to 5,000 characters, one line. */
export function checkComplaintText(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new InputError(`${field} must be a non-empty text.`, { field });
  if (value.length > COMPLAINT_TEXT_MAX)
    throw new InputError(`${field} must be at most ${COMPLAINT_TEXT_MAX} characters (got ${value.length}).`, {
      field,
    });
  const problem = textProblem(value);
  if (problem) throw new InputError(`${field} ${problem}`, { field });
  return value.trim();
}

/** The attributes of an opening, by their wire names; each wrong one is an InputError naming it. */
export function checkOpening(input: {
  organization_id: unknown;
  person_id?: unknown;
  state?: unknown;
  channel: unknown;
  summary: unknown;
}): ComplaintOpening {
  const uuid = (field: string, value: unknown) => {
    if (typeof value !== 'string' || !isUuid(value))
      throw new InputError(`${field} must be a UUID.`, { field });
    return value.toLowerCase();
  };
  const organizationId = uuid('organization_id', input.organization_id);
  const personId =
    input.person_id === undefined || input.person_id === null
      ? undefined
      : uuid('person_id', input.person_id);
  let state: string | undefined;
  if (input.state !== undefined && input.state !== null) {
    if (typeof input.state !== 'string' || !isUsState(input.state))
      throw new InputError(
        `state must be the two-letter code of a US state or DC in capitals, such as WI (got ${JSON.stringify(input.state)}).`,
        { field: 'state' },
      );
    state = input.state;
  }
  if (typeof input.channel !== 'string' || !(COMPLAINT_CHANNELS as readonly string[]).includes(input.channel))
    throw new InputError(
      `channel must be one of ${COMPLAINT_CHANNELS.join(', ')} (got ${JSON.stringify(input.channel)}).`,
      { field: 'channel' },
    );
  return {
    organizationId,
    personId,
    state,
    channel: input.channel as ComplaintChannel,
    summary: checkComplaintText('summary', input.summary),
  };
}

export function isComplaintStatus(value: string): value is ComplaintStatus {
  return (COMPLAINT_STATUSES as readonly string[]).includes(value);
}
