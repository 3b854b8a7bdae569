import { createHash } from 'node:crypto';
import type { TransferView } from '../../money/advances/advance-service.ts';
import type { FundingSourceRow } from '../../money/advances/transfer.ts';
import { relationship, resourceObject, toManyRelationship } from '../../platform/serializer.ts';

/** Funding sources have no row id on the wire: theirs is derived from what they join, so it never changes. */
export function fundingSourceId(source: FundingSourceRow): string {
  return createHash('sha256')
    .update(`${source.transfer_id}/${source.stage}/${source.paycheck_id}`)
    .digest('hex')
    .slice(0, 32);
}

export function transferResource(baseUrl: string, view: TransferView) {
  const { row } = view;
  const ids = (stage: FundingSourceRow['stage']) =>
    view.sources.filter((source) => source.stage === stage).map(fundingSourceId);
  const resource = resourceObject(
    baseUrl,
    'transfers',
    row.id,
    {
      amount: row.amount_minor,
      currency: row.currency,
      schedule: row.schedule,
      preview: view.preview,
      status: row.status,
      submitted_at: row.submitted_at.toISOString(),
      resolved_at: row.resolved_at?.toISOString() ?? null,
      fee: row.fee_minor,
    },
    {
      origin: row.origin_paycheck_id
        ? relationship('paychecks', row.origin_paycheck_id)
        : relationship('accounts', row.origin_account_id),
      destination: relationship('accounts', row.destination_account_id),
      person: relationship('people', row.person_id),
      estimated_funding_sources: toManyRelationship('funding_sources', ids('ESTIMATED')),
      final_funding_sources: toManyRelationship('funding_sources', ids('FINAL')),
    },
  );
  // Why a transfer failed is an extension of the published description, in `meta` so that its clients ignore it.
  if (row.status === 'FAILED' && row.failure_reason)
    return { ...resource, meta: { failure_reason: row.failure_reason } };
  return resource;
}

export function fundingSourceResource(source: FundingSourceRow) {
  return {
    type: 'funding_sources' as const,
    id: fundingSourceId(source),
    attributes: { amount: source.amount_minor, currency: source.currency },
    relationships: {
      source: relationship('paychecks', source.paycheck_id),
      transfer: relationship('transfers', source.transfer_id),
    },
  };
}

/** The funding sources of these transfers in the stages `include` asked for, each once. */
export function includedFundingSources(
  views: readonly TransferView[],
  stages: ReadonlySet<FundingSourceRow['stage']>,
) {
  return views.flatMap((view) =>
    view.sources.filter((source) => stages.has(source.stage)).map(fundingSourceResource),
  );
}
