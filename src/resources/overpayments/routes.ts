import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { isUuid } from '../../domain/uuid.ts';
import { AppError } from '../../errors/app-error.ts';
import {
  OVERPAYMENT_INSTALLMENTS_MAX,
  OVERPAYMENT_STATUSES,
  type OverpaymentRow,
  overpaymentAttributes,
  RESOLUTION_KINDS,
  type Resolution,
} from '../../money/overpayments/overpayment.ts';
import { resolveOverpayments } from '../../money/overpayments/overpayment-service.ts';
import {
  RelationshipBody,
  ResourceIdParam,
  USER_READ,
  USER_WRITE,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { ownPerson } from '../people/own-person.ts';

const EXTENSION = 'An extension of the published API (docs/integrators/overpayments.md). ';
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const OverpaymentAttributes = Type.Object({
  person_id: UuidString,
  job_id: UuidString,
  paycheck_id: Type.String({
    format: 'uuid',
    description: 'The paycheck that closed short of its advances.',
  }),
  organization_id: UuidString,
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  amount_minor: Type.Integer({ minimum: 1, description: 'Advanced above the net pay, in minor units.' }),
  recovered_minor: Type.Integer({
    minimum: 0,
    description: 'Recovered from later paychecks of the job so far.',
  }),
  written_off_minor: Type.Integer({ minimum: 0 }),
  remaining_minor: Type.Integer({ minimum: 0 }),
  status: Type.Union(OVERPAYMENT_STATUSES.map((status) => Type.Literal(status))),
  resolution: Type.Union([...RESOLUTION_KINDS.map((kind) => Type.Literal(kind)), Type.Null()]),
  installments: Type.Union([Type.Integer(), Type.Null()]),
  installments_left: Type.Union([Type.Integer(), Type.Null()]),
  resolved_by: Type.Union([
    Type.Literal('PERSON'),
    Type.Literal('EMPLOYER_POLICY'),
    Type.Literal('OPERATOR'),
    Type.Null(),
  ]),
  periods_seen: Type.Integer({ minimum: 0, description: 'Paydays of the job since it was found.' }),
  detected_at: Type.String({ format: 'date-time' }),
  resolved_at: Nullable(Type.String({ format: 'date-time' })),
  closed_at: Nullable(Type.String({ format: 'date-time' })),
});

const OverpaymentResource = Type.Object({
  type: Type.Literal('overpayments'),
  id: UuidString,
  attributes: OverpaymentAttributes,
});

export function overpaymentResource(row: OverpaymentRow) {
  return { type: 'overpayments' as const, id: row.id, attributes: overpaymentAttributes(row) };
}

/** The body of a resolution, as the REST extension and the admin API take it. */
export const ResolutionAttributes = Type.Object(
  {
    resolution: Type.Union(
      RESOLUTION_KINDS.map((kind) => Type.Literal(kind)),
      {
        description:
          'NEXT_PAYCHECK: recovered whole from the next paycheck of the job (as far as its payout goes); INSTALLMENTS: spread over the next `installments` paychecks.',
      },
    ),
    installments: Type.Optional(
      Type.Integer({
        description: `With INSTALLMENTS: the number of paychecks, 2 to ${OVERPAYMENT_INSTALLMENTS_MAX}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const ResolutionBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('overpayment_resolutions'),
    attributes: ResolutionAttributes,
    relationships: Type.Optional(
      Type.Object({
        overpayment: Type.Optional(RelationshipBody('overpayments')),
      }),
    ),
  }),
});

/** A resolution from the wire, checked: the installments belong to INSTALLMENTS only, within their bound. */
export function resolutionOf(
  attributes: { resolution: string; installments?: number | undefined },
  pointer: string,
): Resolution {
  if (attributes.resolution === 'NEXT_PAYCHECK') {
    if (attributes.installments !== undefined && attributes.installments !== 1)
      throw new AppError('INVALID_PARAMETERS', {
        detail: 'installments is given with INSTALLMENTS only; NEXT_PAYCHECK is one paycheck.',
        source: { pointer },
      });
    return { kind: 'NEXT_PAYCHECK' };
  }
  const installments = attributes.installments;
  if (
    installments === undefined ||
    !Number.isSafeInteger(installments) ||
    installments < 2 ||
    installments > OVERPAYMENT_INSTALLMENTS_MAX
  )
    throw new AppError('INVALID_PARAMETERS', {
      detail: `installments must be a whole number from 2 to ${OVERPAYMENT_INSTALLMENTS_MAX} with INSTALLMENTS (got ${JSON.stringify(installments ?? null)}).`,
      source: { pointer },
    });
  return { kind: 'INSTALLMENTS', installments };
}

export const overpaymentRoutes: FastifyPluginAsync<{ db: Db; now: () => Date }> = async (
  app,
  { db, now },
) => {
  app.get(
    '/rest/people/:person_id/overpayments',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'listPersonOverpayments',
        tags: ['Overpayments'],
        summary: "The signed-in person's overpayments: what was advanced above a paycheck's net pay",
        description: `${EXTENSION}Oldest first. While one is RESOLUTION_REQUIRED, transfers are refused with OVERPAYMENT_RESOLUTION_REQUIRED; while one is RECOVERING, with OVERPAYMENT_RESOLVING. Recovery comes only from later paychecks of the same job, on their payday, with no fee and no interest; never from a bank account or card.`,
        security: USER_READ.openApi,
        params: ResourceIdParam('person_id'),
        response: {
          200: Type.Object({ data: Type.Array(OverpaymentResource) }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { person_id: id } = request.params as { person_id: string };
      const personId = ownPerson(request.caller!, id);
      const rows = await db
        .selectFrom('overpayments')
        .selectAll()
        .where('person_id', '=', personId)
        .orderBy('detected_at')
        .orderBy('id')
        .limit(1000)
        .execute();
      return { data: rows.map(overpaymentResource) };
    },
  );

  app.post(
    '/rest/people/:person_id/overpayment_resolutions',
    {
      config: { security: USER_WRITE.config },
      schema: {
        operationId: 'resolvePersonOverpayments',
        tags: ['Overpayments'],
        summary: 'The signed-in person chooses how their overpayment is recovered',
        description: `${EXTENSION}Resolves the overpayment named by relationships.overpayment, or every overpayment waiting for a resolution when none is named: NEXT_PAYCHECK, or INSTALLMENTS over 2 to ${OVERPAYMENT_INSTALLMENTS_MAX} paychecks. Answers the overpayments resolved (now RECOVERING). An overpayment resolved already, or none waiting, is 400 INVALID_RESOURCE_STATE.`,
        security: USER_WRITE.openApi,
        params: ResourceIdParam('person_id'),
        body: ResolutionBody,
        response: {
          200: Type.Object({ data: Type.Array(OverpaymentResource) }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { person_id: id } = request.params as { person_id: string };
      const personId = ownPerson(request.caller!, id);
      const { data } = request.body as {
        data: {
          attributes: { resolution: string; installments?: number };
          relationships?: { overpayment?: { data: { id: string } } };
        };
      };
      const resolution = resolutionOf(data.attributes, '/data/attributes/installments');
      const named = data.relationships?.overpayment?.data.id;
      if (named !== undefined && !isUuid(named))
        throw new AppError('INVALID_RESOURCE_LINK', {
          detail: `overpayment ${named} is not an overpayment of this person.`,
          source: { pointer: '/data/relationships/overpayment/data/id' },
        });
      const resolved = await resolveOverpayments(db, {
        personId,
        overpaymentId: named?.toLowerCase(),
        resolution,
        by: 'PERSON',
        now: now(),
      });
      return { data: resolved.map(overpaymentResource) };
    },
  );
};
