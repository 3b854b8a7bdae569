/**
 * Where a page of an `ewa ach returns` listing starts: after the last row of the one before, by its sort key and
 * identity (keyset), so rows read between two pages neither repeat a row nor skip one older than the cursor. The
 * cursor is opaque to the operator (base64url of JSON) and names its listing: one listing's cursor is refused by
 * another. Its time is text exact to the microsecond, as PostgreSQL keeps it (a JS Date keeps milliseconds only,
 * and a row of the same millisecond would be skipped or repeated).
 */

/** The three listings, as their cursors name them. */
export type AchReturnListing = 'ach-return-files' | 'ach-unmatched-returns' | 'ach-change-notifications';

/**
 * The last row's place: its time (read_at of a file, received_at of a return or notification), its file's name and
 * SHA-256, and for a return or notification its position in the file (0 for a file).
 */
export interface AchReturnKey {
  at: string;
  fileName: string;
  sha256: string;
  position: number;
}

const CURSOR_LENGTH_MAX = 2_000;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SHA256 = /^[0-9a-f]{64}$/;
const POSITION_MAX = 2_147_483_647;

export function encodeAchReturnCursor(listing: AchReturnListing, key: AchReturnKey): string {
  const k = [key.at, key.fileName, key.sha256, ...(listing === 'ach-return-files' ? [] : [key.position])];
  return Buffer.from(JSON.stringify({ l: listing, k }), 'utf8').toString('base64url');
}

/** The key a cursor of this listing holds; undefined for anything else (malformed, or another listing's). */
export function decodeAchReturnCursor(listing: AchReturnListing, text: string): AchReturnKey | undefined {
  if (text.length > CURSOR_LENGTH_MAX || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { l, k } = (cursor ?? {}) as Record<string, unknown>;
  const files = listing === 'ach-return-files';
  if (l !== listing || !Array.isArray(k) || k.length !== (files ? 3 : 4)) return undefined;
  const [at, fileName, sha256, position = 0] = k as unknown[];
  if (!validTime(at) || !validName(fileName) || typeof sha256 !== 'string' || !SHA256.test(sha256))
    return undefined;
  if (
    !Number.isInteger(position) ||
    (position as number) < (files ? 0 : 1) ||
    (position as number) > POSITION_MAX
  )
    return undefined;
  return { at, fileName, sha256, position: position as number };
}

/** A time as pageKeySql writes it; PostgreSQL has no year 0, which Date takes, so that year was never ours. */
function validTime(at: unknown): at is string {
  if (typeof at !== 'string' || !TIME.test(at) || at.startsWith('0000')) return false;
  const date = new Date(`${at.slice(0, 23)}Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === at.slice(0, 19);
}

/** A name a file could have had: PostgreSQL text holds no NUL, and a name read from a folder is well-formed. */
function validName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && !name.includes('\0') && name.isWellFormed();
}
