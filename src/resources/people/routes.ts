import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { isUuid } from '../../domain/uuid.ts';
import { bodyIdMustMatch, ResourceIdParam, UuidString } from '../../platform/resource-schemas.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { CARD_PRODUCT_KEY, personResource } from './serialize.ts';
import { changeStateOfResidence, personNotFound, readPerson } from './service.ts';

const PersonResource = Type.Object({
  type: Type.Literal('people'),
  id: UuidString,
  attributes: Type.Object({
    disallow_reason: Type.Union(
      [Type.Literal('INACTIVE'), Type.Literal('DELINQUENT'), Type.Literal('BANNED'), Type.Null()],
      {
        description: 'Why this person may not transfer; null when they may.',
      },
    ),
    state_of_residence: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 2,
        description: 'USPS code of a US state or DC; absent until set.',
      }),
    ),
    products: Type.Object({
      [CARD_PRODUCT_KEY]: Type.Object({ eligible: Type.Boolean(), enrolled: Type.Boolean() }),
    }),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const PersonUpdateBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('people'),
    id: Type.String({ maxLength: 64 }),
    attributes: Type.Object(
      {
        state_of_residence: Type.String({
          maxLength: 2,
          description: 'USPS code of a US state or DC, such as NY.',
        }),
      },
      { additionalProperties: false },
    ),
  }),
});

const Params = ResourceIdParam('person_id');

export const peopleRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string; now: () => Date }> = async (
  app,
  { db, baseUrl, now },
) => {
  app.get(
    '/rest/people/:person_id',
    {
      config: {
        security: [
          { kind: 'client', scopes: ['client:admin'] },
          { kind: 'user', scopes: ['user:read'] },
        ],
      },
      schema: {
        operationId: 'readPerson',
        tags: ['People'],
        summary: 'One person: the signed-in person, or a worker of an organization linked to the client',
        security: [{ oauth_client_credentials_token: ['client:admin'] }, { oauth_user_token: ['user:read'] }],
        params: Params,
        response: {
          200: Type.Object({ data: PersonResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { person_id: id } = request.params as { person_id: string };
      if (!isUuid(id)) throw personNotFound(id);
      return { data: personResource(baseUrl, await readPerson(db, request.caller!, id.toLowerCase())) };
    },
  );

  app.patch(
    '/rest/people/:person_id',
    {
      config: { security: [{ kind: 'user', scopes: ['user:read_write'] }] },
      schema: {
        operationId: 'updatePerson',
        tags: ['People'],
        summary: "Change the signed-in person's state of residence",
        security: [{ oauth_user_token: ['user:read_write'] }],
        params: Params,
        body: PersonUpdateBody,
        response: {
          200: Type.Object({ data: PersonResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { person_id: id } = request.params as { person_id: string };
      const { data } = request.body as { data: { id: string; attributes: { state_of_residence: string } } };
      if (!isUuid(id)) throw personNotFound(id);
      bodyIdMustMatch(data.id, id);
      const person = await changeStateOfResidence(
        db,
        request.caller!,
        id.toLowerCase(),
        data.attributes.state_of_residence,
        now(),
      );
      return { data: personResource(baseUrl, person) };
    },
  );
};
