import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  document,
  relationship,
  resourceObject,
  selfLink,
  toManyRelationship,
} from '../../src/platform/serializer.ts';

test('resource objects carry an absolute links.self built from the public URL', () => {
  const resource = resourceObject(
    'https://api.example.com',
    'jobs',
    'e9d84b0d-92ba-43c9-93bf-7c993313fa6f',
    { title: 'Associate' },
    {
      person: relationship('people', '3fa8f641-5717-4562-b3fc-2c963f66afa6'),
      direct_deposit_default_card: relationship('accounts', null),
    },
  );
  assert.deepEqual(resource, {
    type: 'jobs',
    id: 'e9d84b0d-92ba-43c9-93bf-7c993313fa6f',
    attributes: { title: 'Associate' },
    relationships: {
      person: { data: { type: 'people', id: '3fa8f641-5717-4562-b3fc-2c963f66afa6' } },
      direct_deposit_default_card: { data: null },
    },
    links: { self: 'https://api.example.com/rest/jobs/e9d84b0d-92ba-43c9-93bf-7c993313fa6f' },
  });
  assert.equal(selfLink('http://localhost:8080', 'people', 'x'), 'http://localhost:8080/rest/people/x');
  assert.equal('relationships' in resourceObject('http://h', 'organizations', 'o', { name: 'Acme' }), false);
});

test('documents: single, list, included; to-many relationships', () => {
  assert.deepEqual(document({ id: 1 }), { data: { id: 1 } });
  assert.deepEqual(document([], [{ id: 'f' }]), { data: [], included: [{ id: 'f' }] });
  assert.deepEqual(toManyRelationship('funding_sources', ['a', 'b']), {
    data: [
      { type: 'funding_sources', id: 'a' },
      { type: 'funding_sources', id: 'b' },
    ],
  });
});
