import { randomUUID } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import {
  afterSql,
  fetchSize,
  type ListOrder,
  orderSql,
  PAGE_KEY,
  type Page,
  pageKeySql,
} from '../db/keyset-page.ts';
import type { DB } from '../db/schema.ts';
import { withTransaction } from '../db/transaction.ts';
import { DISCLOSURE_PRODUCT, type DisclosureDocument, type Publication } from './disclosure-document.ts';

/**
 * The document a person of `state` must accept at `at`: the latest version in effect of the state's own, else of
 * the default document. As SQL, for the advance's reads to embed (d.* of one row, or none).
 */
export function currentDocumentSql(state: RawSql, at: RawSql, gate: RawSql = sql`true`) {
  return sql`select d.* from disclosure_documents d
    where ${gate} and d.product = ${DISCLOSURE_PRODUCT} and (d.state = ${state} or d.state is null)
      and d.effective_from <= ${at}
    order by d.state is null, d.version desc limit 1`;
}

type RawSql = RawBuilder<unknown>;

export async function currentDocument(
  db: Kysely<DB>,
  state: string,
  at: Date,
): Promise<DisclosureDocument | undefined> {
  const { rows } =
    await sql<DisclosureDocument>`${currentDocumentSql(sql`${state}`, sql`${at.toISOString()}::timestamptz`)}`.execute(
      db,
    );
  return rows[0];
}

export async function findDocument(db: Kysely<DB>, id: string): Promise<DisclosureDocument | undefined> {
  return (await db.selectFrom('disclosure_documents').selectAll().where('id', '=', id).executeTakeFirst()) as
    | DisclosureDocument
    | undefined;
}

/** The operator's list: every version in the order published; a page of it when `page` is given. */
export const DOCUMENT_LIST_ORDER: ListOrder = {
  list: 'disclosures',
  key: { column: 'disclosure_documents.published_at', type: 'timestamptz' },
  id: 'disclosure_documents.id',
};

export async function listDocuments(
  db: Kysely<DB>,
  state?: string,
  page?: Page,
): Promise<(DisclosureDocument & { [PAGE_KEY]: string })[]> {
  let query = db
    .selectFrom('disclosure_documents')
    .selectAll()
    .select(pageKeySql(DOCUMENT_LIST_ORDER).as(PAGE_KEY))
    .where(afterSql(DOCUMENT_LIST_ORDER, page));
  if (state !== undefined) query = query.where('state', '=', state);
  query = query.orderBy(orderSql(DOCUMENT_LIST_ORDER));
  if (page) query = query.limit(fetchSize(page));
  return (await query.execute()) as (DisclosureDocument & { [PAGE_KEY]: string })[];
}

/**
 * Publishes the next version of a state's (or the default) document. Publications of one state take turns on a
 * transaction-scoped advisory lock named by the state, so two at once get the next two versions; the unique
 * version index stays the guard of last resort.
 */
export async function publishDocument(
  db: Db,
  publication: Publication,
  now: Date,
): Promise<DisclosureDocument> {
  return withTransaction(db, async (tx) => {
    const { state } = publication;
    await sql`select pg_advisory_xact_lock(hashtext(${`disclosure_documents:${DISCLOSURE_PRODUCT}:${state ?? ''}`}))`.execute(
      tx,
    );
    const last = await tx
      .selectFrom('disclosure_documents')
      .select(sql<number>`coalesce(max(version), 0)`.as('version'))
      .where('product', '=', DISCLOSURE_PRODUCT)
      .where(state === null ? sql<boolean>`state is null` : sql<boolean>`state = ${state}`)
      .executeTakeFirstOrThrow();
    const row = {
      id: randomUUID(),
      state,
      product: DISCLOSURE_PRODUCT,
      version: Number(last.version) + 1,
      title: publication.title,
      body: publication.body,
      effective_from: publication.effectiveFrom ?? now,
      published_at: now,
    };
    await tx.insertInto('disclosure_documents').values(row).execute();
    return row;
  });
}
