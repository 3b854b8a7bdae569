import type { EarningsInput } from '../../src/earnings/earnings-recorder.ts';
import type { TestApp } from './build-test-app.ts';
import { createOrganization, createWorker, restClient, type Worker, workerToken } from './factories.ts';

export interface PaidWorker extends Worker {
  organizationId: string;
  token: string;
  api: ReturnType<typeof restClient>;
  depositoryId: string;
  balanceAccountId: string;
}

/**
 * A worker ready to take advances: state of residence set, a bank account that is the job's default (so direct
 * deposit is SETUP_COMPLETE), and — when `earnedMinor` is given — shifts worked this period, recorded through the
 * real earnings recorder.
 */
export async function createPaidWorker(
  app: TestApp,
  options: {
    organizationId?: string;
    policy?: Record<string, unknown>;
    earnedMinor?: number;
    now?: Date;
  } = {},
): Promise<PaidWorker> {
  const organizationId =
    options.organizationId ?? (await createOrganization(app, { policy: options.policy ?? {} }));
  const worker = await createWorker(app, organizationId);
  const { db } = app.database;
  await db
    .updateTable('people')
    .set({ state_of_residence: 'NY' })
    .where('id', '=', worker.personId)
    .execute();
  const token = await workerToken(app, worker.personId);
  const api = restClient(app, token);
  const created = await api.post('/rest/accounts', {
    data: {
      type: 'accounts',
      attributes: {
        name: 'Checking',
        account_type: 'DEPOSITORY',
        subtype: 'CHECKING',
        details: {
          first_name: 'Robin',
          last_name: 'Lee',
          routing_number: '110000000',
          account_number: `0001${worker.personId.replace(/\D/g, '').slice(0, 8).padEnd(8, '7')}`,
        },
      },
      relationships: { person: { data: { type: 'people', id: worker.personId } } },
    },
  });
  if (created.statusCode !== 200) throw new Error(`bank account: ${created.body}`);
  const depositoryId = created.json().data.id as string;
  const patched = await api.patch(`/rest/jobs/${worker.jobId}`, {
    data: {
      type: 'jobs',
      id: worker.jobId,
      relationships: { direct_deposit_default_depository: { data: { type: 'accounts', id: depositoryId } } },
    },
  });
  if (patched.statusCode !== 200) throw new Error(`job default: ${patched.body}`);
  const paid: PaidWorker = {
    ...worker,
    organizationId,
    token,
    api,
    depositoryId,
    balanceAccountId: worker.balanceAccountId as string,
  };
  if (options.earnedMinor) await recordShift(app, paid.jobId, options.earnedMinor, options.now ?? new Date());
  return paid;
}

let shiftNumber = 0;

/** One shift of this amount, worked on the day before `now` (UTC date), through the earnings recorder. */
export async function recordShift(
  app: TestApp,
  jobId: string,
  amountMinor: number,
  now: Date,
  workedOn?: string,
) {
  shiftNumber += 1;
  const input: EarningsInput = {
    jobId,
    externalId: `shift-${shiftNumber}`,
    workedOn: workedOn ?? new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10),
    hoursHundredths: null,
    amountMinor,
    source: 'SHIFT',
  };
  return app.money.earnings.record([input], now);
}

export function advanceBody(
  worker: { balanceAccountId: string; depositoryId: string },
  attributes: Record<string, unknown> = {},
  relationships: Record<string, unknown> = {},
) {
  return {
    data: {
      type: 'transfers',
      attributes: { amount: 5000, currency: 'USD', schedule: 'NEXT_BUSINESS_DAY', ...attributes },
      relationships: {
        origin: { data: { type: 'accounts', id: worker.balanceAccountId } },
        destination: { data: { type: 'accounts', id: worker.depositoryId } },
        ...relationships,
      },
    },
  };
}

/** POST /rest/transfers with an Idempotency-Key (a fresh one unless given). */
export function postTransfer(
  app: TestApp,
  token: string,
  body: unknown,
  key: string = crypto.randomUUID(),
  query = '',
) {
  return app.api.inject({
    method: 'POST',
    url: `/rest/transfers${query}`,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/vnd.api+json',
      'idempotency-key': key,
    },
    payload: JSON.stringify(body),
  });
}
