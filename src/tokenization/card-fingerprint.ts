import { createHmac, hkdfSync } from 'node:crypto';

/**
 * A keyed fingerprint of a card number: equal cards give equal fingerprints, so that duplicates and card testing
 * can be found without storing or comparing numbers, and the small space of card numbers cannot be searched
 * without the key. Derived from the master key, so it stays the same when vault keys rotate.
 */
export class CardFingerprints {
  readonly #key: Buffer;

  constructor(masterKey: Buffer) {
    this.#key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'ewa/card-fingerprint', 32));
  }

  of(cardNumber: string): string {
    return createHmac('sha256', this.#key).update(cardNumber).digest('hex');
  }
}
