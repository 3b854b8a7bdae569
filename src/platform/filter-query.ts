import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { AppError } from '../errors/app-error.ts';

/**
 * The deprecated free-form `filter` parameter of the list operations: `name:"Acme"` (exact), `name~"Ac"` (contains,
 * any case), joined by AND / OR (AND binds tighter) with parentheses. A small recursive-descent parser: every
 * failure is INVALID_FILTER_QUERY naming the position, an unknown field INVALID_FILTER_FIELD, `~` on a field that
 * only matches exactly INVALID_FIELD_OPERATION.
 */
export type FilterExpression =
  | {
      kind: 'match';
      field: string;
      operator: 'equals' | 'contains';
      value: string;
      /** An exact value of a date-time field, read as an instant by the caller that checked it (readListQuery). */
      instant?: Date;
    }
  | { kind: 'and' | 'or'; left: FilterExpression; right: FilterExpression };

/**
 * The fields one resource can be filtered by: each field's column, and whether it takes `~` (contains). A date-time
 * field names its timestamp column too: an exact match compares instants there, since the text PostgreSQL makes of
 * a timestamp (2026-03-02 05:00:00+00) is not the ISO 8601 the API writes, and one instant has many ISO 8601 forms.
 */
export type FilterQueryFields = Readonly<
  Record<string, { column: string; contains: boolean; instantColumn?: string }>
>;

export const FILTER_QUERY_LENGTH_MAX = 1_000;
const DEPTH_MAX = 20;

type Token =
  | { type: 'word'; text: string; at: number }
  | { type: 'string'; text: string; at: number }
  | { type: 'op'; text: ':' | '~'; at: number }
  | { type: 'paren'; text: '(' | ')'; at: number };

function fail(detail: string): AppError {
  return new AppError('INVALID_FILTER_QUERY', { detail, source: { parameter: 'filter' } });
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === '(' || char === ')') {
      tokens.push({ type: 'paren', text: char, at: i++ });
    } else if (char === ':' || char === '~') {
      tokens.push({ type: 'op', text: char, at: i++ });
    } else if (char === '"') {
      const start = i++;
      let value = '';
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
      if (i >= text.length)
        throw fail(`The string that starts at position ${start + 1} is not closed with ".`);
      i++;
      tokens.push({ type: 'string', text: value, at: start });
    } else if (/[A-Za-z_]/.test(char)) {
      const start = i;
      while (i < text.length && /[A-Za-z0-9_.]/.test(text[i]!)) i++;
      tokens.push({ type: 'word', text: text.slice(start, i), at: start });
    } else {
      throw fail(`Unexpected "${char}" at position ${i + 1}.`);
    }
  }
  return tokens;
}

export function parseFilterQuery(
  text: string,
  fields: FilterQueryFields,
  resource: string,
): FilterExpression {
  const names = Object.keys(fields);
  const example = `${names[0]}:"…"`;
  if (text.length > FILTER_QUERY_LENGTH_MAX)
    throw fail(`The filter is longer than ${FILTER_QUERY_LENGTH_MAX} characters.`);
  const tokens = tokenize(text);
  if (tokens.length === 0) throw fail(`The filter is empty; write for example ${example}.`);
  let position = 0;
  const peek = () => tokens[position];
  const where = (token: Token | undefined) => (token ? `at position ${token.at + 1}` : 'at the end');

  const isKeyword = (token: Token | undefined, keyword: string) =>
    token?.type === 'word' && token.text.toUpperCase() === keyword;

  function expression(depth: number): FilterExpression {
    let left = conjunction(depth);
    while (isKeyword(peek(), 'OR')) {
      position++;
      left = { kind: 'or', left, right: conjunction(depth) };
    }
    return left;
  }

  function conjunction(depth: number): FilterExpression {
    let left = term(depth);
    while (isKeyword(peek(), 'AND')) {
      position++;
      left = { kind: 'and', left, right: term(depth) };
    }
    return left;
  }

  function term(depth: number): FilterExpression {
    if (depth > DEPTH_MAX) throw fail(`Parentheses nest deeper than ${DEPTH_MAX}.`);
    const token = peek();
    if (token?.type === 'paren' && token.text === '(') {
      position++;
      const inner = expression(depth + 1);
      const closing = peek();
      if (closing?.type !== 'paren' || closing.text !== ')') throw fail(`Expected ) ${where(closing)}.`);
      position++;
      return inner;
    }
    if (token?.type !== 'word' || isKeyword(token, 'AND') || isKeyword(token, 'OR')) {
      throw fail(`Expected a field name ${where(token)}.`);
    }
    position++;
    const field = Object.hasOwn(fields, token.text) ? fields[token.text] : undefined;
    if (!field) {
      throw new AppError('INVALID_FILTER_FIELD', {
        detail: `${resource} can be filtered by ${names.join(', ')} only, not ${token.text}.`,
        source: { parameter: 'filter' },
      });
    }
    const operator = peek();
    if (operator?.type !== 'op')
      throw fail(`Expected : (equals) or ~ (contains) after ${token.text} ${where(operator)}.`);
    position++;
    const value = peek();
    if (value?.type !== 'string') throw fail(`Expected a "quoted" value ${where(value)}.`);
    position++;
    if (operator.text === '~' && !field.contains) {
      throw new AppError('INVALID_FIELD_OPERATION', {
        detail: `${token.text} matches exactly only: write ${token.text}:"…".`,
        source: { parameter: 'filter' },
      });
    }
    return {
      kind: 'match',
      field: token.text,
      operator: operator.text === ':' ? 'equals' : 'contains',
      value: value.text,
    };
  }

  const result = expression(0);
  if (position < tokens.length) throw fail(`Expected AND, OR or the end ${where(peek())}.`);
  return result;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** The parsed filter as an SQL condition over the fields' columns; values are always bound, never spliced. */
export function filterQuerySql(filter: FilterExpression, fields: FilterQueryFields): RawBuilder<SqlBool> {
  if (filter.kind === 'match') {
    const field = fields[filter.field]!;
    if (filter.operator === 'equals' && field.instantColumn !== undefined) {
      if (!filter.instant) throw new Error(`${filter.field}:"…" was not read as an instant`);
      // The API writes milliseconds: a row stored finer still matches the value a client read.
      return sql<SqlBool>`date_trunc('milliseconds', ${sql.ref(field.instantColumn)}) = ${filter.instant.toISOString()}::timestamptz`;
    }
    const column = sql.ref(field.column);
    return filter.operator === 'equals'
      ? sql<SqlBool>`${column}::text = ${filter.value}`
      : sql<SqlBool>`${column}::text ilike ${likePattern(filter.value)}`;
  }
  const joiner = filter.kind === 'and' ? sql` and ` : sql` or `;
  return sql<SqlBool>`(${sql.join([filterQuerySql(filter.left, fields), filterQuerySql(filter.right, fields)], joiner)})`;
}
