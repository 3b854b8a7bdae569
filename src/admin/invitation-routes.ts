import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import {
  INVITATION_EMAILS_MAX,
  INVITATION_VALID_DAYS_DEFAULT,
  INVITATION_VALID_DAYS_MAX,
  type IssuedInvitation,
  invitationAttributes,
  issueInvitations,
} from '../operator/invitations.ts';
import { ResourceIdParam } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import { pointingAt } from './input-errors.ts';
import { OPERATOR } from './schemas.ts';

const InvitationBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('invitations'),
    attributes: Type.Object(
      {
        emails: Type.Array(Type.String({ minLength: 1, maxLength: 320 }), {
          minItems: 1,
          maxItems: INVITATION_EMAILS_MAX,
          description: 'The people to invite, by the email the roster gives them.',
        }),
        reset: Type.Optional(
          Type.Boolean({ description: 'Also invite people who have a password: the code replaces it.' }),
        ),
        valid_for_days: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: INVITATION_VALID_DAYS_MAX,
            description: `Days the codes can be used; ${INVITATION_VALID_DAYS_DEFAULT} when left out.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
  }),
});

const InvitationResource = Type.Object({
  type: Type.Literal('invitations'),
  id: Type.String({ format: 'uuid' }),
  attributes: Type.Object({
    person_id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    invitation_code: Type.String({ description: 'Shown in this answer only: only a hash of it is kept.' }),
    expires_at: Type.String({ format: 'date-time' }),
    replaces_password: Type.Boolean(),
  }),
});

const resource = (invitation: IssuedInvitation) => ({
  type: 'invitations' as const,
  id: invitation.id,
  attributes: invitationAttributes(invitation),
});

/** What `ewa people invite --email` does: one-time codes for named people of an employer's roster. */
export const adminInvitationRoutes: FastifyPluginAsync<{ db: Db; now: () => Date }> = async (
  app,
  { db, now },
) => {
  app.post(
    '/admin/organizations/:organization_id/invitations',
    {
      config: { security: OPERATOR.config, schemaErrorCodes: { missing: 'MISSING_REQUIRED_FIELD' } },
      schema: {
        operationId: 'adminIssueInvitations',
        tags: ['Operator'],
        summary: 'Issue one-time codes with which workers set their password',
        description:
          'Each person named (by email, with a job at the organization) gets a code that replaces any code they ' +
          'hold; with reset, people who have a password get one too, and using it replaces that password. A worker ' +
          'types the code on the sign-up page with their email and a new password; it works once, until ' +
          'expires_at. The codes are in this answer only (the server keeps a hash): send each to its worker. When ' +
          'any email names nobody of the organization, or someone with a password without reset, the answer is ' +
          '400 naming each, and no code is issued. Idempotency-Key is not read: a retry issues new codes, which revoke ' +
          'those of the first answer.',
        security: OPERATOR.openApi,
        params: ResourceIdParam('organization_id'),
        body: InvitationBody,
        response: {
          201: Type.Object({ data: Type.Array(InvitationResource) }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request, reply) => {
      const { organization_id: organizationId } = request.params as { organization_id: string };
      const { attributes } = (request.body as { data: { attributes: Record<string, unknown> } }).data;
      const issued: IssuedInvitation[] = [];
      await pointingAt(
        (field) => ({ pointer: `/data/attributes${field ? `/${field}` : ''}` }),
        () =>
          issueInvitations(db, {
            organizationId,
            emails: attributes.emails as string[],
            reset: attributes.reset === true,
            validForDays: attributes.valid_for_days as number | undefined,
            allOrNothing: true,
            now: now(),
            onIssued: (batch) => {
              issued.push(...batch);
            },
          }),
      );
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send({ data: issued.map(resource) });
    },
  );
};
