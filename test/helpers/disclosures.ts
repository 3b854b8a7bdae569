import type { PaidWorker } from './money.ts';

/** The worker accepts every disclosure their state asks for now, through the REST API as a partner app would. */
export async function acceptDisclosures(worker: Pick<PaidWorker, 'api' | 'personId'>): Promise<void> {
  const listed = await worker.api.get(`/rest/people/${worker.personId}/disclosures`);
  if (listed.statusCode !== 200) throw new Error(`disclosures: ${listed.body}`);
  for (const document of listed.json().data as { id: string }[]) {
    const accepted = await worker.api.post(`/rest/people/${worker.personId}/disclosure_acceptances`, {
      data: {
        type: 'disclosure_acceptances',
        relationships: { disclosure: { data: { type: 'disclosures', id: document.id } } },
      },
    });
    if (accepted.statusCode >= 300) throw new Error(`disclosure acceptance: ${accepted.body}`);
  }
}
