import { hkdfSync } from 'node:crypto';
import { open, seal } from './secret-box.ts';

/**
 * Origination files hold full account numbers, so `ach_files` keeps them sealed (AES-256-GCM) under a key derived
 * from the master key for this purpose only, and bound to the file's window: a sealed file cannot be passed off as
 * another window's. Only the copy written to the outbound folder, for the bank, is plaintext.
 */
export class AchFileSecrets {
  readonly #sealKey: Buffer;

  constructor(masterKey: Buffer) {
    this.#sealKey = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'ewa/ach-file/seal', 32));
  }

  sealFile(windowId: string, content: string): Buffer {
    return seal(this.#sealKey, content, context(windowId));
  }

  openFile(windowId: string, sealed: Uint8Array): string {
    return open(this.#sealKey, sealed, context(windowId)).toString('utf8');
  }
}

/** The context bound to a sealed file: opening needs the same window id. */
export function context(windowId: string): string {
  return `ach-file:${windowId}`;
}
