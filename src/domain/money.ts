/** An amount of money: integer minor units (cents) of its ISO 4217 currency. */
export interface Money {
  amountMinor: number;
  currency: string;
}

export function money(amountMinor: number | string | bigint, currency: string): Money {
  const minor = Number(amountMinor);
  if (!Number.isSafeInteger(minor))
    throw new RangeError(`${amountMinor} is not a whole number of minor units`);
  return { amountMinor: minor, currency: currency.trim() };
}
