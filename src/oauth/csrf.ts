import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const CSRF_COOKIE = 'ewa_csrf';

/**
 * Double-submit CSRF protection for the sign-in forms: a random cookie, and in each form an HMAC of that cookie
 * and the interaction it belongs to. A page of another origin can neither read the cookie nor forge the value.
 */
export class CsrfTokens {
  readonly #key: Buffer;
  constructor(key: Buffer) {
    this.#key = key;
  }

  newCookie(): string {
    return randomBytes(24).toString('base64url');
  }

  formValue(cookie: string, interactionUid: string): string {
    return createHmac('sha256', this.#key).update(`${interactionUid}:${cookie}`).digest('base64url');
  }

  isValid(cookie: string | undefined, interactionUid: string, submitted: unknown): boolean {
    if (!cookie || typeof submitted !== 'string') return false;
    const expected = Buffer.from(this.formValue(cookie, interactionUid));
    const actual = Buffer.from(submitted);
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }
}
