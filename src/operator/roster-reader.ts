import { type CsvError, type Options, parse } from 'csv-parse';
import type { RosterProblem } from './roster-row.ts';

/** One CSV record and the line it starts on (a quoted cell may span lines). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export interface CsvChunk {
  records: CsvRecord[];
  bytesRead: number;
  /** Set on the last chunk when the text stops being CSV: nothing after this line can be read. */
  problem?: RosterProblem;
}

/** Pieces fed to the parser at a time, so that one huge string (an HTTP body) is still read a little at a time. */
const PIECE_BYTES = 64 * 1024;

/** Counts line breaks the way people count lines: CRLF, CR and LF each end one. */
function lineBreaks(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 13 || (char === 10 && text.charCodeAt(i - 1) !== 13)) count++;
  }
  return count;
}

function pieces(chunk: Buffer | string): Buffer[] {
  const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  const result: Buffer[] = [];
  for (let start = 0; start < buffer.length; start += PIECE_BYTES) {
    result.push(buffer.subarray(start, start + PIECE_BYTES));
  }
  return result;
}

/**
 * Reads CSV records from a stream with csv-parse, yielding them chunk by chunk with the line each starts on, so
 * that the caller writes a batch before more is read (the file is never all in memory). Blank lines are skipped.
 * csv-parse's own line count drifts on CRLF inside quoted cells, so lines are counted here from each record's raw
 * text. A syntax error (an unclosed quote, a record longer than `recordCharsMax`) ends the reading with a problem
 * naming the line; records before it are still yielded.
 */
export async function* readCsvRecords(
  source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  options: { recordCharsMax: number },
): AsyncGenerator<CsvChunk> {
  let pending: CsvRecord[] = [];
  let nextLine = 1;
  let failure: CsvError | Error | undefined;
  const parserOptions: Options = {
    bom: true,
    raw: true,
    // Every line ending ends a record, whatever the first line used: csv-parse otherwise takes the first line's
    // ending for the whole file, and a file whose lines were joined from two systems would merge rows.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    max_record_size: options.recordCharsMax,
    // Records are taken here instead of from the stream's buffer, which a parse error would throw away.
    on_record: (withRaw) => {
      // With `raw`, csv-parse hands each record over as { record, raw }.
      const { record, raw } = withRaw as unknown as { record: string[]; raw: string };
      // Blank lines come as records of their own, so each record starts where the previous one ended.
      const line = nextLine;
      nextLine += lineBreaks(raw);
      if (!record.every((field) => field.trim() === '')) pending.push({ line, fields: record });
      return null;
    },
  };
  const parser = parse(parserOptions);
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.resume();
  const take = (): CsvRecord[] => {
    const records = pending;
    pending = [];
    return records;
  };
  const problem = (): RosterProblem => ({
    line: nextLine,
    field: null,
    // csv-parse's own line number counts differently (see above): the line named is this one.
    detail: `the file is not valid CSV from this line on (${failure!.message
      .replace(/\s+/g, ' ')
      .replace(/ at line \d+/g, '')
      .slice(0, 200)}); nothing after it was read.`,
  });

  // csv-parse reads bytes that are not UTF-8 as U+FFFD: a name would be stored changed without a word.
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const notUtf8 = (records: CsvRecord[], at: number): CsvChunk => ({
    records,
    bytesRead: parser.info.bytes,
    problem: {
      line: at,
      field: null,
      detail:
        'the file is not UTF-8 text from this line on: save it as UTF-8 and import it again; nothing after it was read.',
    },
  });

  for await (const chunk of source) {
    for (const piece of pieces(chunk)) {
      let utf8Failed = false;
      try {
        utf8.decode(piece, { stream: true });
      } catch {
        utf8Failed = true;
      }
      await new Promise<void>((resolve) => parser.write(piece, () => resolve()));
      if (utf8Failed) {
        // The first record of this piece that holds the replacement character is where the text broke; with
        // none, it is the record not yet complete.
        const records = take();
        const broken = records.findIndex((record) => record.fields.some((field) => field.includes('\uFFFD')));
        const at = broken === -1 ? nextLine : records[broken]!.line;
        yield notUtf8(broken === -1 ? records : records.slice(0, broken), at);
        return;
      }
      if (failure) {
        yield { records: take(), bytesRead: parser.info.bytes, problem: problem() };
        return;
      }
      if (pending.length > 0) yield { records: take(), bytesRead: parser.info.bytes };
    }
  }
  await new Promise<void>((resolve) => {
    parser.once('error', () => resolve());
    parser.end(() => resolve());
  });
  let endsInsideACharacter = false;
  try {
    utf8.decode();
  } catch {
    endsInsideACharacter = true;
  }
  if (endsInsideACharacter) {
    const records = take();
    const last = records.at(-1);
    yield notUtf8(records.slice(0, -1), last?.line ?? nextLine);
    return;
  }
  yield { records: take(), bytesRead: parser.info.bytes, ...(failure ? { problem: problem() } : {}) };
}
