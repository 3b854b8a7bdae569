import { addDays, daysBetween, startOfLocalDay } from '../../domain/calendar.ts';

export type PayFrequency = 'WEEKLY' | 'BIWEEKLY' | 'TWICE_MONTHLY' | 'MONTHLY';

export interface PayCalendar {
  frequency: PayFrequency;
  /** The first day of one pay period; weekly and biweekly periods repeat from it. */
  anchor: string;
  timeZone: string;
  /** Days after the period's last day that pay is deposited. */
  paydayOffsetDays: number;
}

/**
 * A pay period as local calendar days (`lastDay` inclusive) and as instants: `endsAt` is exclusive (the next
 * period's first midnight); `lastDayStartsAt` is the last day's midnight, the wire's `pay_period_ends_at`.
 */
export interface PayPeriod {
  firstDay: string;
  lastDay: string;
  startsAt: Date;
  lastDayStartsAt: Date;
  endsAt: Date;
  /** The local day pay is deposited (`lastDay` + the payday offset); `depositExpectedAt` is its midnight. */
  depositDay: string;
  depositExpectedAt: Date;
}

/** The pay period that contains the local calendar day `day`. */
export function payPeriodContaining(calendar: PayCalendar, day: string): PayPeriod {
  const [firstDay, nextFirstDay] = boundsOf(calendar, day);
  const lastDay = addDays(nextFirstDay, -1);
  const depositDay = addDays(lastDay, calendar.paydayOffsetDays);
  return {
    firstDay,
    lastDay,
    startsAt: startOfLocalDay(firstDay, calendar.timeZone),
    lastDayStartsAt: startOfLocalDay(lastDay, calendar.timeZone),
    endsAt: startOfLocalDay(nextFirstDay, calendar.timeZone),
    depositDay,
    depositExpectedAt: startOfLocalDay(depositDay, calendar.timeZone),
  };
}

/** The period just before `period`. */
export function previousPayPeriod(calendar: PayCalendar, period: PayPeriod): PayPeriod {
  return payPeriodContaining(calendar, addDays(period.firstDay, -1));
}

function boundsOf(calendar: PayCalendar, day: string): [string, string] {
  switch (calendar.frequency) {
    case 'WEEKLY':
    case 'BIWEEKLY': {
      const length = calendar.frequency === 'WEEKLY' ? 7 : 14;
      const index = Math.floor(daysBetween(calendar.anchor, day) / length);
      const first = addDays(calendar.anchor, index * length);
      return [first, addDays(first, length)];
    }
    case 'TWICE_MONTHLY': {
      const month = day.slice(0, 7);
      const dayOfMonth = Number(day.slice(8, 10));
      return dayOfMonth <= 15 ? [`${month}-01`, `${month}-16`] : [`${month}-16`, firstOfNextMonth(month)];
    }
    case 'MONTHLY': {
      const month = day.slice(0, 7);
      return [`${month}-01`, firstOfNextMonth(month)];
    }
  }
}

function firstOfNextMonth(month: string): string {
  const [year, monthNumber] = month.split('-').map(Number) as [number, number];
  return monthNumber === 12 ? `${year + 1}-01-01` : `${year}-${String(monthNumber + 1).padStart(2, '0')}-01`;
}
