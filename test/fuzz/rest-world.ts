import { createHmac, randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import { openComplaint } from '../../src/complaints/complaint-store.ts';
import { CardTokenKeys } from '../../src/tokenization/card-token.ts';
import { buildTestApp, FIXED_NOW, type TestApp } from '../helpers/build-test-app.ts';
import { createWorker, linkedClientToken } from '../helpers/factories.ts';
import { addCardAccount, advanceBody, createPaidWorker, postTransfer } from '../helpers/money.ts';
import { clientToken, createTestClient } from '../helpers/tokens.ts';
import type { SeedBody } from './body-plans.ts';
import { DatabaseWatch } from './database-fingerprint.ts';
import type { Operation } from './route-catalog.ts';

/** The card the sandbox tokenizes, as the tokenization form sends it. */
export const TEST_CARD = {
  first_name: 'Robin',
  last_name: 'Lee',
  card_number: '4111111111111111',
  expiration_month: '02',
  expiration_year: '2030',
  cvv: '123',
  address_line_one: '1 Main St',
  address_line_two: null,
  address_city: 'Albany',
  address_state: 'NY',
  address_zip_code: '12207',
  address_country: 'US',
};

const { address_line_two: _none, ...CARD_DATA } = TEST_CARD;

/**
 * What the REST fuzzing needs: the three listeners on one database, one employer with a worker who may take
 * advances (a bank account that is the job's default, a debit card, an advance, a paycheck) and a second
 * worker, tokens of each kind, and for each operation a valid body, so that mutated bodies get past the first
 * checks.
 */
export interface RestWorld {
  app: TestApp;
  watch: DatabaseWatch;
  /** Fixture ids by path parameter name. */
  ids: Record<string, string[]>;
  /** Values for `Authorization`, by kind. */
  tokens: { user: string; client: string; operator: string };
  /** How many kinds of valid body an operation takes (a bank account or a card). */
  seedKinds(operation: Operation): number;
  /** A valid body of that kind, fresh for each request (a new card token, a new account number). */
  seedFor(operation: Operation, kind: number): Promise<SeedBody | undefined>;
}

export async function buildRestWorld(t: TestContext): Promise<RestWorld> {
  const app = await buildTestApp(
    t,
    {
      // Rate limits are tested elsewhere; here they would turn most card requests into 429 before any check.
      EWA_CARD_TOKENS_PER_IP_PER_MINUTE: '100000',
      EWA_CARD_TOKENS_PER_CARD_PER_MINUTE: '100000',
    },
    { now: () => FIXED_NOW },
  );
  const worker = await createPaidWorker(app, { earnedMinor: 400_000, now: FIXED_NOW });
  const cardId = await addCardAccount(app, worker, FIXED_NOW);
  const advance = await postTransfer(app, worker.token, advanceBody(worker, { amount: 2000 }));
  if (advance.statusCode !== 200) throw new Error(`advance: ${advance.body}`);
  const spare = await createWorker(app, worker.organizationId);
  const paycheck = await app.database.db
    .selectFrom('paychecks')
    .select('id')
    .where('job_id', '=', worker.jobId)
    .executeTakeFirstOrThrow();
  const { token: client } = await linkedClientToken(
    app,
    [worker.organizationId],
    ['client:lookup', 'client:admin', 'health:read'],
  );
  const operatorClient = await createTestClient(app, {
    name: 'Operator',
    scopes: ['admin:operator'],
    redirectUris: [],
  });
  const operator = await clientToken(app, ['admin:operator'], operatorClient);
  const complaint = await openComplaint(
    app.database.db,
    {
      organizationId: worker.organizationId,
      personId: worker.personId,
      state: undefined,
      channel: 'EMAIL',
      summary: 'Fuzz.',
    },
    FIXED_NOW,
  );
  const cardKeys = await CardTokenKeys.fromConfig(app.config.cards.tokenKeys);
  const spareJob = await app.database.db
    .selectFrom('jobs')
    .select('external_primary_identifier')
    .where('id', '=', spare.jobId)
    .executeTakeFirstOrThrow();

  let serial = 0;
  const json = (value: unknown): SeedBody => ({ type: 'json', value });
  const person = { person: { data: { type: 'people', id: worker.personId } } };
  const { card_number: _number, cvv: _cvv, address_line_two: _two, ...cardDetails } = TEST_CARD;
  // Valid bodies by operation, one builder per kind of body the operation takes; each call makes a new one.
  const seeds: Record<string, (() => Promise<SeedBody>)[]> = {
    'POST /rest/transfers': [async () => json(advanceBody(worker, { amount: 1000 + (serial++ % 500) }))],
    'POST /rest/accounts': [
      async () =>
        json({
          data: {
            type: 'accounts',
            attributes: {
              name: 'Savings',
              account_type: 'DEPOSITORY',
              subtype: 'SAVINGS',
              details: {
                first_name: 'Robin',
                last_name: 'Lee',
                routing_number: '110000000',
                account_number: String(10_000_000 + serial++),
              },
            },
            relationships: person,
          },
        }),
      async () => {
        const { token } = await cardKeys.issue(CARD_DATA, FIXED_NOW, app.config.cards.tokenTtlSeconds);
        return json({
          data: {
            type: 'accounts',
            attributes: {
              name: 'Debit card',
              account_type: 'CARD',
              subtype: 'DEBIT',
              details: { ...cardDetails, token, issuer: '411111' },
            },
            relationships: person,
          },
        });
      },
    ],
    'PATCH /rest/people/{person_id}': [
      async () =>
        json({ data: { type: 'people', id: worker.personId, attributes: { state_of_residence: 'NY' } } }),
    ],
    'PATCH /rest/jobs/{job_id}': [
      async () =>
        json({
          data: {
            type: 'jobs',
            id: worker.jobId,
            relationships: {
              direct_deposit_default_depository: { data: { type: 'accounts', id: worker.depositoryId } },
            },
          },
        }),
    ],
    'POST /admin/organizations': [
      async () =>
        json({
          data: {
            type: 'organizations',
            attributes: { name: 'Fuzz Co', products: ['ODP'], policy: { access_rate_bp: 5000 } },
          },
        }),
    ],
    'PATCH /admin/organizations/{organization_id}/policy': [
      async () => json({ data: { type: 'organization_policies', attributes: { access_rate_bp: 5000 } } }),
    ],
    'POST /admin/organizations/{organization_id}/roster': [
      async () => ({
        type: 'text',
        text: [
          'primary_identifier,employee_id,first_name,last_name,email,state_of_residence,wage_amount,wage_frequency',
          `F-${++serial},E-${serial},Sam,Park,sam.${serial}@fuzz.example,NY,21.50,HOURLY`,
        ].join('\n'),
      }),
    ],
    'POST /admin/organizations/{organization_id}/earnings': [
      async () => ({
        type: 'text',
        text: [
          'row_id,primary_identifier,date,hours,amount',
          `fuzz-${++serial},${spareJob.external_primary_identifier},2026-03-10,,12.00`,
        ].join('\n'),
      }),
    ],
    // Wyoming and Connecticut: no rule of theirs touches the fuzzed worker, who lives in New York.
    'POST /admin/compliance/rules': [
      async () =>
        json({
          data: {
            type: 'compliance_rules',
            id: 'FUZZ-WY-NO-SERVICE',
            attributes: {
              state: 'WY',
              kind: 'NO_SERVICE',
              params: { reason: 'Fuzz.' },
              effective_from: '2026-01-01',
              source: 'Fuzz',
            },
          },
        }),
    ],
    'PATCH /admin/compliance/rules/{rule_id}': [
      async () => json({ data: { type: 'compliance_rules', attributes: { enabled: true } } }),
    ],
    // The fuzzed worker lives in New York, which asks for no disclosure: a valid body, refused on its merits.
    'POST /rest/people/{person_id}/disclosure_acceptances': [
      async () =>
        json({
          data: {
            type: 'disclosure_acceptances',
            relationships: {
              disclosure: { data: { type: 'disclosures', id: 'd15c1051-0000-4000-8000-000000000001' } },
            },
          },
        }),
    ],
    // A new version of Wyoming's document: no rule of Wyoming's asks for it, so the fuzzed worker is unaffected.
    'POST /admin/disclosures': [
      async () =>
        json({
          data: { type: 'disclosures', attributes: { state: 'WY', title: 'Fuzz', body: 'Fuzz terms.' } },
        }),
    ],
    'POST /admin/complaints': [
      async () =>
        json({
          data: {
            type: 'complaints',
            attributes: {
              organization_id: worker.organizationId,
              person_id: worker.personId,
              channel: 'EMAIL',
              summary: 'Fuzz.',
            },
          },
        }),
    ],
    // Answered by the first, refused on its merits (INVALID_RESOURCE_STATE) from then on.
    'PATCH /admin/complaints/{complaint_id}': [
      async () => json({ data: { type: 'complaints', attributes: { status: 'ANSWERED', answer: 'Fuzz.' } } }),
    ],
    'POST /cards/generic': [async () => json(TEST_CARD)],
  };

  return {
    app,
    watch: new DatabaseWatch(app.database.db),
    ids: {
      organization_id: [worker.organizationId],
      person_id: [worker.personId],
      job_id: [worker.jobId, spare.jobId],
      account_id: [worker.balanceAccountId, worker.depositoryId, cardId],
      paycheck_id: [paycheck.id],
      transfer_id: [advance.json().data.id],
      rule_id: ['CT-FEE-CAP-MONTH', 'FUZZ-WY-NO-SERVICE'],
      complaint_id: [complaint.id],
    },
    tokens: { user: worker.token, client, operator },
    seedKinds: (operation) => seeds[operation.name]?.length ?? 1,
    async seedFor(operation, kind) {
      const builders = seeds[operation.name];
      if (builders) return builders[kind % builders.length]!();
      if (operation.bodyType === undefined) return undefined;
      // An operation added later: a JSON:API document of its resource type, until someone writes its valid
      // body.
      const type = operation.path.split('/').filter((part) => part && !part.startsWith('{'))[1] ?? 'things';
      return { type: 'json', value: { data: { type, attributes: {} } } };
    },
  };
}

/** Which of the world's tokens an operation takes, and one of another kind. */
export function tokensFor(world: RestWorld, operation: Operation): { right?: string; wrong: string } {
  const { user, client, operator } = world.tokens;
  const requirement = operation.security[0];
  if (!requirement) return { wrong: user };
  if (requirement.kind === 'user') return { right: user, wrong: client };
  if (requirement.scopes.includes('admin:operator')) return { right: operator, wrong: user };
  return { right: client, wrong: user };
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Authorization values that must all be refused: tampered, unsigned, confused, oversized and malformed
 * tokens.
 */
export function forgedAuthorizations(token: string): string[] {
  const [header = '', payload = '', signature = ''] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  const elevated = base64url({ ...claims, scope: 'user:read user:read_write client:admin admin:operator' });
  const hmacHeader = base64url({ alg: 'HS256', typ: 'at+jwt' });
  const hmac = createHmac('sha256', 'secret').update(`${hmacHeader}.${payload}`).digest('base64url');
  return [
    `Bearer ${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`,
    `Bearer ${header}.${elevated}.${signature}`,
    `Bearer ${base64url({ alg: 'none', typ: 'at+jwt' })}.${payload}.`,
    `Bearer ${hmacHeader}.${payload}.${hmac}`,
    `Bearer ${base64url({ alg: 'ES256', typ: 'at+jwt', kid: '../../../etc/passwd', jku: 'http://169.254.169.254/' })}.${payload}.${signature}`,
    `Bearer ${base64url({ alg: 'ES256', typ: 'at+jwt', kid: randomUUID() })}.${payload}.${signature}`,
    `Bearer ${header}.${base64url({ ...claims, exp: 1 })}.${signature}`,
    `Bearer ${'x'.repeat(12_000)}`,
    `Bearer ${token}.${token}`,
    `Bearer ${token} ${token}`,
    'Bearer e30.e30.e30',
    'Bearer ...',
    'Bearer',
    'Bearer ',
    token,
    `Basic ${Buffer.from('demo-partner-server:demo-partner-secret').toString('base64')}`,
    `Basic ${token}`,
    `Bearer ${Buffer.from([0xff, 0xfe, 0x41]).toString('latin1')}`,
  ];
}
