import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import { OVERPAYMENT_STATUSES } from '../money/overpayments/overpayment.ts';
import { resolveOverpaymentById, writeOffOverpayment } from '../money/overpayments/overpayment-service.ts';
import {
  findOverpayment,
  listOverpayments,
  OVERPAYMENT_LIST_ORDER,
} from '../money/overpayments/overpayment-store.ts';
import { answerListPage } from '../platform/pagination.ts';
import { ResourceIdParam } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import {
  OverpaymentAttributes,
  overpaymentResource,
  ResolutionAttributes,
  resolutionOf,
} from '../resources/overpayments/routes.ts';
import { listRouteSchema } from './list-route.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];

const Resource = Type.Object({
  type: Type.Literal('overpayments'),
  id: Type.String({ format: 'uuid' }),
  attributes: OverpaymentAttributes,
});

const IdParam = ResourceIdParam('overpayment_id');

function uuidFilter(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isUuid(value))
    throw new AppError('INVALID_PARAMETERS', {
      detail: `${name} must be a UUID (got ${JSON.stringify(value.slice(0, 40))}).`,
      source: { parameter: name },
    });
  return value.toLowerCase();
}

function idOf(params: unknown): string {
  const { overpayment_id: id } = params as { overpayment_id: string };
  if (!isUuid(id)) throw new AppError('RECORD_NOT_FOUND', { detail: `No overpayment ${id}.` });
  return id.toLowerCase();
}

/** The operator's overpayments (what `ewa overpayments` does): list, show, resolve, write off. */
export const adminOverpaymentRoutes: FastifyPluginAsync<{
  db: Db;
  baseUrl: string;
  now: () => Date;
}> = async (app, { db, baseUrl, now }) => {
  app.get(
    '/admin/overpayments',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminListOverpayments',
        tags,
        summary: 'Overpayments, oldest found first',
        description: 'filter[status], filter[person], filter[organization] keep those.',
        security: OPERATOR.openApi,
        ...listRouteSchema(Resource, {
          'filter[status]': Type.Optional(Type.String({ maxLength: 100 })),
          'filter[person]': Type.Optional(Type.String({ maxLength: 100 })),
          'filter[organization]': Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
    },
    async (request) => {
      const query = request.query as Record<string, string | undefined>;
      const status = query['filter[status]'];
      if (status !== undefined && !(OVERPAYMENT_STATUSES as readonly string[]).includes(status))
        throw new AppError('INVALID_PARAMETERS', {
          detail: `filter[status] must be one of ${OVERPAYMENT_STATUSES.join(', ')} (got ${JSON.stringify(status.slice(0, 40))}).`,
          source: { parameter: 'filter[status]' },
        });
      const filter = {
        status,
        personId: uuidFilter('filter[person]', query['filter[person]']),
        organizationId: uuidFilter('filter[organization]', query['filter[organization]']),
      };
      return answerListPage(
        request,
        { baseUrl, path: '/admin/overpayments', order: OVERPAYMENT_LIST_ORDER },
        (page) => listOverpayments(db, filter, page),
        (row) => overpaymentResource(row),
      );
    },
  );

  app.get(
    '/admin/overpayments/:overpayment_id',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminGetOverpayment',
        tags,
        summary: 'One overpayment',
        security: OPERATOR.openApi,
        params: IdParam,
        response: { 200: Type.Object({ data: Resource }), ...errorResponses(401, 403, 404, 406, 500) },
      },
    },
    async (request) => {
      const id = idOf(request.params);
      const row = await findOverpayment(db, id);
      if (!row) throw new AppError('RECORD_NOT_FOUND', { detail: `No overpayment ${id}.` });
      return { data: overpaymentResource(row) };
    },
  );

  app.post(
    '/admin/overpayments/:overpayment_id/resolution',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminResolveOverpayment',
        tags,
        summary: 'Choose (or change) how an open overpayment is recovered',
        description:
          'NEXT_PAYCHECK, or INSTALLMENTS with installments 2 to 12; for an overpayment RESOLUTION_REQUIRED or RECOVERING (its installments start again). Recovery comes from later paychecks of its job only.',
        security: OPERATOR.openApi,
        params: IdParam,
        body: Type.Object({
          data: Type.Object({
            type: Type.Literal('overpayment_resolutions'),
            attributes: ResolutionAttributes,
          }),
        }),
        response: {
          200: Type.Object({ data: Resource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const id = idOf(request.params);
      const { data } = request.body as {
        data: { attributes: { resolution: string; installments?: number } };
      };
      const resolution = resolutionOf(data.attributes, '/data/attributes/installments');
      return {
        data: overpaymentResource(
          await resolveOverpaymentById(db, { overpaymentId: id, resolution, now: now() }),
        ),
      };
    },
  );

  app.post(
    '/admin/overpayments/:overpayment_id/write_off',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminWriteOffOverpayment',
        tags,
        summary: 'Write off what is left of an open overpayment now',
        description:
          "A ledger movement (write-off expense against the receivable); the person becomes DELINQUENT when the employer's policy says so (overpayment_write_off_delinquent). Nothing is ever asked of the worker.",
        security: OPERATOR.openApi,
        params: IdParam,
        response: { 200: Type.Object({ data: Resource }), ...errorResponses(400, 401, 403, 404, 406, 500) },
      },
    },
    async (request) => {
      const id = idOf(request.params);
      // A ledger of its own: nothing is remembered across a sandbox reset.
      const written = await writeOffOverpayment(db, new SystemLedger(db), { overpaymentId: id, now: now() });
      return { data: overpaymentResource(written) };
    },
  );
};
