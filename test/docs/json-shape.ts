type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonType;
}

/**
 * Where `actual` does not have the structure of `documented`: every key path of the documented value must exist in
 * the actual one with the same JSON type (values may differ); of two non-empty arrays, the first elements are
 * compared. Returns one line per difference, naming its path (`$.data.attributes.amount`).
 */
export function shapeDifferences(documented: unknown, actual: unknown, path = '$'): string[] {
  const expected = typeOf(documented);
  const got = typeOf(actual);
  if (expected !== got) return [`${path}: documented ${expected}, answered ${got}`];
  if (expected === 'array') {
    const [first] = documented as unknown[];
    const [actualFirst] = actual as unknown[];
    if ((documented as unknown[]).length === 0 || (actual as unknown[]).length === 0) return [];
    return shapeDifferences(first, actualFirst, `${path}[0]`);
  }
  if (expected !== 'object') return [];
  const differences: string[] = [];
  const real = actual as Record<string, unknown>;
  for (const [key, value] of Object.entries(documented as Record<string, unknown>)) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    if (!Object.hasOwn(real, key)) differences.push(`${at}: documented, but not in the answer`);
    else differences.push(...shapeDifferences(value, real[key], at));
  }
  return differences;
}

/** Where the JSON value that starts at `start` (a `{` or `[`) ends, by its brackets outside strings; -1 if never. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * The last JSON object or array printed in a text that may mix documents with other output (`curl -i` headers,
 * messages): documents are read left to right, each skipped whole, so a nested object is never taken for one.
 */
export function lastJsonDocument(text: string): { found: true; value: unknown } | { found: false } {
  let last: { found: true; value: unknown } | { found: false } = { found: false };
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char !== '{' && char !== '[') continue;
    const end = valueEnd(text, index);
    if (end < 0) continue;
    try {
      last = { found: true, value: JSON.parse(text.slice(index, end)) };
      index = end - 1;
    } catch {}
  }
  return last;
}
