import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CARD_PROGRAM_SUBTYPE } from '../../src/domain/account-values.ts';
import { CARD_PRODUCT_KEY } from '../../src/resources/people/serialize.ts';

/**
 * The published description's facts (names, types, enums, formats, required members, bounds), kept in the
 * repository by scripts/reference-facts.ts (`npm run reference-facts`). Every run checks against it: a missing or
 * unreadable file fails the test that asks, it never switches the checks off.
 */
export const REFERENCE_FACTS = join(import.meta.dirname, '..', 'contract', 'reference-facts.json');
const REFERENCE_ID = 'reference-facts.json';

/** The facts name the product by placeholder; where the server sends such a name, the name it sends. */
const PLACEHOLDERS: Record<string, string> = {
  '{brand}_card': CARD_PRODUCT_KEY,
  '{BRAND}': CARD_PROGRAM_SUBTYPE,
};

export interface ReferenceFacts {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}

let facts: ReferenceFacts | undefined;
/** The facts, with the server's own names in place of the placeholders. */
export function referenceFacts(): ReferenceFacts {
  facts ??= JSON.parse(readFileSync(REFERENCE_FACTS, 'utf8'), (_key, value) => {
    if (typeof value === 'string') return Object.hasOwn(PLACEHOLDERS, value) ? PLACEHOLDERS[value] : value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [
        Object.hasOwn(PLACEHOLDERS, name) ? PLACEHOLDERS[name]! : name,
        item,
      ]),
    );
  }) as ReferenceFacts;
  return facts;
}

let ajv: Ajv2020 | undefined;
function validator(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema({ ...referenceFacts(), $id: REFERENCE_ID });
  }
  return ajv;
}

/** Fails unless a response body matches the published description's schema of that name (components/schemas). */
export function assertMatchesReference(schemaName: string, body: unknown): void {
  const validate = validator().getSchema(`${REFERENCE_ID}#/components/schemas/${schemaName}`);
  assert.ok(validate, `no schema ${schemaName} in the reference description`);
  const valid = validate(body);
  assert.ok(
    valid,
    `${schemaName}: ${JSON.stringify(validate.errors, null, 1)}\n${JSON.stringify(body).slice(0, 500)}`,
  );
}

interface ReferenceOperation {
  pattern: RegExp;
  method: string;
  pointer: string;
}

let operations: ReferenceOperation[] | undefined;
function referenceOperations(): ReferenceOperation[] {
  operations ??= Object.entries(referenceFacts().paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => ['get', 'post', 'patch', 'delete', 'put'].includes(method))
      .map((method) => ({
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        method: method.toUpperCase(),
        pointer: `/paths/${escapePointer(path)}/${method}`,
      })),
  );
  return operations;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolvePointer(document: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (node, segment) =>
        (node as Record<string, unknown> | undefined)?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')],
      document,
    );
}

/**
 * Checks one response of the API against the published description: the operation is found by method and path,
 * the response by status, its Content-Type must be the description's, and the body is validated against that
 * response's schema. Responses the description
 * does not describe (paths it lacks, statuses it does not list, empty bodies) are left alone.
 */
export function checkResponseAgainstReference(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: string,
): void {
  const instance = validator();
  if (body.length === 0 || !contentType?.includes('json')) return;
  const path = url.split('?')[0]!;
  const operation = referenceOperations().find(
    (candidate) => candidate.method === method.toUpperCase() && candidate.pattern.test(path),
  );
  if (!operation) return;
  let pointer = `${operation.pointer}/responses/${status}`;
  let response = resolvePointer(referenceFacts(), pointer) as { $ref?: string; content?: object } | undefined;
  if (response?.$ref) {
    pointer = response.$ref.slice(1);
    response = resolvePointer(referenceFacts(), pointer) as typeof response;
  }
  const mediaType = Object.keys(response?.content ?? {})[0];
  if (!mediaType) return;
  assert.equal(
    contentType.split(';')[0]!.trim().toLowerCase(),
    mediaType,
    `${method} ${path} ${status} is sent as ${contentType}; the published description says ${mediaType}`,
  );
  const schemaPointer = `${pointer}/content/${escapePointer(mediaType)}/schema`;
  const validate = instance.getSchema(`${REFERENCE_ID}#${schemaPointer}`);
  assert.ok(validate, `no schema at ${schemaPointer}`);
  const parsed = JSON.parse(body);
  assert.ok(
    validate(parsed),
    `${method} ${path} ${status} does not match the published description: ${JSON.stringify(validate.errors, null, 1)}\n${body.slice(0, 800)}`,
  );
}

interface OwnOperation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/**
 * Checks one response of the API against the server's own OpenAPI document: when the document lists the
 * operation and that status, the response's Content-Type must be one the document declares for it. Clients
 * generated from the document read answers by these types.
 */
export function checkResponseAgainstOwnDocument(
  document: { paths: Record<string, Record<string, OwnOperation>> },
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
): void {
  const path = url.split('?')[0]!;
  const template = Object.keys(document.paths).find((candidate) =>
    new RegExp(`^${candidate.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
  );
  const response = template
    ? document.paths[template]![method.toLowerCase()]?.responses?.[String(status)]
    : undefined;
  if (!response?.content) return;
  const sent = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  assert.ok(
    Object.hasOwn(response.content, sent),
    `${method} ${path} ${status} is sent as ${contentType}; our OpenAPI document declares ${Object.keys(response.content).join(', ')}`,
  );
}
