/**
 * The one rule for text that reaches us from outside (bodies, query strings, path ids, forms, OAuth parameters):
 * well-formed Unicode, no control characters (C0, DEL, C1, the line and paragraph separators), no bidirectional
 * controls and no zero-width characters. PostgreSQL refuses NUL outright, and the others let a name look like
 * another (a spoofed payee, a reversed amount) or break the logs and files it is written to. Multi-line text that
 * the project reads as a file (CSV uploads) is read by its own parser, not by this rule.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const ZERO_WIDTH = /[\u180e\u200b-\u200d\u2060-\u2064\ufeff]/u;

/**
 * The schema pattern of text that must not be blank: at least one character that is not white space (JavaScript's
 * \s, Unicode's spaces included). A schema failure of it is told as blank (to-app-error.ts).
 */
export const NOT_BLANK_PATTERN = '\\S';

/** Why a string breaks the rule, as the end of a sentence naming the field; undefined when it is acceptable. */
export function textProblem(value: string): string | undefined {
  if (!value.isWellFormed()) return 'is not well-formed Unicode (a lone surrogate).';
  if (CONTROL.test(value)) return 'contains a control character or line break.';
  if (BIDI.test(value)) return 'contains a bidirectional control character.';
  if (ZERO_WIDTH.test(value)) return 'contains a zero-width character.';
  return undefined;
}

const REFUSED = new RegExp(`${CONTROL.source}|${BIDI.source}|${ZERO_WIDTH.source}|[\\ud800-\\udfff]`, 'gu');

/**
 * The text with every character the rule refuses written as a \u escape, so that an error can name a field or
 * parameter whose name breaks the rule without carrying the character itself.
 */
export function shownText(value: string): string {
  return value.replace(REFUSED, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

export interface TextFinding {
  /** Where the string is: a JSON pointer into the value (`/data/attributes/name`), or '' for the value itself. */
  pointer: string;
  /** True when the offending string is an object key rather than a value. */
  key: boolean;
  problem: string;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The first string in a parsed JSON value, form or query object (keys included) that breaks the rule. Walks at
 * most `nodesMax` nodes; deeper or larger values are for the body limit and the schema to refuse.
 */
export function findTextProblem(value: unknown, nodesMax = 100_000): TextFinding | undefined {
  const stack: Array<{ node: unknown; pointer: string }> = [{ node: value, pointer: '' }];
  let seen = 0;
  while (stack.length > 0 && seen < nodesMax) {
    const { node, pointer } = stack.pop()!;
    seen += 1;
    if (typeof node === 'string') {
      const problem = textProblem(node);
      if (problem) return { pointer, key: false, problem };
    } else if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index -= 1)
        stack.push({ node: node[index], pointer: `${pointer}/${index}` });
    } else if (node !== null && typeof node === 'object') {
      for (const key of Object.keys(node).reverse()) {
        const child = `${pointer}/${escapePointer(key)}`;
        const problem = textProblem(key);
        if (problem) return { pointer: child, key: true, problem };
        stack.push({ node: (node as Record<string, unknown>)[key], pointer: child });
      }
    }
  }
  return undefined;
}
