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
