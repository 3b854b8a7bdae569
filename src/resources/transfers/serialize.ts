import { createHash } from 'node:crypto';
import type { TransferView } from '../../money/advances/advance-service.ts';
import type { FundingSource } from '../../money/advances/transfer.ts';
import { relationship, resourceObject, toManyRelationship } from '../../platform/serializer.ts';

/** Funding sources have no row id on the wire: theirs is derived from what they join, so it never changes. */
export function fundingSourceId(source: FundingSource): string {
  return createHash('sha256')
    .update(`${source.transferId}/${source.stage}/${source.paycheckId}`)
    .digest('hex')
    .slice(0, 32);
}

/** What the answer to a preview says of itself, in the resource object's meta. */
export const PREVIEW_NOTE =
  'Nothing was created: this is the price and the checks of the transfer as it would be made now. Its links.self leads nowhere until a transfer is made without preview.';

export function transferResource(baseUrl: string, view: TransferView) {
  const { transfer } = view;
  const ids = (stage: FundingSource['stage']) =>
    view.sources.filter((source) => source.stage === stage).map(fundingSourceId);
  const resource = resourceObject(
    baseUrl,
    'transfers',
    transfer.id,
    {
      amount: transfer.amount.amountMinor,
      currency: transfer.amount.currency,
      schedule: transfer.schedule,
      preview: view.preview,
      status: transfer.status,
      submitted_at: transfer.submittedAt.toISOString(),
      resolved_at: transfer.resolvedAt?.toISOString() ?? null,
      fee: transfer.fee.amountMinor,
    },
    {
      origin:
        transfer.origin.kind === 'paycheck'
          ? relationship('paychecks', transfer.origin.paycheckId)
          : relationship('accounts', transfer.origin.accountId),
      destination: relationship('accounts', transfer.destinationAccountId),
      person: relationship('people', transfer.personId),
      estimated_funding_sources: toManyRelationship('funding_sources', ids('ESTIMATED')),
      final_funding_sources: toManyRelationship('funding_sources', ids('FINAL')),
    },
  );
  // Why a transfer failed, and that a preview created nothing, are extensions of the published description, in
  // `meta` so that its clients ignore them. A preview keeps links.self: the description requires it on every
  // transfer, though nothing is there to read.
  if (view.preview) return { ...resource, meta: { preview: PREVIEW_NOTE } };
  if (transfer.status === 'FAILED' && transfer.failureReason)
    return { ...resource, meta: { failure_reason: transfer.failureReason } };
  return resource;
}

export function fundingSourceResource(source: FundingSource) {
  return {
    type: 'funding_sources' as const,
    id: fundingSourceId(source),
    attributes: { amount: source.amount.amountMinor, currency: source.amount.currency },
    relationships: {
      source: relationship('paychecks', source.paycheckId),
      transfer: relationship('transfers', source.transferId),
    },
  };
}

/** The funding sources of these transfers in the stages `include` asked for, each once. */
export function includedFundingSources(
  views: readonly TransferView[],
  stages: ReadonlySet<FundingSource['stage']>,
) {
  return views.flatMap((view) =>
    view.sources.filter((source) => stages.has(source.stage)).map(fundingSourceResource),
  );
}
