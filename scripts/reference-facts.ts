import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Writes the facts of the published API description that the test suite checks responses against
 * (test/contract/reference-facts.json): paths, operations, parameters, request bodies, responses and schemas, with
 * names, types, enums, formats, required members, patterns and bounds, and nothing else. Descriptions, summaries,
 * titles, examples, tags, servers, contact and info text and `x-` extensions are left out, and the product name
 * the description carries (the first word of its title) is replaced by `{brand}`, so that the copy in the
 * repository names no one. A keyword this script does not know stops it: a new kind of fact is looked at, not
 * dropped.
 *
 *   npm run reference-facts -- [description.json] [--out file]
 *
 * The description defaults to ../shared/reference/ewa-rest-openapi-3.0.0-beta.117.json beside the repository,
 * the output to test/contract/reference-facts.json. CI regenerates it into a temporary file and compares.
 */

const ROOT = join(import.meta.dirname, '..');
const DEFAULT_SOURCE = join(ROOT, '..', 'shared', 'reference', 'ewa-rest-openapi-3.0.0-beta.117.json');
export const FACTS_FILE = join(ROOT, 'test', 'contract', 'reference-facts.json');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Words about a value, not rules on it: never copied. */
const ANNOTATIONS = new Set([
  'description',
  'summary',
  'title',
  'example',
  'examples',
  '$comment',
  'externalDocs',
]);

/** JSON Schema keywords whose value is a schema, a list of schemas, a map of schemas, or a plain fact. */
const SCHEMA_KEYWORDS = {
  schema: new Set([
    'items',
    'not',
    'additionalProperties',
    'contains',
    'propertyNames',
    'if',
    'then',
    'else',
  ]),
  schemaList: new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']),
  schemaMap: new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']),
  fact: new Set([
    '$ref',
    'type',
    'enum',
    'const',
    'format',
    'required',
    'pattern',
    'minLength',
    'maxLength',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'multipleOf',
    'minItems',
    'maxItems',
    'uniqueItems',
    'minProperties',
    'maxProperties',
    'dependentRequired',
    'nullable',
    'default',
    'readOnly',
    'writeOnly',
    'deprecated',
    'discriminator',
  ]),
};

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dropped(key: string): boolean {
  return ANNOTATIONS.has(key) || key.startsWith('x-');
}

function unknownKeyword(where: string, key: string): never {
  throw new Error(`${where}: "${key}" is not a keyword this script knows; decide whether it is a fact.`);
}

function mapValues(
  value: Json | undefined,
  where: string,
  copy: (item: Json, at: string) => Json,
): JsonObject {
  if (!isObject(value)) throw new Error(`${where} is not an object`);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copy(item, `${where}/${key}`)]));
}

function schema(value: Json, where: string): Json {
  if (typeof value === 'boolean') return value;
  if (!isObject(value)) throw new Error(`${where} is not a schema`);
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    // The description names its error codes only as the keys of x-enumDescriptions (no enum beside them): keep the
    // names, not the words, so that the catalog test can check every code is known.
    if (key === 'x-enumDescriptions' && isObject(item) && !('enum' in value))
      out.codeNames = Object.keys(item);
    if (dropped(key)) continue;
    const at = `${where}/${key}`;
    if (SCHEMA_KEYWORDS.schema.has(key)) out[key] = schema(item, at);
    else if (SCHEMA_KEYWORDS.schemaList.has(key)) {
      if (!Array.isArray(item)) throw new Error(`${at} is not a list`);
      out[key] = item.map((entry, index) => schema(entry, `${at}/${index}`));
    } else if (SCHEMA_KEYWORDS.schemaMap.has(key)) out[key] = mapValues(item, at, schema);
    else if (SCHEMA_KEYWORDS.fact.has(key)) out[key] = item;
    else unknownKeyword(where, key);
  }
  return out;
}

/** Copies the listed members of an OpenAPI object, each with its own copier; anything else must be words. */
function pick(
  value: Json | undefined,
  where: string,
  members: Record<string, ((item: Json, at: string) => Json | undefined) | 'fact'>,
): JsonObject {
  if (!isObject(value)) throw new Error(`${where} is not an object`);
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const copier = Object.hasOwn(members, key) ? members[key] : undefined;
    if (copier === 'fact') out[key] = item;
    else if (copier) {
      const copied = copier(item, `${where}/${key}`);
      if (copied !== undefined) out[key] = copied;
    } else if (!dropped(key)) unknownKeyword(where, key);
  }
  return out;
}

