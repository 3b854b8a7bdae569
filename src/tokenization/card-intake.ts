import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { CardFingerprints } from './card-fingerprint.ts';
import type { CardTokenKeys } from './card-token.ts';
import { spendCardToken } from './card-token-uses.ts';
import { ReceivedCard } from './received-card.ts';
import { CardVault } from './vault.ts';

export type CardIntakeRefusal = 'invalid' | 'already used';

/**
 * Where card tokens come back in: opens a token, spends it (the first attempt spends it, whatever its outcome, so
 * one token cannot be replayed to probe the checks that follow), and hands out the card as a ReceivedCard.
 */
export class CardIntake {
  readonly #db: Db;
  readonly #keys: CardTokenKeys;
  readonly #fingerprints: CardFingerprints;
  readonly #vault: CardVault;

  constructor(db: Db, config: Config, keys: CardTokenKeys) {
    this.#db = db;
    this.#keys = keys;
    this.#fingerprints = new CardFingerprints(config.masterKey);
    this.#vault = new CardVault(config.cards.vaultKeys);
  }

  async receive(token: string, now: Date): Promise<ReceivedCard | CardIntakeRefusal> {
    let card: ReceivedCard;
    try {
      card = new ReceivedCard(await this.#keys.open(token, now), this.#fingerprints, this.#vault);
    } catch {
      // Every reason (tampered, expired, another key, malformed) is the same answer to the caller.
      return 'invalid';
    }
    return (await spendCardToken(this.#db, card.jti, card.expiresAt, now)) ? card : 'already used';
  }
}
