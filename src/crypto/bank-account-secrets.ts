import { createHmac, hkdfSync } from 'node:crypto';
import { open, seal } from './secret-box.ts';

/**
 * Account numbers are stored sealed (AES-256-GCM), under a key derived from the master key for this purpose only,
 * and bound to the account's id. Duplicates are found by a keyed fingerprint, so that equal numbers can be compared
 * without decrypting anything and a stolen table does not give numbers away by brute force over the small space.
 */
export class BankAccountSecrets {
  readonly #sealKey: Buffer;
  readonly #fingerprintKey: Buffer;

  constructor(masterKey: Buffer) {
    this.#sealKey = derive(masterKey, 'ewa/bank-account-number/seal');
    this.#fingerprintKey = derive(masterKey, 'ewa/bank-account-number/fingerprint');
  }

  sealAccountNumber(accountId: string, accountNumber: string): Buffer {
    return seal(this.#sealKey, accountNumber, context(accountId));
  }

  /** The account number, for the one place that must send it to a bank (an ACH file). */
  openAccountNumber(accountId: string, sealed: Uint8Array): string {
    return open(this.#sealKey, sealed, context(accountId)).toString('utf8');
  }

  fingerprint(routingNumber: string, accountNumber: string): string {
    return createHmac('sha256', this.#fingerprintKey)
      .update(`${routingNumber}:${accountNumber}`)
      .digest('hex');
  }
}

/** The context bound to a sealed number; opening needs the same account id (used by payouts). */
export function context(accountId: string): string {
  return `bank-account:${accountId}`;
}

function derive(masterKey: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), info, 32));
}
