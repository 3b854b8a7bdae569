import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { referenceFacts } from '../../scripts/reference-facts.ts';
import { CARD_PRODUCT_KEY } from '../../src/resources/people/serialize.ts';
import { REFERENCE_FACTS } from '../helpers/contract.ts';

const description = {
  openapi: '3.1.0',
  info: {
    title: 'Acme Rest API',
    version: '9.9.9',
    description: 'Pay with Acme.',
    contact: { name: 'Acme' },
  },
  servers: [{ url: 'https://api.acme.example', description: 'The Acme server' }],
  tags: [{ name: 'Things', description: 'Everything about things.' }],
  security: [{ user: ['things:read'] }],
  'x-vendor': { anything: true },
  paths: {
    '/things/{id}': {
      parameters: [
        {
          name: 'Acme-API-Version',
          in: 'header',
          description: 'Which version of Acme.',
          schema: { type: 'integer', default: 3 },
        },
      ],
      get: {
        operationId: 'readThing',
        summary: 'Read a thing',
        description: 'Long words about reading a thing.',
        tags: ['Things'],
        servers: [{ url: 'https://other.acme.example' }],
        security: [{ user: ['things:read'] }],
        responses: {
          '200': {
            description: 'The thing',
            content: {
              'application/vnd.api+json': {
                schema: { $ref: '#/components/schemas/Thing' },
                examples: { One: { value: { title: 'A' } } },
              },
            },
          },
        },
      },
    },
  },
  components: {
    securitySchemes: { user: { type: 'oauth2', flows: { implicit: { authorizationUrl: 'https://acme' } } } },
    schemas: {
      Thing: {
        type: 'object',
        title: 'A thing',
        description: 'Words.',
        'x-go-type-name': 'Thing',
        required: ['title', 'acme_card'],
        properties: {
          title: { type: 'string', maxLength: 40, example: 'A title' },
          description: { type: ['string', 'null'], description: 'A member named description stays.' },
          kind: { type: 'string', enum: ['PLAIN', 'ACME'], 'x-enumDescriptions': { ACME: 'Ours.' } },
          acme_card: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
};

test('the facts keep names, types, enums, bounds and the operations; no words, no servers, no product name', () => {
  assert.deepEqual(referenceFacts(description), {
    source: { file: '', version: '9.9.9' },
    openapi: '3.1.0',
    security: [{ user: ['things:read'] }],
    paths: {
      '/things/{id}': {
        parameters: [{ name: '{Brand}-API-Version', in: 'header', schema: { type: 'integer', default: 3 } }],
        get: {
          operationId: 'readThing',
          security: [{ user: ['things:read'] }],
          responses: {
            '200': {
              content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/Thing' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Thing: {
          type: 'object',
          required: ['title', '{brand}_card'],
          properties: {
            title: { type: 'string', maxLength: 40 },
            description: { type: ['string', 'null'] },
            kind: { type: 'string', enum: ['PLAIN', '{BRAND}'] },
            '{brand}_card': { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
      },
    },
  });
});

test('a keyword the script does not know stops it, naming where', () => {
  const changed = structuredClone(description);
  (changed.components.schemas.Thing as Record<string, unknown>).unevaluatedProperties = false;
  assert.throws(() => referenceFacts(changed), /\/components\/schemas\/Thing: "unevaluatedProperties"/);
});

test('the committed facts hold no prose and no product name, and describe every operation the suite checks', () => {
  const text = readFileSync(REFERENCE_FACTS, 'utf8');
  const brand = CARD_PRODUCT_KEY.split('_')[0]!;
  assert.ok(!text.toLowerCase().includes(brand.toLowerCase()), 'the product name is in the facts');
  assert.ok(text.includes('"{brand}_card"'), 'the product key is there as a placeholder');
  const facts = JSON.parse(text);
  const strings: string[] = [];
  const annotations: string[] = [];
  const walk = (node: unknown, parentKey: string) => {
    if (typeof node === 'string') strings.push(node);
    else if (Array.isArray(node)) for (const item of node) walk(item, parentKey);
    else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        const isName = ['properties', 'paths', 'schemas', 'responses', 'parameters', 'content'].includes(
          parentKey,
        );
        if (!isName && (/^(description|summary|title|examples?)$/.test(key) || key.startsWith('x-')))
          annotations.push(key);
        walk(value, key);
      }
    }
  };
  walk(facts, '');
  assert.deepEqual(annotations, []);
  assert.deepEqual(
    strings.filter((value) => /\s/.test(value)),
    [],
    'a value with a space is prose',
  );
  const operations = Object.values(facts.paths as Record<string, Record<string, { operationId?: string }>>)
    .flatMap((item) => Object.values(item))
    .map((operation) => operation.operationId)
    .filter(Boolean);
  assert.equal(operations.length, 18, 'the 17 operations of /rest and card tokenization');
});
