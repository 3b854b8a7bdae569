/** Digits before the decimal point an amount may have: up to 999,999,999.99, far below 2^53 minor units. */
const WHOLE_DIGITS_MAX = 9;

const fractionDigitsByCurrency = new Map<string, number>();

/** Minor-unit digits of a currency as ISO 4217 (and so Intl) has them: 2 for USD, 0 for JPY, 3 for KWD. */
export function currencyFractionDigits(currency: string): number {
  let digits = fractionDigitsByCurrency.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
      .maximumFractionDigits as number;
    fractionDigitsByCurrency.set(currency, digits);
  }
  return digits;
}

/**
 * Reads a decimal amount such as `24.00` or `24.5` into integer minor units by string arithmetic, never through
 * floating point. Undefined when the text is not a plain non-negative amount with at most `fractionDigits`
 * decimals (no sign, no thousands separators, no currency symbol).
 */
export function parseDecimalAmount(text: string, fractionDigits: number): number | undefined {
  const pattern = new RegExp(
    fractionDigits > 0
      ? `^(\\d{1,${WHOLE_DIGITS_MAX}})(?:\\.(\\d{1,${fractionDigits}}))?$`
      : `^(\\d{1,${WHOLE_DIGITS_MAX}})$`,
  );
  const match = pattern.exec(text);
  if (!match) return undefined;
  const whole = match[1]!;
  const fraction = (match[2] ?? '').padEnd(fractionDigits, '0');
  return Number(`${whole}${fraction}`);
}

/** Minor units as the currency writes them, by string arithmetic: 12345 USD is "123.45", -5 USD "-0.05". */
export function decimalAmount(minor: number, currency: string): string {
  const digits = currencyFractionDigits(currency);
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  const whole = text.slice(0, text.length - digits);
  return `${minor < 0 ? '-' : ''}${digits > 0 ? `${whole}.${text.slice(-digits)}` : whole}`;
}
