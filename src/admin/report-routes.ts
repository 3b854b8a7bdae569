import type { FastifyPluginAsync } from 'fastify';
import { type TSchema, Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { PAGE_KEY } from '../db/keyset-page.ts';
import { isUuid } from '../domain/uuid.ts';
import { AppError } from '../errors/app-error.ts';
import { SystemLedger } from '../ledger/ledger-accounts.ts';
import { REPAID_REFERENCE_MAX, recordReturnRepaid } from '../money/returns-repaid.ts';
import { decimalAmount } from '../operator/decimal-amount.ts';
import { namedOrganization } from '../operator/organizations.ts';
import {
  PAGINATED,
  pageLinks,
  pageLinksSchema,
  pageOf,
  pageQueryProperties,
  readPage,
} from '../platform/pagination.ts';
import { ResourceIdParam } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import { remittanceReport } from '../reports/remittance-report.ts';
import { remittanceCsv, stateReportCsv } from '../reports/report-csv.ts';
import { readRemittanceInput, readStateReportInput } from '../reports/report-input.ts';
import {
  RETURNS_PAGE_LINES,
  RETURNS_PAYABLE_ORDER,
  RETURNS_TOTALS_MAX,
  returnsPayablePage,
  returnsPayableTotals,
} from '../reports/returns-report.ts';
import { stateReport } from '../reports/state-report.ts';
import { pointingAt } from './input-errors.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];
const CSV = 'text/csv';
const Minor = Type.Integer({ description: 'Minor units (cents).' });
const Count = Type.Integer({ minimum: 0 });
const filter = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));

const StateQuery = Type.Object(
  {
    'filter[state]': filter('Two-letter code of the US state or DC, such as WI. Required.'),
    'filter[year]': filter('The calendar year (UTC days), alone or with filter[quarter] or filter[half].'),
    'filter[quarter]': filter('1 to 4: a quarter of filter[year].'),
    'filter[half]': filter('1 or 2: a half of filter[year].'),
    'filter[from]': filter('First day YYYY-MM-DD (UTC), with filter[to], instead of a year.'),
    'filter[to]': filter('Last day YYYY-MM-DD (UTC), included.'),
  },
  { additionalProperties: false },
);

const StateReportAttributes = Type.Object({
  state: Type.String(),
  period: Type.Object({
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    time_zone: Type.String({ description: 'UTC: the days of the period are UTC days.' }),
  }),
  advances: Type.Integer({
    minimum: 0,
    description:
      'Advances made in the period, PENDING or SETTLED, by the state of the person when each was made.',
  }),
  unique_users: Count,
  users_with_12_or_more_advances: Count,
  failed_advances: Type.Integer({ minimum: 0, description: 'Failed by the rail; in no other figure.' }),
  returned_advances: Type.Integer({
    minimum: 0,
    description: 'Paid, then returned by the receiving bank; in no other figure.',
  }),
  amounts: Type.Array(
    Type.Object({
      currency: Type.String(),
      total_amount: Minor,
      total_fees: Minor,
      total_tips: Type.Integer({ description: 'Always 0: this server offers no tips.' }),
      amount_received: Minor,
      failed_amount: Minor,
      returned_amount: Minor,
    }),
  ),
  complaints_opened: Count,
  complaints_answered: Count,
  complaints_closed: Count,
  advances_by_current_state: Type.Integer({
    minimum: 0,
    description:
      'Advances made before the state was recorded with each: counted at the person’s current state.',
  }),
  notes: Type.Array(Type.String()),
});

const RemittanceQuery = Type.Object(
  {
    'filter[organization]': filter('The employer’s id. Required.'),
    'filter[pay_date]': filter('The payday YYYY-MM-DD, in the employer’s time zone.'),
    'filter[from]': filter('First payday YYYY-MM-DD, with filter[to], instead of filter[pay_date].'),
    'filter[to]': filter('Last payday YYYY-MM-DD, included.'),
  },
  { additionalProperties: false },
);

