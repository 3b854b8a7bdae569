import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { RuleBook } from '../../compliance/rule-book.ts';
import type { Db } from '../../db/database.ts';
import type { DisclosureAcceptance } from '../../disclosures/acceptance-store.ts';
import { acceptanceOf, recordAcceptance } from '../../disclosures/acceptance-store.ts';
import { documentAttributes } from '../../disclosures/disclosure-document.ts';
import { disclosureRequirement } from '../../disclosures/disclosure-requirement.ts';
import { findDocument } from '../../disclosures/document-store.ts';
import { isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import {
  RelationshipBody,
  ResourceIdParam,
  USER_READ,
  USER_WRITE,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { ownPerson } from '../people/own-person.ts';

const EXTENSION = 'An extension of the published API (docs/integrators/disclosures.md). ';

export const DisclosureAttributes = Type.Object({
  state: Type.Union([Type.String({ minLength: 2, maxLength: 2 }), Type.Null()], {
    description:
      'The state whose document it is; null for the default document, used where a state has none.',
  }),
  product: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  title: Type.String(),
  body: Type.String({ description: 'The text to show the person, as published.' }),
  effective_from: Type.String({ format: 'date-time' }),
  published_at: Type.String({ format: 'date-time' }),
});

const PersonDisclosure = Type.Object({
  type: Type.Literal('disclosures'),
  id: UuidString,
  attributes: Type.Object({
    ...DisclosureAttributes.properties,
    accepted: Type.Boolean({ description: 'The person accepted this version.' }),
    accepted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
});

const AcceptanceResource = Type.Object({
  type: Type.Literal('disclosure_acceptances'),
  id: UuidString,
  attributes: Type.Object({
    version: Type.Integer({ minimum: 1 }),
    accepted_at: Type.String({ format: 'date-time' }),
  }),
  relationships: Type.Object({
    disclosure: Type.Object({ data: Type.Object({ type: Type.Literal('disclosures'), id: UuidString }) }),
    person: Type.Object({ data: Type.Object({ type: Type.Literal('people'), id: UuidString }) }),
  }),
});

const AcceptanceBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('disclosure_acceptances'),
    relationships: Type.Object({ disclosure: RelationshipBody('disclosures') }),
  }),
});

const DISCLOSURE_ID = '/data/relationships/disclosure/data/id';

function acceptanceResource(acceptance: DisclosureAcceptance) {
  return {
    type: 'disclosure_acceptances' as const,
    id: acceptance.id,
    attributes: { version: acceptance.version, accepted_at: new Date(acceptance.accepted_at).toISOString() },
    relationships: {
      disclosure: { data: { type: 'disclosures' as const, id: acceptance.document_id } },
      person: { data: { type: 'people' as const, id: acceptance.person_id } },
    },
  };
}

export const disclosureRoutes: FastifyPluginAsync<{ db: Db; now: () => Date; rules?: RuleBook }> = async (
  app,
  { db, now, rules = new RuleBook() },
) => {
  app.get(
    '/rest/people/:person_id/disclosures',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'listPersonDisclosures',
        tags: ['Disclosures'],
        summary: 'The disclosures the signed-in person must accept before an advance, and whether they did',
        description: `${EXTENSION}The current version of each document the rules of the person's state ask for (none where they ask for none); accepted is true once this version was accepted. A new version is a material change: an older version's acceptance does not count.`,
        security: USER_READ.openApi,
        params: ResourceIdParam('person_id'),
        response: {
          200: Type.Object({ data: Type.Array(PersonDisclosure) }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { person_id: id } = request.params as { person_id: string };
      const personId = ownPerson(request.caller!, id);
      const requirement = await disclosureRequirement(db, rules, personId, now());
      const document = requirement?.document;
      if (!document) return { data: [] };
      const acceptance = await acceptanceOf(db, personId, document.id);
      return {
        data: [
          {
            type: 'disclosures',
            id: document.id,
            attributes: {
              ...documentAttributes(document),
              accepted: acceptance !== undefined,
              accepted_at: acceptance ? new Date(acceptance.accepted_at).toISOString() : null,
            },
          },
        ],
      };
    },
  );

  app.post(
    '/rest/people/:person_id/disclosure_acceptances',
    {
      config: { security: USER_WRITE.config },
      schema: {
        operationId: 'acceptDisclosure',
        tags: ['Disclosures'],
        summary: 'The signed-in person accepts the current version of a disclosure',
        description: `${EXTENSION}Records the person, the document and its version, the time, the OAuth client of the token and the IP address. 201 the first time; accepting the same version again answers 200 with the same acceptance. A version that is not the current one is refused (400, naming ${DISCLOSURE_ID}).`,
        security: USER_WRITE.openApi,
        params: ResourceIdParam('person_id'),
        body: AcceptanceBody,
        response: {
          200: Type.Object({ data: AcceptanceResource }),
          201: Type.Object({ data: AcceptanceResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request, reply) => {
      const { person_id: id } = request.params as { person_id: string };
      const caller = request.caller!;
      const personId = ownPerson(caller, id);
      const { data } = request.body as { data: { relationships: { disclosure: { data: { id: string } } } } };
      const documentId = data.relationships.disclosure.data.id;
      const document = isUuid(documentId) ? await findDocument(db, documentId.toLowerCase()) : undefined;
      if (!document)
        throw new AppError('INVALID_RESOURCE_LINK', {
          detail: `disclosure ${documentId} is not a disclosure document.`,
          source: { pointer: DISCLOSURE_ID },
        });
      const at = now();
      const outcome = await recordAcceptance(db, {
        personId,
        document,
        clientId: caller.clientId,
        ipAddress: request.ip ?? null,
        now: at,
        current: async (tx) => (await disclosureRequirement(tx, rules, personId, at))?.document,
      });
      if ('current' in outcome)
        throw new AppError('INVALID_PARAMETERS', {
          detail: outcome.current
            ? `disclosure ${document.id} is version ${document.version} of "${document.title}"; the current version to accept is ${outcome.current.version} (id ${outcome.current.id}).`
            : `disclosure ${document.id} is not one this person must accept: GET /rest/people/${personId}/disclosures lists those.`,
          source: { pointer: DISCLOSURE_ID },
        });
      reply.code(outcome.created ? 201 : 200);
      return { data: acceptanceResource(outcome.acceptance) };
    },
  );
};
