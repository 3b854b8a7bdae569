import type { Db } from '../db/database.ts';
import { textProblem } from '../domain/input-text.ts';
import { clientMetadata } from './client-metadata.ts';
import { findClient, findClientSecretHash } from './clients.ts';

/**
 * An id no artifact or client of ours can have (a NUL, which PostgreSQL refuses, or another character the input
 * rule refuses) is looked up as absent. Request parameters are checked where they arrive (request-text.ts); this
 * covers ids the provider takes from inside a JWT (a client assertion's subject, a request object's client_id).
 */
export const namesNothing = (id: string) => typeof id !== 'string' || textProblem(id) !== undefined;

const CLIENT_CACHE_MS = 2_000;
const CLIENT_CACHE_MAX = 10_000;

/**
 * The provider asks for the client on every request. Reading it from the database each time adds two queries
 * to every token, so the metadata is kept for two seconds: a new secret or a deleted client takes effect within that
 * (a deleted client's tokens are refused through oauth_revocations as well).
 */
export class ClientCache {
  readonly #db: Db;
  readonly #extraRedirectUris: (clientId: string) => readonly string[];
  readonly #entries = new Map<string, { metadata: Record<string, unknown> | undefined; until: number }>();

  constructor(db: Db, extraRedirectUris: (clientId: string) => readonly string[]) {
    this.#db = db;
    this.#extraRedirectUris = extraRedirectUris;
  }

  async get(clientId: string): Promise<Record<string, unknown> | undefined> {
    if (namesNothing(clientId)) return undefined;
    const cached = this.#entries.get(clientId);
    if (cached && cached.until > Date.now()) return cached.metadata;
    const client = await findClient(this.#db, clientId);
    const metadata = client
      ? clientMetadata(
          client,
          await findClientSecretHash(this.#db, clientId),
          this.#extraRedirectUris(clientId),
        )
      : undefined;
    if (this.#entries.size >= CLIENT_CACHE_MAX) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(clientId, { metadata, until: Date.now() + CLIENT_CACHE_MS });
    return metadata;
  }
}
