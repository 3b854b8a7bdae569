import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/database.ts';
import { isUuid } from '../../domain/uuid.ts';
import { paycheckOf } from '../../money/earnings/paychecks.ts';
import type { FilterSpec } from '../../platform/filters.ts';
import { answerListPage, PAGE_SIZE_MAX } from '../../platform/pagination.ts';
import {
  OneOf,
  RelationshipSchema,
  ResourceIdParam,
  USER_READ,
  UuidString,
} from '../../platform/resource-schemas.ts';
import { type RestList, readRestListQuery, restListSchema } from '../../platform/rest-list-schema.ts';
import { errorResponses } from '../../platform/schemas.ts';
import { PAYCHECK_DATE_FIELDS, PAYCHECK_STATUSES } from './paycheck-values.ts';
import { paycheckResource } from './serialize.ts';
import { paycheckNotFound, readPaycheck } from './service.ts';
import { findVisiblePaychecks, PAYCHECK_FILTER_FIELDS, PAYCHECK_LIST_ORDER } from './store.ts';

/** A list of paychecks answers at most this many, oldest pay period first. */
export const PAYCHECKS_LIST_MAX = PAGE_SIZE_MAX;

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const MinorUnits = (description: string) =>
  Type.Integer({ minimum: 0, description: `${description} Minor units (cents).` });

const PaycheckResource = Type.Object({
  type: Type.Literal('paychecks'),
  id: UuidString,
  attributes: Type.Object({
    status: OneOf(PAYCHECK_STATUSES, {
      description:
        'ESTIMATED while the pay period is open, PROCESSING after it ends, IN_TRANSIT once sent, DEPOSITED once it arrived.',
    }),
    pay_period_starts_at: Timestamp("The first day of the pay period: that day's local midnight, in UTC."),
    pay_period_ends_at: Timestamp("The last day of the pay period: that day's local midnight, in UTC."),
    deposit_expected_at: Timestamp('The day the paycheck is scheduled to be deposited.'),
    total_debited: MinorUnits('Taken from this paycheck during the pay period to cover earnings advances.'),
    gross_earnings: Type.Integer({
      description:
        'Earnings before any deduction. Minor units (cents). Below zero when corrections of a paid period landed on this paycheck (docs/integrators/overpayments.md).',
    }),
    employer_withholdings: MinorUnits('Withheld by the employer, usually for taxes.'),
    net_earnings: Type.Integer({
      description:
        'Earnings after withholdings. Minor units (cents). Below zero when corrections of a paid period landed on this paycheck.',
    }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
  }),
  relationships: Type.Object({
    person: RelationshipSchema('people'),
    job: RelationshipSchema('jobs'),
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }) }),
});

const FILTERS: FilterSpec = {
  'job.id': { type: 'uuid' },
  status: { type: { enum: PAYCHECK_STATUSES } },
  ...Object.fromEntries(
    PAYCHECK_DATE_FIELDS.map((field) => [field, { type: 'date-time', operators: ['gte', 'lt'] } as const]),
  ),
};

const LIST: RestList = { name: 'Paychecks', filters: FILTERS, filterFields: PAYCHECK_FILTER_FIELDS };

const Params = ResourceIdParam('paycheck_id');

export const paycheckRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string }> = async (
  app,
  { db, baseUrl },
) => {
  app.get(
    '/rest/paychecks',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'listPaychecks',
        tags: ['Paychecks'],
        summary: "The signed-in person's paychecks, from all of their jobs",
        description: `At most ${PAYCHECKS_LIST_MAX} paychecks, oldest pay period first; to see later ones, bound the list with filter[pay_period_starts_at__gte]. Filters combine with AND. In the free-form filter a timestamp matches as written in responses (2026-03-02T05:00:00.000Z), and ~ matches part of it (pay_period_starts_at~"2026-03"). An extension: page[size] and page[after] page through the list; links.next is the next page while more follow.`,
        security: USER_READ.openApi,
        ...restListSchema(LIST, PaycheckResource),
      },
    },
    async (request) => {
      const query = readRestListQuery(request.query, LIST);
      return answerListPage(
        request,
        { baseUrl, path: '/rest/paychecks', order: PAYCHECK_LIST_ORDER },
        (page) => findVisiblePaychecks(db, request.caller!, { query, page }),
        (row) => paycheckResource(baseUrl, paycheckOf(row)),
      );
    },
  );

  app.get(
    '/rest/paychecks/:paycheck_id',
    {
      config: { security: USER_READ.config },
      schema: {
        operationId: 'readPaycheck',
        tags: ['Paychecks'],
        summary: 'One paycheck of the signed-in person',
        security: USER_READ.openApi,
        params: Params,
        response: {
          200: Type.Object({ data: PaycheckResource }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const { paycheck_id: id } = request.params as { paycheck_id: string };
      if (!isUuid(id)) throw paycheckNotFound(id);
      return { data: paycheckResource(baseUrl, await readPaycheck(db, request.caller!, id.toLowerCase())) };
    },
  );
};
