/**
 * What every Nacha file shares, written or read: 94-character records in blocks of ten, filler records of nines,
 * printable ASCII, an entry hash kept to 10 digits, and the error that names the field or line that does not fit.
 */

export const RECORD_LENGTH = 94;
export const BLOCKING_FACTOR = 10;
export const FILLER_RECORD = '9'.repeat(RECORD_LENGTH);
export const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** The entry hash keeps its last 10 digits. */
export const ENTRY_HASH_MODULUS = 10_000_000_000;

/** A value that does not fit the Nacha layout: `field` names the input field, or `line` the 1-based record. */
export class NachaFormatError extends Error {
  readonly field: string | undefined;
  readonly line: number | undefined;

  constructor(message: string, where: { field?: string; line?: number }) {
    super(where.field !== undefined ? `${where.field}: ${message}` : `line ${where.line}: ${message}`);
    this.name = 'NachaFormatError';
    this.field = where.field;
    this.line = where.line;
  }
}

/**
 * A file's records: lines split on '\n', a '\r' before it and a final newline tolerated, each exactly one record
 * long (else a NachaFormatError with its 1-based line).
 */
export function splitRecords(text: string): string[] {
  if (typeof text !== 'string') throw new NachaFormatError('not text', { line: 1 });
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  return lines.map((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length !== RECORD_LENGTH)
      throw new NachaFormatError(`record is ${line.length} characters, not ${RECORD_LENGTH}`, {
        line: index + 1,
      });
    return line;
  });
}
