import { AppError } from '../errors/app-error.ts';

/** Deeper than any body of this API (a JSON:API document nests 4 to 6 levels), far short of what costs time. */
export const JSON_DEPTH_MAX = 32;
/** Values (objects, arrays, members and elements) in one body; the largest body of this API has about a hundred. */
export const JSON_VALUES_MAX = 10_000;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A body nested hundreds of thousands deep, or with hundreds of thousands of values, is valid JSON within the body
 * limit, yet parsing it, walking its strings and checking it against the schema held the event loop for over a
 * second, for every request of the process. Such a body is refused here, before it is parsed, by one pass over its
 * text that counts brackets and commas outside strings. A text that is not JSON is left to the parser, which says
 * so as it always does.
 */
export function jsonShapeRefused(text: string): AppError | undefined {
  let depth = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code === QUOTE) inString = true;
    else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth++;
      values++;
      if (depth > JSON_DEPTH_MAX) return refused(`nests deeper than ${JSON_DEPTH_MAX} levels`);
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) depth--;
    else if (code === COMMA && ++values > JSON_VALUES_MAX)
      return refused(`holds more than ${JSON_VALUES_MAX} values`);
  }
  return undefined;
}

function refused(what: string): AppError {
  return new AppError('INVALID_USER_INPUT', {
    detail: `The request body ${what}: no request of this API needs that much.`,
    source: { pointer: '' },
  });
}
