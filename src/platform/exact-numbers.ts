/** A number of a JSON text that parsing changed into another whole number: where it is, as sent, as read. */
export interface LossyNumber {
  pointer: string;
  source: string;
  value: number;
}

/**
 * A number with a fraction, an exponent or sixteen digits, where a value starts (after `:`, `[` or `,`): only such
 * a text can hold a number that parsing rounds. Ids (UUIDs: hex digits and letters) do not set it off.
 */
const MAY_ROUND = /[:,[]\s*-?\d+[.eE]|[:,[]\s*-?\d{16}/;

/**
 * JSON numbers are read as doubles, so `499.9999999999999999999` arrives as 500 and `9007199254740993` as
 * 9007199254740992, and a schema that asks for an integer sees a valid one. Money is whole minor units: a sent
 * value that parsing turned into a different whole number is found here, from the text as sent (JSON.parse's
 * source text access), so that it can be refused instead of being moved. A fraction that stays a fraction is left
 * to the schema, which refuses it where it wants an integer.
 */
export function lossyNumber(text: string): LossyNumber | undefined {
  if (!MAY_ROUND.test(text)) return undefined;
  let found: { key: string; source: string; value: number } | undefined;
  const parsed: unknown = JSON.parse(
    text,
    function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
      if (
        found === undefined &&
        typeof value === 'number' &&
        context?.source !== undefined &&
        changedWholeNumber(context.source, value)
      )
        found = { key, source: context.source, value };
      return value;
    },
  );
  if (!found) return undefined;
  return {
    pointer: pointerTo(parsed, found.key, found.value) ?? '',
    source: found.source,
    value: found.value,
  };
}

function changedWholeNumber(source: string, value: number): boolean {
  if (!Number.isInteger(value)) return false;
  const exact = integerOf(source);
  return exact === undefined || exact !== BigInt(value);
}

/** The integer a JSON number's text stands for, or undefined when it has a fraction. */
function integerOf(source: string): bigint | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(source);
  if (!match) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '');
  // The digits stand for digits × 10^-scale.
  const scale = fraction.length - Number(exponent);
  let magnitude: bigint;
  if (/^0+$/.test(digits)) magnitude = 0n;
  else if (scale <= 0) {
    // A value this far out parses to Infinity, which is no integer and never reaches here.
    magnitude = BigInt(digits) * 10n ** BigInt(-scale);
  } else {
    const kept = digits.length - scale;
    if (!/^0*$/.test(digits.slice(Math.max(kept, 0)))) return undefined;
    magnitude = kept > 0 ? BigInt(digits.slice(0, kept)) : 0n;
  }
  return sign === '-' ? -magnitude : magnitude;
}

/** The JSON pointer of the first member or element named `key` that holds `value`. */
function pointerTo(node: unknown, key: string, value: number, at = ''): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  for (const [name, inner] of Object.entries(node)) {
    const here = `${at}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (name === key && inner === value) return here;
    const deeper = pointerTo(inner, key, value, here);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}
