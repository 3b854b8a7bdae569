import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM under a 32-byte key: `seal` gives version ‖ iv ‖ tag ‖ ciphertext, `open` reverses it and refuses
 * anything tampered with. `context` is bound as associated data, so a value sealed for one row or purpose cannot
 * be moved to another.
 */
export function seal(key: Buffer, plaintext: Buffer | string, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function open(key: Buffer, sealed: Uint8Array, context: string): Buffer {
  const data = Buffer.from(sealed);
  if (data[0] !== VERSION || data.length < 1 + IV_BYTES + TAG_BYTES) throw new Error('not a sealed value');
  const iv = data.subarray(1, 1 + IV_BYTES);
  const tag = data.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(data.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
}
