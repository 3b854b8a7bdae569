import { hkdfSync, randomBytes } from 'node:crypto';
import { open, seal } from '../crypto/secret-box.ts';

/** The Standard Webhooks form of a signing secret: the prefix, then the key in base64. */
const PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A fresh signing secret, as the receiver is given it once. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * Signing secrets must be readable to sign with, so they are kept sealed (AES-256-GCM) under a key derived from
 * the master key for this purpose only, and bound to their endpoint: a sealed secret moved to another endpoint's
 * row does not open.
 */
export class WebhookSecretBox {
  readonly #key: Buffer;

  constructor(masterKey: Buffer) {
    this.#key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'ewa/webhook-secret/seal', 32));
  }

  seal(endpointId: string, secret: string): Buffer {
    return seal(this.#key, secret, `webhook-secret:${endpointId}`);
  }

  open(endpointId: string, sealed: Uint8Array): string {
    return open(this.#key, sealed, `webhook-secret:${endpointId}`).toString('utf8');
  }
}
