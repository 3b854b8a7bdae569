import { type Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database.ts';

/** What stands for the i-th value while a statement is built; never a value anyone sends. */
const PLACEHOLDER = '\u0000compiled-once:';

interface Template {
  sql: string;
  /** Per parameter: the index of the value it takes, or the constant the builder put there. */
  slots: readonly ({ value: number } | { constant: unknown })[];
}

const templates = new WeakMap<object, Map<string, Template>>();

/**
 * Runs a statement whose text depends on the shape of a request (who asks, which filters) but not on its values,
 * building and compiling it with Kysely only the first time: on a read that answers in a millisecond, building the
 * query tree and compiling it again was a measurable share of the API's CPU (BENCHMARKS.md, reads). `key` names
 * the statement and its shape; `build` is given placeholders in place of `values` and must put each one into the
 * statement as a parameter as it is (no arithmetic on it, no branching on it). The text is then the same for every
 * call, so the pool prepares it once per connection (prepared-pool.ts).
 */
export async function runCompiledOnce<Row>(
  db: Db,
  key: string,
  values: readonly unknown[],
  build: (...placeholders: never[]) => Compilable<Row>,
): Promise<Row[]> {
  let byKey = templates.get(db);
  if (!byKey) {
    byKey = new Map();
    templates.set(db, byKey);
  }
  let template = byKey.get(key);
  if (!template) {
    template = templateOf(key, values.length, build);
    byKey.set(key, template);
  }
  const parameters = template.slots.map((slot) => ('value' in slot ? values[slot.value] : slot.constant));
  const { rows } = await db.executeQuery<Row>(CompiledQuery.raw(template.sql, parameters));
  return rows;
}

function templateOf(
  key: string,
  count: number,
  build: (...placeholders: never[]) => Compilable<unknown>,
): Template {
  const placeholders = Array.from({ length: count }, (_, index) => `${PLACEHOLDER}${index}`);
  const compiled = build(...(placeholders as never[])).compile();
  if (compiled.sql.includes(PLACEHOLDER))
    throw new Error(`${key}: a value was written into the statement's text`);
  const slots = compiled.parameters.map((parameter) =>
    typeof parameter === 'string' && parameter.startsWith(PLACEHOLDER)
      ? { value: Number(parameter.slice(PLACEHOLDER.length)) }
      : { constant: parameter },
  );
  for (let index = 0; index < count; index++)
    if (!slots.some((slot) => 'value' in slot && slot.value === index))
      throw new Error(`${key}: value ${index} is not a parameter of the statement`);
  return { sql: compiled.sql, slots };
}
