import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import {
  EARNINGS_PROBLEMS_LISTED_MAX,
  EARNINGS_RECORD_CHARS_MAX,
  EARNINGS_ROWS_MAX,
  earningsImportAttributes,
  importEarnings,
} from '../money/earnings/earnings-import.ts';
import type { EarningsRecorder } from '../money/earnings/earnings-recorder.ts';
import { EARNINGS_COLUMNS } from '../money/earnings/earnings-row.ts';
import { OneOf, ResourceIdParam, UuidString } from '../platform/resource-schemas.ts';
import { errorResponses } from '../platform/schemas.ts';
import { pointingAt } from './input-errors.ts';
import { OPERATOR } from './schemas.ts';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const EarningsImportResource = Type.Object({
  type: Type.Literal('earnings_imports'),
  id: UuidString,
  attributes: Type.Object({
    organization_id: UuidString,
    organization_name: Type.String(),
    currency: Type.String({ description: "The organization's currency: that of every amount." }),
    lines: Count('Data lines read: recorded + duplicates + rejected.'),
    recorded: Count('Lines recorded as new earnings.'),
    duplicates: Count('Lines whose row_id their job already had (this file or before): not recorded again.'),
    rejected: Count('Lines not recorded; nothing of them was written.'),
    rejected_lines: Type.Array(
      Type.Object({
        line: Type.Integer({ minimum: 1 }),
        field: Type.Union([Type.String(), Type.Null()], {
          description: 'The column at fault; null: the line.',
        }),
        message: Type.String(),
      }),
      { description: `The first ${EARNINGS_PROBLEMS_LISTED_MAX} rejected lines, by line number.` },
    ),
    rejected_lines_truncated: Type.Boolean({
      description: 'True when more lines were rejected than listed.',
    }),
    recorded_minor: Count('Pay recorded by this import, in minor units.'),
    credited_minor: Count("What became accessible in the workers' earnings balances, in minor units."),
  }),
});

const COLUMNS = Object.entries(EARNINGS_COLUMNS)
  .map(
    ([name, column]) => `\`${name}\` (${column.required ? 'required' : 'optional'}): ${column.description}`,
  )
  .join('; ');

/** The employer's earnings (shifts), posted as CSV by the operator: what `ewa earnings import` does. */
export const adminEarningsRoutes: FastifyPluginAsync<{
  db: Db;
  now: () => Date;
  earnings: EarningsRecorder;
}> = async (app, { db, now, earnings: recorder }) => {
  app.post(
    '/admin/organizations/:organization_id/earnings',
    {
      config: { security: OPERATOR.config, requestMediaType: 'text/csv' },
      schema: {
        operationId: 'adminImportEarnings',
        tags: ['Operator'],
        summary: "Record an employer's earnings (shifts) from CSV",
        description:
          "The body is text/csv within the server's body limit (EWA_BODY_LIMIT_BYTES): a header line " +
          '`row_id,primary_identifier,date,hours,amount` (columns in any order, any case; any other column ' +
          `refuses the file with 400), then a line per shift. Columns: ${COLUMNS}. Each line gives hours or ` +
          'amount, not both. Each line is recorded on the paycheck of its job and pay period, and the newly ' +
          "accessible share is credited to the worker's earnings balance; 1000 lines are recorded per " +
          'transaction. A line whose job already has its row_id is a duplicate: counted, not recorded again, so ' +
          'sending the same file twice records each line once. A wrong line (a bad value, a job unknown or not ' +
          'ACTIVATED, hours for a job not paid HOURLY, a pay period already closed by payroll) is listed with its ' +
          'number and field and nothing of it is written; so is a line of a pay period whose deposit day is ' +
          "before today in the organization's time zone, unless allow_backdated=true. The other lines are " +
          `recorded, and the answer is 200 with the counts. At most ${EARNINGS_ROWS_MAX} lines of ${EARNINGS_RECORD_CHARS_MAX} characters; at ` +
          `most ${EARNINGS_PROBLEMS_LISTED_MAX} rejected lines are listed. An empty body or a wrong header is 400 ` +
          'and writes nothing.',
        security: OPERATOR.openApi,
        consumes: ['text/csv'],
        params: ResourceIdParam('organization_id'),
        querystring: Type.Object(
          {
            allow_backdated: Type.Optional(
              OneOf(['true', 'false'], {
                description:
                  "true records a line of a pay period whose deposit day is before today (the organization's " +
                  "time zone) as any other: on that period's paycheck while it is ESTIMATED (made if the job " +
                  'has none), its accessible share credited at once, the rest paid by the next payroll run, after ' +
                  'the deposit day it missed; a paycheck payroll has closed still rejects it. false, the default, ' +
                  'rejects such a line on its date.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        body: Type.String({ description: 'The earnings, UTF-8 CSV with a header line.' }),
        response: {
          200: Type.Object({ data: EarningsImportResource }),
          ...errorResponses(400, 401, 403, 404, 406, 415, 500),
        },
      },
    },
    async (request) => {
      const { organization_id: id } = request.params as { organization_id: string };
      const { allow_backdated: allowBackdated } = request.query as { allow_backdated?: 'true' | 'false' };
      const result = await pointingAt(
        () => ({ pointer: '' }),
        // An empty body reaches here as no body at all; the import then says the file is empty.
        () =>
          importEarnings(db, recorder, {
            organizationId: id,
            source: [typeof request.body === 'string' ? request.body : ''],
            now: now(),
            allowBackdated: allowBackdated === 'true',
          }),
      );
      return {
        data: {
          type: 'earnings_imports' as const,
          id: randomUUID(),
          attributes: earningsImportAttributes(result),
        },
      };
    },
  );
};
