import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../platform/schemas.ts';
import type { SandboxControls, SandboxTime } from '../sandbox/sandbox-controls.ts';
import { advanceTargetOf, SANDBOX_ADVANCE_DAYS_MAX } from '../sandbox/sandbox-target.ts';
import { pointingAt } from './input-errors.ts';
import { OPERATOR } from './schemas.ts';

const tags = ['Operator'];
const UAT_ONLY = ' UAT only: in production it is 403 FORBIDDEN.';

const ClockAttributes = Type.Object({
  now: Type.String({ format: 'date-time', description: "The sandbox's time." }),
  real_now: Type.String({ format: 'date-time', description: 'Real time, which sign-in and tokens keep.' }),
  offset_ms: Type.Integer({ minimum: 0, description: 'How far the sandbox is ahead of real time.' }),
});

const SandboxClockResource = Type.Object({
  type: Type.Literal('sandbox_clocks'),
  id: Type.Literal('sandbox'),
  attributes: ClockAttributes,
});

const AdvanceMeta = Type.Object({
  advanced_from: Type.String({ format: 'date-time' }),
  advanced_to: Type.String({ format: 'date-time' }),
  steps: Type.Integer({
    minimum: 1,
    description: 'The instants the scheduled jobs ran at: each quarter hour.',
  }),
  jobs: Type.Record(Type.String(), Type.Record(Type.String(), Type.Number()), {
    description:
      "Per scheduled job: `runs`, and the figures of its reports added up (settle-due's settled, failed, " +
      "deposited, returned; payroll's closed, paid, held; salary-accrual's creditedMinor; …).",
  }),
});

const AdvanceBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('sandbox_clocks'),
        id: Type.Optional(Type.Literal('sandbox')),
        attributes: Type.Object(
          {
            days: Type.Optional(
              Type.Integer({ description: `Days to move forward: 1 to ${SANDBOX_ADVANCE_DAYS_MAX}.` }),
            ),
            to: Type.Optional(
              Type.String({
                maxLength: 40,
                description:
                  'Where to move to: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC unless an offset such as -05:00 ' +
                  `follows; later than the sandbox's time, within ${SANDBOX_ADVANCE_DAYS_MAX} days of it.`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const ResetBody = Type.Object(
  {
    data: Type.Object({ type: Type.Literal('sandbox_resets') }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

const SandboxResetResource = Type.Object({
  type: Type.Literal('sandbox_resets'),
  id: Type.String({ format: 'uuid' }),
  attributes: Type.Object({
    demo: Type.Union([Type.Literal('SEEDED'), Type.Literal('BEING_MADE')], {
      description:
        "BEING_MADE: another process is making the demo data's money history; it is there shortly.",
    }),
    clock: ClockAttributes,
  }),
});

function clockAttributes(time: SandboxTime) {
  return { now: time.now.toISOString(), real_now: time.realNow.toISOString(), offset_ms: time.offsetMs };
}

/** The sandbox's clock and reset: what `ewa sandbox clock|advance|reset` do. */
export const adminSandboxRoutes: FastifyPluginAsync<{ sandbox: SandboxControls }> = async (
  app,
  { sandbox },
) => {
  const clockResource = (time: SandboxTime) => ({
    type: 'sandbox_clocks' as const,
    id: 'sandbox' as const,
    attributes: clockAttributes(time),
  });

  app.get(
    '/admin/sandbox/clock',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminGetSandboxClock',
        tags,
        summary: "The sandbox's time",
        description:
          'Real time plus the offset that advancing moved it by. The money work of every process on the ' +
          `database follows it (transfers, earnings, settlement, payday, the scheduler); sign-in and tokens keep real time.${UAT_ONLY}`,
        security: OPERATOR.openApi,
        response: {
          200: Type.Object({ data: SandboxClockResource }),
          ...errorResponses(400, 401, 403, 406, 500),
        },
      },
    },
    async () => ({ data: clockResource(await sandbox.time()) }),
  );

  app.post(
    '/admin/sandbox/clock',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminAdvanceSandboxClock',
        tags,
        summary: "Move the sandbox's time forward",
        description:
          'Body `{"data":{"type":"sandbox_clocks","attributes":{"days":3}}}`, or `"to":"2026-12-01"` instead of ' +
          "days. Walks from the sandbox's time to the target a quarter hour at a time, running at each step what the " +
          'scheduler runs at that instant, in its order (settlement and rail returns, the ACH files, salary accrual and the ' +
          "accessible-share credit, the demo workers' shifts, payday, the idempotency purge); each run is claimed once, " +
          'as the scheduler claims it. Answers when done (a month takes seconds) with the new time and what ran. ' +
          'Another advance or reset running meanwhile is 503 with nothing done; a job that fails stops the walk (500) ' +
          `with the clock at the last step done, and the next advance goes on from there.${UAT_ONLY}`,
        security: OPERATOR.openApi,
        body: AdvanceBody,
        response: {
          200: Type.Object({ data: Type.Object({ ...SandboxClockResource.properties, meta: AdvanceMeta }) }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async (request) => {
      sandbox.assertAvailable();
      const { attributes } = (request.body as { data: { attributes: { days?: unknown; to?: unknown } } })
        .data;
      const label = (field: string) => field;
      const report = await pointingAt(
        (field) => ({ pointer: `/data/attributes${field ? `/${field}` : ''}` }),
        () =>
          sandbox.advance(advanceTargetOf(attributes, label), {
            label,
            logger: { error: (object, message) => request.log.error(object, message) },
          }),
      );
      return {
        data: {
          ...clockResource(await sandbox.time()),
          meta: {
            advanced_from: report.from.toISOString(),
            advanced_to: report.to.toISOString(),
            steps: report.steps,
            jobs: report.jobs,
          },
        },
      };
    },
  );

  app.post(
    '/admin/sandbox/reset',
    {
      config: { security: OPERATOR.config },
      schema: {
        operationId: 'adminResetSandbox',
        tags,
        summary: 'Put the sandbox back to its demo data',
        description:
          'Body `{"data":{"type":"sandbox_resets"}}`. Empties the employers, people, jobs, accounts, cards, ' +
          'earnings, paychecks, transfers, ledger, idempotency answers and scheduled runs, writes the demo data ' +
          'again (its history as of now) and sets the clock back to real time; the emptying and the new demo ' +
          'records are one transaction. OAuth clients and their links to the demo employers, signing keys, tokens ' +
          `and webhook endpoints stay. Another advance or reset running meanwhile is 503 with nothing done.${UAT_ONLY}`,
        security: OPERATOR.openApi,
        body: ResetBody,
        response: {
          200: Type.Object({ data: SandboxResetResource }),
          ...errorResponses(400, 401, 403, 406, 415, 500),
        },
      },
    },
    async () => {
      sandbox.assertAvailable();
      const report = await sandbox.reset();
      return {
        data: {
          type: 'sandbox_resets' as const,
          id: randomUUID(),
          attributes: { demo: report.demo, clock: clockAttributes(await sandbox.time()) },
        },
      };
    },
  );
};
