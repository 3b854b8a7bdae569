/** A card is good through the last day of its expiry month; months are compared in UTC. */
export function isPastExpiry(year: number, month: number, now: Date): boolean {
  return Date.UTC(year, month, 1) <= now.getTime();
}