const mediaType = (value: Json, where: string) => pick(value, where, { schema, encoding: 'fact' });
const content = (value: Json, where: string) => mapValues(value, where, mediaType);
const header = (value: Json, where: string) =>
  pick(value, where, { $ref: 'fact', required: 'fact', deprecated: 'fact', schema, content });
const parameter = (value: Json, where: string) =>
  pick(value, where, {
    $ref: 'fact',
    name: 'fact',
    in: 'fact',
    required: 'fact',
    deprecated: 'fact',
    allowEmptyValue: 'fact',
    style: 'fact',
    explode: 'fact',
    schema,
    content,
  });
const parameterList = (value: Json, where: string): Json => {
  if (!Array.isArray(value)) throw new Error(`${where} is not a list`);
  return value.map((item, index) => parameter(item, `${where}/${index}`));
};
const requestBody = (value: Json, where: string) =>
  pick(value, where, { $ref: 'fact', required: 'fact', content });
const response = (value: Json, where: string) =>
  pick(value, where, { $ref: 'fact', content, headers: (item, at) => mapValues(item, at, header) });
const operation = (value: Json, where: string) =>
  pick(value, where, {
    operationId: 'fact',
    security: 'fact',
    deprecated: 'fact',
    parameters: parameterList,
    requestBody,
    responses: (item, at) => mapValues(item, at, response),
    // Where the operation is served (a host naming the product) and how it is grouped are not facts to check.
    servers: () => undefined,
    tags: () => undefined,
  });

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const pathItem = (value: Json, where: string) =>
  pick(value, where, {
    parameters: parameterList,
    ...Object.fromEntries(METHODS.map((method) => [method, operation])),
  });

/** The facts of a whole description, without its words. */
export function referenceFacts(description: JsonObject): JsonObject {
  const info = description.info;
  const title = isObject(info) && typeof info.title === 'string' ? info.title : '';
  const brand = title.split(/\s+/)[0] ?? '';
  if (brand.length < 3) throw new Error('The description has no title to take the product name from.');
  const components = pick(description.components, '/components', {
    schemas: (item, at) => mapValues(item, at, schema),
    responses: (item, at) => mapValues(item, at, response),
    parameters: (item, at) => mapValues(item, at, parameter),
    requestBodies: (item, at) => mapValues(item, at, requestBody),
    headers: (item, at) => mapValues(item, at, header),
    // Token endpoints of another service and words about scopes: the scopes an operation needs are in `security`.
    securitySchemes: () => undefined,
  });
  const facts: JsonObject = {
    source: { file: '', version: isObject(info) ? (info.version ?? null) : null },
    openapi: description.openapi ?? null,
    security: description.security ?? [],
    paths: mapValues(description.paths, '/paths', pathItem),
    components,
  };
  return withoutBrand(facts, brand) as JsonObject;
}

/** `{brand}`, `{BRAND}` or `{Brand}` wherever the product name appears, in names and in values. */
function withoutBrand(value: Json, brand: string): Json {
  const pattern = new RegExp(brand.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
  const replace = (text: string) =>
    text.replace(pattern, (found) =>
      found === found.toLowerCase() ? '{brand}' : found === found.toUpperCase() ? '{BRAND}' : '{Brand}',
    );
  const walk = (node: Json): Json => {
    if (typeof node === 'string') return replace(node);
    if (Array.isArray(node)) return node.map(walk);
    if (isObject(node))
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [replace(key), walk(item)]));
    return node;
  };
  return walk(value);
}

/** The facts as the file holds them: two-space JSON and a final newline, so that a diff shows what changed. */
export function factsText(description: JsonObject, sourceFile: string): string {
  const facts = referenceFacts(description);
  (facts.source as JsonObject).file = basename(sourceFile);
  return `${JSON.stringify(facts, null, 2)}\n`;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { out: { type: 'string' } },
  });
  const source = resolve(positionals[0] ?? DEFAULT_SOURCE);
  const out = resolve(values.out ?? FACTS_FILE);
  if (!existsSync(source)) {
    console.error(`No API description at ${source}; give its path as the first argument.`);
    process.exit(2);
  }
  const text = factsText(JSON.parse(readFileSync(source, 'utf8')) as JsonObject, source);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  console.log(`Wrote ${out} (${text.length} bytes) from ${source}.`);
}

if (import.meta.main) main();
