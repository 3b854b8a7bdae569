import { AppError } from '../errors/app-error.ts';

/** The query parameters an operation's schema names; `filter[...]` of any field when it names one of them. */
export interface QueryNames {
  names: ReadonlySet<string>;
  anyFilter: boolean;
}

interface ObjectLike {
  properties?: Record<string, unknown>;
  allOf?: ObjectLike[];
}

/** The names of a querystring schema: an object, or an intersection of objects (a /rest list's). */
export function queryNamesOf(schema: unknown): QueryNames {
  const names = new Set<string>();
  const collect = (part: ObjectLike | undefined) => {
    if (!part || typeof part !== 'object') return;
    for (const name of Object.keys(part.properties ?? {})) names.add(name);
    for (const inner of part.allOf ?? []) collect(inner);
  };
  collect(schema as ObjectLike);
  return { names, anyFilter: [...names].some((name) => name.startsWith('filter[')) };
}

/**
 * JSON:API asks a server to refuse a query parameter it does not know rather than ignore it: `?sort=-amount`
 * answered unsorted, or `?filter[client]=x` answered unfiltered, looks like an answer to the question asked. An
 * unknown `filter[...]` is left to the operation, which names the fields it can filter on.
 */
export function unknownQueryParameter(query: unknown, known: QueryNames): AppError | undefined {
  if (!query || typeof query !== 'object') return undefined;
  for (const name of Object.keys(query)) {
    if (known.names.has(name) || (known.anyFilter && name.startsWith('filter['))) continue;
    return new AppError('INVALID_PARAMETERS', {
      detail: `Parameter ${name.length > 64 ? `${name.slice(0, 64)}…` : name} is not a known field.`,
      source: { parameter: name },
    });
  }
  return undefined;
}

/**
 * A parameter given twice arrives as an array, which the operation's schema would refuse as "must be string": the
 * answer says what happened instead. A repeated `filter[...]` is the filter error the operations document.
 */
export function repeatedQueryParameter(query: unknown): AppError | undefined {
  if (!query || typeof query !== 'object') return undefined;
  for (const [name, value] of Object.entries(query)) {
    if (!Array.isArray(value)) continue;
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    return new AppError(name.startsWith('filter') ? 'INVALID_FILTER_QUERY' : 'INVALID_PARAMETERS', {
      detail: `${shown} may be given only once.`,
      source: { parameter: name },
    });
  }
  return undefined;
}
