import { parseInstant } from '../domain/date-text.ts';
import { InputError } from '../errors/input-error.ts';

/** The longest one advance walks: a year and a day covers any pay calendar's whole cycle. */
export const SANDBOX_ADVANCE_DAYS_MAX = 366;
const DAY_MS = 86_400_000;

/** Where an advance goes: so many days past the sandbox's time, or to an instant. */
export type AdvanceTarget = { days: number } | { to: Date };

/** How the caller names a field in its messages: `--days` on the command line, `days` in the API. */
export type FieldLabel = (field: 'days' | 'to') => string;

/**
 * The target of an advance from what a caller sent: exactly one of `days` (a whole number from 1 to
 * SANDBOX_ADVANCE_DAYS_MAX, as a number or digits) and `to` (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], in UTC unless it
 * ends with Z or an offset such as -05:00; a bare date is its midnight). Whether `to` is later than the sandbox's
 * time is for the advance to check, which knows that time.
 */
export function advanceTargetOf(input: { days?: unknown; to?: unknown }, label: FieldLabel): AdvanceTarget {
  const hasDays = input.days !== undefined && input.days !== null;
  const hasTo = input.to !== undefined && input.to !== null;
  if (hasDays && hasTo)
    throw new InputError(`Give ${label('days')} or ${label('to')}, not both.`, { field: 'days' });
  if (hasDays) return { days: daysOf(input.days, label) };
  if (hasTo) return { to: instantOf(input.to, label) };
  throw new InputError(`Give ${label('days')} N (1 to ${SANDBOX_ADVANCE_DAYS_MAX}) or ${label('to')} DATE.`, {
    field: 'days',
  });
}

function daysOf(value: unknown, label: FieldLabel): number {
  const text = String(value);
  const days =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{1,9}$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(days) || days < 1 || days > SANDBOX_ADVANCE_DAYS_MAX)
    throw new InputError(
      `${label('days')} must be a whole number of days from 1 to ${SANDBOX_ADVANCE_DAYS_MAX} (got ${JSON.stringify(text.slice(0, 40))}).`,
      { field: 'days' },
    );
  return days;
}

function instantOf(value: unknown, label: FieldLabel): Date {
  const instant = parseInstant(value, { bareDay: true, utcWithoutOffset: true });
  if (!instant)
    throw new InputError(
      `${label('to')} must be a date, YYYY-MM-DD, or a time, YYYY-MM-DDTHH:MM (UTC unless an offset such as ` +
        `-05:00 follows) (got ${JSON.stringify(String(value).slice(0, 40))}).`,
      { field: 'to' },
    );
  return instant;
}

/**
 * The instant an advance from `from` ends at; refused when it is not later than `from` (time never goes back) or
 * further than SANDBOX_ADVANCE_DAYS_MAX days away.
 */
export function targetInstant(target: AdvanceTarget, from: Date, label: FieldLabel): Date {
  if ('days' in target) return new Date(from.getTime() + target.days * DAY_MS);
  if (target.to.getTime() <= from.getTime())
    throw new InputError(
      `${label('to')} ${target.to.toISOString()} is not later than the sandbox's time, ${from.toISOString()}: ` +
        'the sandbox clock only moves forward (ewa sandbox reset puts it back to real time).',
      { field: 'to' },
    );
  if (target.to.getTime() - from.getTime() > SANDBOX_ADVANCE_DAYS_MAX * DAY_MS)
    throw new InputError(
      `${label('to')} ${target.to.toISOString()} is more than ${SANDBOX_ADVANCE_DAYS_MAX} days after the ` +
        `sandbox's time, ${from.toISOString()}; advance in several steps.`,
      { field: 'to' },
    );
  return target.to;
}
