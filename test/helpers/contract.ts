import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const REFERENCE = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'shared',
  'reference',
  'ewa-rest-openapi-3.0.0-beta.117.json',
);
const REFERENCE_ID = 'reference.json';

let ajv: Ajv2020 | undefined;
function validator(): Ajv2020 | undefined {
  if (!existsSync(REFERENCE)) return undefined;
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema({ ...JSON.parse(readFileSync(REFERENCE, 'utf8')), $id: REFERENCE_ID });
  }
  return ajv;
}

/**
 * Fails unless a response body matches the published description's schema of that name (components/schemas),
 * when the reference file is beside this checkout.
 */
export function assertMatchesReference(schemaName: string, body: unknown): void {
  const instance = validator();
  if (!instance) return;
  const validate = instance.getSchema(`${REFERENCE_ID}#/components/schemas/${schemaName}`);
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
  if (!operations) {
    const reference = JSON.parse(readFileSync(REFERENCE, 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    operations = Object.entries(reference.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'post', 'patch', 'delete', 'put'].includes(method))
        .map((method) => ({
          pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
          method: method.toUpperCase(),
          pointer: `/paths/${escapePointer(path)}/${method}`,
        })),
    );
  }
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

let referenceDocument: unknown;

/**
 * Checks one response of the API against the published description: the operation is found by method and path,
 * the response by status, and the body is validated against that response's schema. Responses the description
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
  if (!instance || body.length === 0 || !contentType?.includes('json')) return;
  const path = url.split('?')[0]!;
  const operation = referenceOperations().find(
    (candidate) => candidate.method === method.toUpperCase() && candidate.pattern.test(path),
  );
  if (!operation) return;
  referenceDocument ??= JSON.parse(readFileSync(REFERENCE, 'utf8'));
  let pointer = `${operation.pointer}/responses/${status}`;
  let response = resolvePointer(referenceDocument, pointer) as
    | { $ref?: string; content?: object }
    | undefined;
  if (response?.$ref) {
    pointer = response.$ref.slice(1);
    response = resolvePointer(referenceDocument, pointer) as typeof response;
  }
  const mediaType = Object.keys(response?.content ?? {})[0];
  if (!mediaType) return;
  const schemaPointer = `${pointer}/content/${escapePointer(mediaType)}/schema`;
  const validate = instance.getSchema(`${REFERENCE_ID}#${schemaPointer}`);
  assert.ok(validate, `no schema at ${schemaPointer}`);
  const parsed = JSON.parse(body);
  assert.ok(
    validate(parsed),
    `${method} ${path} ${status} does not match the published description: ${JSON.stringify(validate.errors, null, 1)}\n${body.slice(0, 800)}`,
  );
}