const RemittanceAttributes = Type.Object({
  organization_id: Type.String({ format: 'uuid' }),
  organization_name: Type.String(),
  time_zone: Type.String(),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  deductions: Type.Array(Type.String(), { description: 'The deduction columns of each line, in order.' }),
  totals: Type.Array(Type.Object({ currency: Type.String(), deduction_minor: Minor, paychecks: Count })),
  lines: Type.Array(
    Type.Object({
      organization_id: Type.String({ format: 'uuid' }),
      job_id: Type.String({ format: 'uuid' }),
      external_employee_id: Type.Union([Type.String(), Type.Null()]),
      external_primary_identifier: Type.String(),
      person_id: Type.String({ format: 'uuid' }),
      first_name: Type.String(),
      last_name: Type.String(),
      paycheck_id: Type.String({ format: 'uuid' }),
      paycheck_status: Type.String({
        description: 'ESTIMATED: the period is open and the deduction may grow.',
      }),
      period_start: Type.String({ format: 'date' }),
      period_end: Type.String({ format: 'date' }),
      pay_date: Type.String({ format: 'date' }),
      currency: Type.String(),
      deductions: Type.Record(Type.String(), Minor),
      deduction_minor: Minor,
      advances: Count,
    }),
  ),
});

const ReturnsQuery = Type.Object(
  {
    'filter[organization]': filter(
      'The employer’s id: its items and totals only. Every employer’s when absent.',
    ),
    ...pageQueryProperties(RETURNS_PAGE_LINES),
  },
  { additionalProperties: false },
);

const Decimal = Type.String({ description: 'The amount as the currency writes it: 300.00.' });

const ReturnsPayableResource = Type.Object({
  type: Type.Literal('returns_payable'),
  id: Type.String({ format: 'uuid', description: 'The paycheck’s id (PAYOUT) or the advance’s (ADVANCE).' }),
  attributes: Type.Object({
    kind: Type.Union([Type.Literal('PAYOUT'), Type.Literal('ADVANCE')], {
      description:
        'PAYOUT: a payday payout the bank returned (or the rail refused). ADVANCE: an advance returned after the ' +
        'paycheck that funded it was paid, its whole amount (fee included).',
    }),
    person_id: Type.String({ format: 'uuid' }),
    email: Type.Union([Type.String(), Type.Null()]),
    organization_id: Type.String({ format: 'uuid' }),
    currency: Type.String(),
    amount_minor: Minor,
    amount: Decimal,
    return_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'The ACH return code (R01…) or the rail’s reason.',
    }),
    returned_at: Type.String({ format: 'date-time' }),
  }),
});

const ReturnsMeta = Type.Object({
  organization_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  organization_name: Type.Union([Type.String(), Type.Null()]),
  reconciled: Type.Boolean({
    description:
      'Every total equals the balance of the ledger’s RETURNS_PAYABLE account of its organization and currency.',
  }),
  totals: Type.Array(
    Type.Object({
      organization_id: Type.String({ format: 'uuid' }),
      currency: Type.String(),
      items: Count,
      amount_minor: Minor,
      amount: Decimal,
      ledger_minor: Type.Integer({ description: 'The balance of the ledger’s RETURNS_PAYABLE account.' }),
      ledger: Decimal,
      differs: Type.Boolean(),
    }),
    { description: `Of every item (not of the page); those differing first; at most ${RETURNS_TOTALS_MAX}.` },
  ),
  totals_truncated: Type.Boolean({
    description: `More than ${RETURNS_TOTALS_MAX} organization/currency pairs hold money: filter by organization.`,
  }),
});

const RepaymentAttributes = Type.Object({
  kind: ReturnsPayableResource.properties.attributes.properties.kind,
  person_id: Type.String({ format: 'uuid' }),
  organization_id: Type.String({ format: 'uuid' }),
  currency: Type.String(),
  amount_minor: Minor,
  amount: Decimal,
  reference: Type.String({ description: 'The operator’s record of the payment, as given (trimmed).' }),
  repaid_at: Type.String({ format: 'date-time' }),
});

const RepaymentResource = Type.Object({
  type: Type.Literal('return_repayments'),
  id: Type.String({
    format: 'uuid',
    description: 'The item’s id: its paycheck (PAYOUT) or transfer (ADVANCE).',
  }),
  attributes: RepaymentAttributes,
});

const query = (request: { query: unknown }, name: string) =>
  (request.query as Record<string, string | undefined>)[`filter[${name}]`];
const atFilter = (field: string | undefined) => ({ parameter: `filter[${field ?? 'state'}]` });

