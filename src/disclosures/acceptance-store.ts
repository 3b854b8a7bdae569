import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.ts';
import { lockPeople } from '../db/lock-order.ts';
import type { DB } from '../db/schema.ts';
import { withTransaction } from '../db/transaction.ts';
import type { DisclosureDocument } from './disclosure-document.ts';

/** A person's acceptance of one version of a disclosure document. */
export interface DisclosureAcceptance {
  id: string;
  person_id: string;
  document_id: string;
  version: number;
  client_id: string | null;
  ip_address: string | null;
  accepted_at: Date;
}

export async function acceptanceOf(
  db: Kysely<DB>,
  personId: string,
  documentId: string,
): Promise<DisclosureAcceptance | undefined> {
  return (await db
    .selectFrom('disclosure_acceptances')
    .selectAll()
    .where('person_id', '=', personId)
    .where('document_id', '=', documentId)
    .executeTakeFirst()) as DisclosureAcceptance | undefined;
}

/**
 * Records an acceptance under the person's lock, the lock an advance reads it under: an advance that waited for
 * this one sees it, one that went first did not need it. `current` is asked under the lock too, so a version
 * published meanwhile is refused, not accepted as current. Accepting again gives the first acceptance back.
 */
export async function recordAcceptance(
  db: Db,
  input: {
    personId: string;
    document: DisclosureDocument;
    clientId: string | null;
    ipAddress: string | null;
    now: Date;
    current: (tx: Kysely<DB>) => Promise<DisclosureDocument | undefined>;
  },
): Promise<
  { acceptance: DisclosureAcceptance; created: boolean } | { current: DisclosureDocument | undefined }
> {
  return withTransaction(db, async (tx) => {
    await lockPeople(tx, [input.personId]);
    const current = await input.current(tx);
    if (current?.id !== input.document.id) return { current };
    const existing = await acceptanceOf(tx, input.personId, input.document.id);
    if (existing) return { acceptance: existing, created: false };
    const acceptance: DisclosureAcceptance = {
      id: randomUUID(),
      person_id: input.personId,
      document_id: input.document.id,
      version: input.document.version,
      client_id: input.clientId,
      ip_address: input.ipAddress,
      accepted_at: input.now,
    };
    await tx.insertInto('disclosure_acceptances').values(acceptance).execute();
    return { acceptance, created: true };
  });
}
