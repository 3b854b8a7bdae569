import type { Tx } from '../db/transaction.ts';
import { isPastExpiry } from './card-expiry.ts';
import type { CardFingerprints } from './card-fingerprint.ts';
import type { CardData, OpenedCardToken } from './card-token.ts';
import { UAT_TEST_CARDS } from './test-cards.ts';
import type { CardVault, VaultedCard } from './vault.ts';

/** The cardholder's side of a card: what may be shown and compared. Never the number, never the CVV. */
export interface CardHolderDetails {
  firstName: string;
  lastName: string;
  expirationMonth: string;
  expirationYear: string;
}

/**
 * A card that came in through an opened card token. Its number stays in a private field: other modules can ask
 * the questions they need answered (its prefix, its fingerprint, whether it is a sandbox card) and have it sealed
 * into the vault, but cannot read it.
 */
export class ReceivedCard {
  readonly jti: string;
  readonly expiresAt: Date;
  readonly holder: CardHolderDetails;
  readonly fingerprint: string;
  readonly #number: string;
  readonly #vault: CardVault;

  constructor(opened: OpenedCardToken, fingerprints: CardFingerprints, vault: CardVault) {
    const card: CardData = opened.card;
    this.jti = opened.jti;
    this.expiresAt = opened.expiresAt;
    this.#number = card.card_number;
    this.#vault = vault;
    this.fingerprint = fingerprints.of(card.card_number);
    this.holder = {
      firstName: card.first_name,
      lastName: card.last_name,
      expirationMonth: card.expiration_month,
      expirationYear: card.expiration_year,
    };
  }

  /** The first six digits, the card's issuer identification. */
  get bin(): string {
    return this.#number.slice(0, 6);
  }

  startsWith(prefix: string): boolean {
    return this.#number.startsWith(prefix);
  }

  get isSandboxTestCard(): boolean {
    return UAT_TEST_CARDS.has(this.#number);
  }

  isExpired(now: Date): boolean {
    return isPastExpiry(Number(this.holder.expirationYear), Number(this.holder.expirationMonth), now);
  }

  /** Seals the number into the vault, in the caller's transaction. */
  store(tx: Tx, now: Date): Promise<VaultedCard> {
    return this.#vault.store(
      tx,
      {
        number: this.#number,
        fingerprint: this.fingerprint,
        expirationMonth: Number(this.holder.expirationMonth),
        expirationYear: Number(this.holder.expirationYear),
      },
      now,
    );
  }
}
