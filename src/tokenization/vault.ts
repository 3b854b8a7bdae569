import { randomUUID } from 'node:crypto';
import type { KeyEntry } from '../config.ts';
import { open, seal } from '../crypto/secret-box.ts';
import type { Db } from '../db/database.ts';
import { type Tx, withTransaction } from '../db/transaction.ts';

/** What the rest of the server may know of a vaulted card: never its number. */
export interface VaultedCard {
  id: string;
  bin: string;
  lastFour: string;
}

/**
 * The card vault: the only place a card number is kept, sealed with AES-256-GCM under the vault's current
 * key-encryption key and bound to its row id. Nothing outside this module reads `pan_enc`.
 */
export class CardVault {
  readonly #keys: readonly KeyEntry[];

  constructor(keys: readonly KeyEntry[]) {
    if (keys.length === 0) throw new Error('the vault needs a key');
    this.#keys = keys;
  }

  get currentKeyId(): string {
    return this.#keys[0]!.kid;
  }

  async store(
    tx: Tx,
    card: { number: string; fingerprint: string; expirationMonth: number; expirationYear: number },
    now: Date,
  ): Promise<VaultedCard> {
    const id = randomUUID();
    const { kid, key } = this.#keys[0]!;
    const vaulted = { id, bin: card.number.slice(0, 6), lastFour: card.number.slice(-4) };
    await tx
      .insertInto('card_vault')
      .values({
        id,
        fingerprint: card.fingerprint,
        pan_enc: seal(key, card.number, context(id)),
        key_id: kid,
        bin: vaulted.bin,
        last_four: vaulted.lastFour,
        expiration_month: card.expirationMonth,
        expiration_year: card.expirationYear,
        created_at: now,
      })
      .execute();
    return vaulted;
  }

  /** Cards still sealed under an older key: what a rotation has left to do. */
  async countNotUnderCurrentKey(db: Db): Promise<number> {
    const row = await db
      .selectFrom('card_vault')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('key_id', '<>', this.currentKeyId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Re-seals up to `batchSize` cards that are under an older key with the current one, in one transaction, and
   * returns how many it did. Each batch commits on its own and marks its rows with the new key id, so a rotation
   * that stops half-way (a crash, Ctrl+C) resumes where it was: run it again. Rows are taken with SKIP LOCKED, so
   * two rotations at once share the work instead of waiting.
   */
  async rotateBatch(db: Db, batchSize: number): Promise<number> {
    const keysById = new Map(this.#keys.map((entry) => [entry.kid, entry.key]));
    const { kid, key } = this.#keys[0]!;
    return withTransaction(db, async (tx) => {
      const rows = await tx
        .selectFrom('card_vault')
        .select(['id', 'pan_enc', 'key_id'])
        .where('key_id', '<>', kid)
        .orderBy('id')
        .limit(batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      for (const row of rows) {
        const oldKey = keysById.get(row.key_id);
        if (!oldKey) {
          throw new VaultKeyMissingError(
            `Card ${row.id} is sealed under key "${row.key_id}", which EWA_VAULT_KEYS no longer lists; add it back after the new key.`,
          );
        }
        const number = open(oldKey, row.pan_enc, context(row.id));
        await tx
          .updateTable('card_vault')
          .set({ pan_enc: seal(key, number, context(row.id)), key_id: kid })
          .where('id', '=', row.id)
          .execute();
      }
      return rows.length;
    });
  }
}

export class VaultKeyMissingError extends Error {
  override name = 'VaultKeyMissingError';
}

function context(id: string): string {
  return `card-vault:${id}`;
}
