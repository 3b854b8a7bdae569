import { shownText } from '../domain/input-text.ts';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/catalog.ts';

/**
 * The first member of a JSON text whose name its object already has, as a JSON pointer; undefined when there is
 * none. JSON.parse keeps the last of them without a word, while a proxy, a log or another parser may read the first:
 * `{"amount": 99999999, "amount": 601}` would be one amount to them and another to us. The text is valid JSON
 * (it parsed), so only strings and the structure need reading, each character once: the time grows with the text's
 * length and no faster, whatever it holds (a body of escaped quotes included).
 */
export function duplicateMember(text: string): string | undefined {
  const stack: Container[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === QUOTE) {
      let end = at + 1;
      let escaped = false;
      for (; text.charCodeAt(end) !== QUOTE; end++) {
        if (text.charCodeAt(end) === BACKSLASH) {
          escaped = true;
          end++;
        }
      }
      const top = stack.at(-1);
      if (top?.names && top.expectsName) {
        const name: string = escaped ? JSON.parse(text.slice(at, end + 1)) : text.slice(at + 1, end);
        if (top.names.has(name)) return pointerOf(stack, name);
        top.names.add(name);
        top.step = name;
        top.expectsName = false;
      }
      at = end;
    } else if (char === OPEN_OBJECT) stack.push({ names: new Set(), expectsName: true, step: '' });
    else if (char === OPEN_ARRAY) stack.push({ expectsName: false, step: 0 });
    else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) stack.pop();
    else if (char === COMMA) {
      const top = stack.at(-1)!;
      if (top.names) top.expectsName = true;
      else top.step = (top.step as number) + 1;
    }
  }
  return undefined;
}

interface Container {
  /** An object's member names so far; none for an array. */
  names?: Set<string>;
  expectsName: boolean;
  /** The member name or index the text is in. */
  step: string | number;
}

const [QUOTE, BACKSLASH, COMMA] = [0x22, 0x5c, 0x2c];
const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY] = [0x7b, 0x7d, 0x5b, 0x5d];

function pointerOf(stack: readonly Container[], name: string): string {
  const steps = [...stack.slice(0, -1).map((container) => String(container.step)), name];
  return steps.map((step) => `/${step.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The 400 for a member sent twice, naming it. */
export function duplicateRefused(code: ErrorCode, pointer: string): AppError {
  // The detail shows controls, bidirectional and zero-width characters escaped, as the edge check does; the pointer
  // stays the member's (JSON escapes its controls).
  const shown = shownText(
    pointer.length > 200 ? `${pointer.slice(0, 200).replace(/[\ud800-\udbff]$/, '')}…` : pointer,
  );
  return new AppError(code, {
    detail: `${shown} is given twice in its object: send each member once.`,
    source: { pointer },
  });
}
