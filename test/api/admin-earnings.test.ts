import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import { accountBalancesMinor } from '../../src/ledger/balances.ts';
import { checkLedgerInvariants } from '../../src/ledger/invariants.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { createOrganization, createWorker } from '../helpers/factories.ts';
import { operatorClient } from '../helpers/operator.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';

const JSON_API = 'application/vnd.api+json';
const HEADER = 'row_id,primary_identifier,date,hours,amount';

/** The operator's client and earnings uploads made with it (or with another token). */
async function operator(t: TestContext, env: Record<string, string> = {}, now?: Date) {
  const app = await buildTestApp(t, env, now ? { now: () => now } : undefined);
  const { token } = await operatorClient(app);
  const upload = (
    organizationId: string,
    csv: string,
    options: { contentType?: string; token?: string; query?: string } = {},
  ) =>
    app.api.inject({
      method: 'POST',
      url: `/admin/organizations/${organizationId}/earnings${options.query ?? ''}`,
      headers: {
        authorization: `Bearer ${options.token ?? token}`,
        'content-type': options.contentType ?? 'text/csv',
      },
      payload: csv,
    });
  return { app, upload };
}

/** A calendar day `days` from the real today (UTC): the admin routes are given no clock, so today is the server's. */
function day(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

async function primaryIdentifier(app: Awaited<ReturnType<typeof operator>>['app'], jobId: string) {
  return (
    await app.database.db
      .selectFrom('jobs')
      .select('external_primary_identifier')
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow()
  ).external_primary_identifier;
}

function assertError(
  response: {
    statusCode: number;
    headers: Record<string, unknown>;
    json(): { errors: Record<string, unknown>[] };
  },
  status: number,
  code: string,
  detail?: RegExp,
) {
  assert.equal(response.statusCode, status, JSON.stringify(response.json()));
  assert.equal(response.headers['content-type'], JSON_API);
  const [error] = response.json().errors;
  assert.equal(error!.code, code);
  if (detail) assert.match(String(error!.detail), detail);
}

test('POST /admin/organizations/{id}/earnings records text/csv, lists bad lines, and is idempotent', async (t) => {
  const { app, upload } = await operator(t);
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const inactive = await createWorker(app, organizationId, { activationStatus: 'DEACTIVATED' });
  const job = await primaryIdentifier(app, worker.jobId);
  const csv = [
    'Date,Primary_Identifier,Row_ID,Hours,Amount',
    `${day(-2)},${job},E-1,6.5,`,
    `${day(-2)},${job},E-2,,80.00`,
    `${day(-2)},${await primaryIdentifier(app, inactive.jobId)},E-3,1,`,
    `${day(-2)},${job},E-4,,12.345`,
    `${day(-2)},${job},E-1,6.5,`,
  ].join('\n');
  const first = await upload(organizationId, csv);
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.headers['content-type'], JSON_API);
  const { data } = first.json();
  assert.equal(data.type, 'earnings_imports');
  // 6.5 h × 20.00 + 80.00 = 210.00 gross; 52.50 withheld; net 157.50; 78.75 accessible.
  assert.deepEqual(data.attributes, {
    organization_id: organizationId,
    organization_name: data.attributes.organization_name,
    currency: 'USD',
    lines: 5,
    recorded: 2,
    duplicates: 1,
    rejected: 2,
    rejected_lines: [
      {
        line: 4,
        field: 'primary_identifier',
        message: data.attributes.rejected_lines[0].message,
      },
      { line: 5, field: 'amount', message: data.attributes.rejected_lines[1].message },
    ],
    rejected_lines_truncated: false,
    recorded_minor: 21_000,
    credited_minor: 7_875,
  });
  assert.match(
    data.attributes.rejected_lines[0].message,
    /is DEACTIVATED; earnings are recorded for ACTIVATED jobs/,
  );
  const { db } = app.database;
  const paycheck = await db
    .selectFrom('paychecks')
    .select(['gross_earnings_minor', 'employer_withholdings_minor', 'net_earnings_minor', 'status'])
    .where('job_id', '=', worker.jobId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(paycheck, {
    gross_earnings_minor: 21_000,
    employer_withholdings_minor: 5_250,
    net_earnings_minor: 15_750,
    status: 'ESTIMATED',
  });
  const balance = async () =>
    (await accountBalancesMinor(db, [worker.balanceAccountId!])).get(worker.balanceAccountId!);
  assert.equal(await balance(), 7_875);

  const again = (await upload(organizationId, csv)).json().data.attributes;
  assert.deepEqual(
    [again.recorded, again.duplicates, again.rejected, again.credited_minor],
    [0, 3, 2, 0],
    'the same file again records nothing',
  );
  assert.equal(await balance(), 7_875);
  assert.deepEqual(await checkLedgerInvariants(db), []);
});

test('POST earnings: a wrong header or empty body is 400, another media type 415, too large 413, unknown organization 404, no operator 403', async (t) => {
  const { app, upload } = await operator(t, { EWA_BODY_LIMIT_BYTES: '4096' });
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const job = await primaryIdentifier(app, worker.jobId);
  assertError(
    await upload(organizationId, `${HEADER},shift_notes\nE-1,${job},${day(-2)},1,,x\n`),
    400,
    'INVALID_PARAMETERS',
    /line 1: "shift_notes" is not an earnings column/,
  );
  assertError(await upload(organizationId, ''), 400, 'INVALID_PARAMETERS', /earnings file is empty/);
  assertError(
    await upload(organizationId, `${HEADER}\nE-1,${job},${day(-2)},1,\n`, { contentType: JSON_API }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  const large = [HEADER, ...Array.from({ length: 200 }, (_, i) => `E-${i},${job},${day(-2)},1,`)].join('\n');
  assert.ok(Buffer.byteLength(large) > 4096);
  assertError(await upload(organizationId, large), 413, 'PAYLOAD_TOO_LARGE');
  assertError(await upload(randomUUID(), `${HEADER}\nE-1,${job},${day(-2)},1,\n`), 404, 'RECORD_NOT_FOUND');
  const partner = await createTestClient(app, { organizationIds: [organizationId] });
  const partnerToken = await clientToken(app, ['client:admin', 'client:lookup'], partner);
  assertError(
    await upload(organizationId, `${HEADER}\nE-1,${job},${day(-2)},1,\n`, { token: partnerToken }),
    403,
    'FORBIDDEN',
    /client token with admin:operator/,
  );
  const anonymous = await app.api.inject({
    method: 'POST',
    url: `/admin/organizations/${organizationId}/earnings`,
    headers: { 'content-type': 'text/csv' },
    payload: `${HEADER}\n`,
  });
  assertError(anonymous, 401, 'INVALID_TOKEN');
  const broken = await upload(
    organizationId,
    `${HEADER}\nE-1,${job},${day(-2)},1,\n"E-2,${job},${day(-2)},1,\n`,
  );
  assert.equal(broken.statusCode, 200);
  const result = broken.json().data.attributes;
  assert.equal(result.recorded, 1, 'the lines before the broken one are recorded');
  assert.deepEqual([result.rejected_lines[0].line, result.rejected_lines[0].field], [3, null]);
  assert.match(result.rejected_lines[0].message, /not valid CSV from this line on/);
  const earnings = await app.database.db
    .selectFrom('earnings')
    .select('external_id')
    .where('job_id', '=', worker.jobId)
    .execute();
  assert.deepEqual(
    earnings.map((row) => row.external_id),
    ['E-1'],
  );
});

test('the earnings upload is in the OpenAPI document under Operator, taking text/csv', async (t) => {
  const { app } = await operator(t);
  const document = (await app.api.inject({ url: '/rest/openapi.json' })).json();
  const operation = document.paths['/admin/organizations/{organization_id}/earnings'].post;
  assert.equal(operation.operationId, 'adminImportEarnings');
  assert.deepEqual(operation.tags, ['Operator']);
  assert.deepEqual(operation.security, [{ oauth_client_credentials_token: ['admin:operator'] }]);
  assert.deepEqual(Object.keys(operation.requestBody.content), ['text/csv']);
  assert.match(operation.description, /`row_id,primary_identifier,date,hours,amount`/);
  assert.match(operation.description, /`hours` \(optional\): hours worked, above 0 and at most 24/);
  const query = operation.parameters.filter((parameter: { in: string }) => parameter.in === 'query');
  assert.deepEqual(
    query.map((parameter: { name: string; required?: boolean }) => [
      parameter.name,
      parameter.required ?? false,
    ]),
    [['allow_backdated', false]],
  );
  assert.deepEqual(
    query[0].schema.anyOf.flatMap((value: { enum: string[] }) => value.enum),
    ['true', 'false'],
  );
  assert.match(JSON.stringify(query[0]), /a line of a pay period whose deposit day is before today/);
});

test('POST earnings: a line of a pay period already deposited is rejected on its date unless allow_backdated=true', async (t) => {
  // Friday 2026-03-20 in New York: the period 2026-03-02 to 03-15 is deposited today; 2026-02-16 to 03-01 was on 03-06.
  const { app, upload } = await operator(t, {}, new Date('2026-03-20T16:00:00.000Z'));
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const job = await primaryIdentifier(app, worker.jobId);
  const csv = [
    HEADER,
    `B-1,${job},2026-03-13,8,`,
    `B-2,${job},2026-03-01,8,`,
    `B-3,${job},2025-06-02,,100.00`,
  ].join('\n');
  const { db } = app.database;
  const stored = async () => ({
    earnings: (
      await db
        .selectFrom('earnings')
        .select('external_id')
        .where('job_id', '=', worker.jobId)
        .orderBy('external_id')
        .execute()
    ).map((row) => row.external_id),
    paychecks: (await db.selectFrom('paychecks').select('id').where('job_id', '=', worker.jobId).execute())
      .length,
  });

  for (const [query, parameter] of [
    ['?allow_backdated=yes', 'allow_backdated'],
    ['?allow_backdated=true&backdate=1', 'backdate'],
  ]) {
    const refused = await upload(organizationId, csv, { query });
    assertError(refused, 400, 'INVALID_PARAMETERS');
    assert.deepEqual(refused.json().errors[0].source, { parameter });
  }
  assert.deepEqual(await stored(), { earnings: [], paychecks: 0 }, 'a bad query writes nothing');

  for (const query of ['', '?allow_backdated=false']) {
    const answer = await upload(organizationId, csv, { query });
    assert.equal(answer.statusCode, 200, answer.body);
    const result = answer.json().data.attributes;
    assert.deepEqual(
      [result.recorded, result.duplicates, result.rejected],
      query === '' ? [1, 0, 2] : [0, 1, 2],
    );
    assert.deepEqual(
      result.rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
      [
        [3, 'date'],
        [4, 'date'],
      ],
    );
    assert.match(
      result.rejected_lines[0].message,
      /^date: the pay period of 2026-03-01 \(2026-02-16 to 2026-03-01\) was due to be deposited on 2026-03-06, before today \(2026-03-20\); .*allow_backdated=true/,
    );
  }
  assert.deepEqual(await stored(), { earnings: ['B-1'], paychecks: 1 }, 'nothing of the backdated lines');

  const allowed = await upload(organizationId, csv, { query: '?allow_backdated=true' });
  assert.equal(allowed.statusCode, 200, allowed.body);
  const result = allowed.json().data.attributes;
  assert.deepEqual([result.recorded, result.duplicates, result.rejected], [2, 1, 0]);
  assert.deepEqual(await stored(), { earnings: ['B-1', 'B-2', 'B-3'], paychecks: 3 });
  assert.deepEqual(await checkLedgerInvariants(db), []);
});

test('POST earnings: a job has at most 24 hours a day, across the lines of a file and what is recorded', async (t) => {
  // Friday 2026-03-20 in New York: the period 2026-03-02 to 03-15 is deposited today, so 03-12 and 03-13 are open.
  const { app, upload } = await operator(t, {}, new Date('2026-03-20T16:00:00.000Z'));
  const organizationId = await createOrganization(app);
  const worker = await createWorker(app, organizationId);
  const other = await createWorker(app, organizationId);
  const job = await primaryIdentifier(app, worker.jobId);
  const otherJob = await primaryIdentifier(app, other.jobId);
  const { db } = app.database;
  const hoursOn = async (jobId: string, day: string) =>
    Number(
      (
        await sql<{ hours: string | null }>`select sum(e.hours_hundredths) as hours from earnings e
          where e.job_id = ${jobId} and e.worked_on = ${day}
            and not exists (select 1 from earnings r where r.reverses_earning_id = e.id)`.execute(db)
      ).rows[0]!.hours ?? 0,
    ) / 100;
  const lines = async (csv: string[]) => {
    const answer = await upload(organizationId, csv.join('\n'));
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data.attributes;
  };

  // 200 lines of 24 hours for one job and day: the first is recorded, every other refused on its hours.
  const flood = await lines([
    HEADER,
    ...Array.from({ length: 200 }, (_, i) => `H${i},${job},2026-03-13,24,`),
    `O-1,${otherJob},2026-03-13,24,`,
    `O-2,${job},2026-03-12,24,`,
  ]);
  assert.deepEqual([flood.lines, flood.recorded, flood.rejected], [202, 3, 199]);
  assert.deepEqual(
    flood.rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
    Array.from({ length: 199 }, (_, i) => [i + 3, 'hours']),
  );
  assert.equal(
    flood.rejected_lines[0].message,
    `hours: job "${job}" would have 48 hours on 2026-03-13, more than the 24 of a day: 24 are recorded already ` +
      "(earlier lines of this file included) and this line adds 24. To correct a day's hours, reverse its row " +
      '(reverses) and send the right hours.',
  );
  assert.equal(flood.recorded_minor, 3 * 24 * 2000, 'only the three lines recorded are paid');
  assert.deepEqual(
    [await hoursOn(worker.jobId, '2026-03-13'), await hoursOn(other.jobId, '2026-03-13')],
    [24, 24],
  );
  const refusedRows = await db
    .selectFrom('earnings')
    .select('external_id')
    .where('job_id', '=', worker.jobId)
    .where('external_id', 'like', 'H%')
    .execute();
  assert.deepEqual(
    refusedRows.map((row) => row.external_id),
    ['H0'],
    'nothing of a refused line is written',
  );

  // Against what is recorded: a file sent again is duplicates; a quarter hour more is refused.
  const again = await lines([HEADER, `H0,${job},2026-03-13,24,`, `Q-1,${job},2026-03-13,0.25,`]);
  assert.deepEqual([again.recorded, again.duplicates, again.rejected], [0, 1, 1]);
  assert.match(again.rejected_lines[0].message, /would have 24\.25 hours on 2026-03-13/);

  // A reversal takes its row's hours back (from the next line on); a negative amount lowers pay, not hours.
  const corrected = await lines([
    `${HEADER},reverses`,
    `C-1,${job},2026-03-13,1,,`,
    `C-2,${job},,,,H0`,
    `C-3,${job},2026-03-13,8,,`,
    `C-4,${job},2026-03-13,,-100.00,`,
    `C-5,${job},2026-03-13,16.01,,`,
    `C-6,${job},2026-03-13,16,,`,
  ]);
  assert.deepEqual(
    corrected.rejected_lines.map((problem: { line: number; field: string }) => [problem.line, problem.field]),
    [
      [2, 'hours'],
      [6, 'hours'],
    ],
  );
  assert.match(
    corrected.rejected_lines[1].message,
    /would have 24\.01 hours on 2026-03-13, more than the 24 of a day: 8 are recorded/,
  );
  assert.equal(corrected.recorded, 4);
  assert.equal(await hoursOn(worker.jobId, '2026-03-13'), 24);
  assert.deepEqual(await checkLedgerInvariants(db), []);
});
