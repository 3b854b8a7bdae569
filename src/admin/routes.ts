import type { FastifyPluginAsync } from 'fastify';
import type { Database, Db } from '../db/database.ts';
import type { EarningsRecorder } from '../money/earnings/earnings-recorder.ts';
import { utf8Body } from '../platform/utf8-body.ts';
import type { SandboxControls } from '../sandbox/sandbox-controls.ts';
import { adminComplaintRoutes } from './complaint-routes.ts';
import { adminComplianceRoutes } from './compliance-routes.ts';
import { adminDisclosureRoutes } from './disclosure-routes.ts';
import { adminEarningsRoutes } from './earnings-routes.ts';
import { adminInvitationRoutes } from './invitation-routes.ts';
import { adminJobRoutes } from './job-routes.ts';
import { adminOrganizationRoutes } from './organization-routes.ts';
import { adminOverpaymentRoutes } from './overpayment-routes.ts';
import { adminReportRoutes } from './report-routes.ts';
import { adminSandboxRoutes } from './sandbox-routes.ts';

/**
 * The operator API on the API listener, under /admin: what `ewa orgs`, `ewa people import` and `invite`, `ewa jobs`,
 * `ewa earnings import`, `ewa sandbox`, `ewa compliance`, `ewa disclosures`, `ewa complaints`, `ewa reports` and
 * `ewa overpayments` do, for a client token with admin:operator. It speaks JSON:API like /rest;
 * only the roster and earnings uploads read text/csv, whose parser lives in this plugin alone and is bounded by the
 * server's body limit.
 */
export const adminRoutes: FastifyPluginAsync<{
  db: Db;
  /** How a roster import holds its organization's turn (operator/roster-import-turn.ts). */
  databaseKind: Database['kind'];
  baseUrl: string;
  now: () => Date;
  earnings: EarningsRecorder;
  sandbox: SandboxControls;
}> = async (app, options) => {
  // Read as UTF-8 or refused (400; another charset is 415), never with bytes silently replaced.
  app.addContentTypeParser(
    'text/csv',
    { parseAs: 'buffer' },
    utf8Body((_request, body, done) => done(null, body)),
  );
  await app.register(adminOrganizationRoutes, options);
  await app.register(adminJobRoutes, options);
  await app.register(adminInvitationRoutes, options);
  await app.register(adminEarningsRoutes, options);
  await app.register(adminSandboxRoutes, options);
  await app.register(adminComplianceRoutes, options);
  await app.register(adminDisclosureRoutes, options);
  await app.register(adminComplaintRoutes, options);
  await app.register(adminReportRoutes, options);
  await app.register(adminOverpaymentRoutes, options);
};
