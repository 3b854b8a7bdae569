import { createHash, randomBytes } from 'node:crypto';

/**
 * Crockford's base32: no I, L, O or U, so a code read aloud or copied by hand survives; the letters people confuse
 * with digits are read as those digits.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const READ_AS: Readonly<Record<string, string>> = { O: '0', I: '1', L: '1' };
/** 20 characters of 5 bits: 100 random bits, beyond guessing at any rate a server can answer. */
export const INVITATION_CODE_CHARACTERS = 20;
const GROUP = 5;

/** A new code, grouped for reading (`7K3QM-X9D2A-0B4TR-HV6NC`). */
export function newInvitationCode(): string {
  const bytes = randomBytes(Math.ceil((INVITATION_CODE_CHARACTERS * 5) / 8));
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let code = '';
  for (let index = 0; index < INVITATION_CODE_CHARACTERS; index++) {
    code += ALPHABET[Number(bits & 31n)];
    bits >>= 5n;
  }
  return code.match(new RegExp(`.{${GROUP}}`, 'g'))!.join('-');
}

/**
 * The code as typed, in its one stored form: any case, spaces and dashes anywhere, O read as 0 and I or L as 1.
 * Undefined when it cannot be a code (wrong length or a character outside the alphabet), so no lookup is made.
 */
export function normalizeInvitationCode(text: string): string | undefined {
  if (text.length > 64) return undefined;
  const compact = text
    .toUpperCase()
    // Mail and word processors put in invisible characters and typographic dashes: they are read as nothing and -.
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]/g, '-')
    .replace(/[\s-]+/g, '')
    .replace(/[OIL]/g, (character) => READ_AS[character]!);
  if (compact.length !== INVITATION_CODE_CHARACTERS) return undefined;
  for (const character of compact) if (!ALPHABET.includes(character)) return undefined;
  return compact;
}

/**
 * What is stored of a code. A fast hash is enough: the code is random with 100 bits, not a chosen password, so
 * nothing can be guessed from its hash.
 */
export function invitationCodeHash(normalizedCode: string): string {
  return createHash('sha256').update(normalizedCode).digest('hex');
}