/** The regulators' per-state report and the employers' remittance, as JSON:API or CSV (what `ewa reports` does). */
export const adminReportRoutes: FastifyPluginAsync<{ db: Db; baseUrl: string; now: () => Date }> = async (
  app,
  { db, baseUrl, now },
) => {
  const stateOf = (request: { query: unknown }) =>
    pointingAt(atFilter, async () => {
      const input = readStateReportInput({
        state: query(request, 'state'),
        year: query(request, 'year'),
        quarter: query(request, 'quarter'),
        half: query(request, 'half'),
        from: query(request, 'from'),
        to: query(request, 'to'),
      });
      return stateReport(db, input.state, input.period);
    });
  const remittanceOf = (request: { query: unknown }) =>
    pointingAt(
      (field) => ({ parameter: `filter[${field ?? 'organization'}]` }),
      async () => {
        const input = readRemittanceInput({
          organization: query(request, 'organization'),
          pay_date: query(request, 'pay_date'),
          from: query(request, 'from'),
          to: query(request, 'to'),
        });
        return remittanceReport(db, input.organizationId, input.from, input.to);
      },
    );
  const csvAnswer = { 200: Type.String({ description: 'CSV (RFC 4180), a header line first.' }) };
  const jsonAnswer = (type: string, attributes: TSchema) => ({
    200: Type.Object({
      data: Type.Object({ type: Type.Literal(type), id: Type.String(), attributes }),
    }),
  });
  const stateDescription =
    'The figures a state regulator asks for over a period: advances (by the person’s state when each was made), ' +
    'unique users, amounts, fees, tips (none), failed and returned advances apart, users with 12 or more advances, ' +
    'and complaints opened, answered and closed. Days are UTC days.';
  const remittanceDescription =
    'Per paycheck of the employer paid on the day (or days) asked, in its time zone, that carries a deduction: ' +
    'what its payroll must deduct and remit (the advances it funded), with the count of advances. Only for an ' +
    'employer that runs payroll itself (payday_payout EMPLOYER); another is refused, naming filter[organization].';

  app.get(
    '/admin/reports/state',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminStateReport',
        tags,
        summary: 'A state regulator’s report for a period',
        description: stateDescription,
        security: OPERATOR.openApi,
        querystring: StateQuery,
        response: {
          ...jsonAnswer('state_reports', StateReportAttributes),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const report = await stateOf(request);
      const id = `${report.state}-${report.period.from}-${report.period.to}`;
      return { data: { type: 'state_reports', id, attributes: report } };
    },
  );

  app.get(
    '/admin/reports/state.csv',
    {
      config: { security: OPERATOR.config, mediaType: CSV },
      schema: {
        operationId: 'adminStateReportCsv',
        tags,
        summary: 'A state regulator’s report for a period, as CSV',
        description: `${stateDescription} One line per currency.`,
        security: OPERATOR.openApi,
        querystring: StateQuery,
        response: { ...csvAnswer, ...errorResponses(400, 401, 403, 406, 500) },
      },
    },
    async (request, reply) => {
      const report = await stateOf(request);
      return reply
        .header(
          'content-disposition',
          `attachment; filename="state-${report.state}-${report.period.from}.csv"`,
        )
        .send(stateReportCsv(report));
    },
  );

  app.get(
    '/admin/reports/remittance',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminRemittanceReport',
        tags,
        summary: 'The deductions each paycheck of an employer carries on its payday',
        description: remittanceDescription,
        security: OPERATOR.openApi,
        querystring: RemittanceQuery,
        response: {
          ...jsonAnswer('remittance_reports', RemittanceAttributes),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async (request) => {
      const report = await remittanceOf(request);
      const id = `${report.organization_id}-${report.from}-${report.to}`;
      return { data: { type: 'remittance_reports', id, attributes: report } };
    },
  );

  app.get(
    '/admin/reports/remittance.csv',
    {
      config: { security: OPERATOR.config, mediaType: CSV },
      schema: {
        operationId: 'adminRemittanceReportCsv',
        tags,
        summary: 'The deductions each paycheck of an employer carries on its payday, as CSV',
        description: `${remittanceDescription} One line per paycheck.`,
        security: OPERATOR.openApi,
        querystring: RemittanceQuery,
        response: { ...csvAnswer, ...errorResponses(400, 401, 403, 406, 500) },
      },
    },
    async (request, reply) => {
      const report = await remittanceOf(request);
      return reply
        .header('content-disposition', `attachment; filename="remittance-${report.from}.csv"`)
        .send(remittanceCsv(report));
    },
  );

  app.get(
    '/admin/reports/returns',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminReturnsReport',
        tags,
        summary: 'What is owed back to workers: returned payday payouts and advances returned after payday',
        description:
          'One item per returned payout or advance whose money the ledger holds in RETURNS_PAYABLE, owed to the ' +
          'worker again, oldest return first; meta.totals sums them per organization and currency beside the ' +
          'ledger’s RETURNS_PAYABLE balance (what `ewa reports returns` prints). Nothing here pays the money.',
        security: OPERATOR.openApi,
        ...PAGINATED,
        querystring: ReturnsQuery,
        response: {
          200: Type.Object({
            data: Type.Array(ReturnsPayableResource),
            meta: ReturnsMeta,
            links: pageLinksSchema(),
          }),
          ...errorResponses(400, 401, 403, 404, 406, 500),
        },
      },
    },
    async (request) => {
      const organizationText = query(request, 'organization');
      if (organizationText !== undefined && !isUuid(organizationText))
        throw new AppError('INVALID_PARAMETERS', {
          detail: `filter[organization] must be a UUID (got ${JSON.stringify(organizationText.slice(0, 40))}).`,
          source: { parameter: 'filter[organization]' },
        });
      const page = readPage(request.query as Record<string, unknown>, RETURNS_PAYABLE_ORDER, {
        defaultSize: RETURNS_PAGE_LINES,
      });
      const organization =
        organizationText === undefined ? undefined : await namedOrganization(db, organizationText);
      // The page and the totals of one snapshot.
      const { rows, totals } = await db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (tx) => ({
          totals: await returnsPayableTotals(tx, organization?.id),
          rows: await returnsPayablePage(tx, organization?.id, page),
        }));
      const { items, next } = pageOf(
        rows,
        page,
        RETURNS_PAYABLE_ORDER,
        { baseUrl, path: '/admin/reports/returns', requestUrl: request.url },
        (row) => [row[PAGE_KEY], row.id],
      );
      return {
        data: items.map(({ id, [PAGE_KEY]: _key, ...attributes }) => ({
          type: 'returns_payable',
          id,
          attributes,
        })),
        meta: {
          organization_id: organization?.id ?? null,
          organization_name: organization?.name ?? null,
          ...totals,
        },
        ...pageLinks(next),
      };
    },
  );
  app.post(
    '/admin/reports/returns/:item_id/repayment',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminRecordReturnRepaid',
        tags,
        summary: 'Record that an item owed back was paid to its worker by other means',
        description:
          'The item (a line of GET /admin/reports/returns) leaves RETURNS_PAYABLE whole, by a RETURN_REPAID ledger ' +
          'movement against provider funding, and leaves the report (what `ewa returns repaid` does). An item is ' +
          'recorded once: again is 400 INVALID_RESOURCE_STATE. Nothing is sent to the worker or a bank.',
        security: OPERATOR.openApi,
        params: ResourceIdParam('item_id'),
        body: Type.Object({
          data: Type.Object({
            type: Type.Literal('return_repayments'),
            attributes: Type.Object({
              reference: Type.String({
                minLength: 1,
                maxLength: REPAID_REFERENCE_MAX,
                description: 'Your record of the payment (a wire or check number).',
              }),
            }),
          }),
        }),
        response: {
          200: Type.Object({ data: RepaymentResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { item_id: itemId } = request.params as { item_id: string };
      if (!isUuid(itemId))
        throw new AppError('RECORD_NOT_FOUND', {
          detail: `Nothing owed back has id ${itemId.slice(0, 40)}.`,
        });
      const { data } = request.body as { data: { attributes: { reference: string } } };
      // A ledger of its own: nothing is remembered across a sandbox reset.
      const { id, ...repaid } = await recordReturnRepaid(db, new SystemLedger(db), {
        id: itemId.toLowerCase(),
        reference: data.attributes.reference,
        now: now(),
      });
      return {
        data: {
          type: 'return_repayments',
          id,
          attributes: { ...repaid, amount: decimalAmount(repaid.amount_minor, repaid.currency) },
        },
      };
    },
  );
};
