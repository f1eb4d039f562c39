/**
 * CSV as RFC 4180 writes it, read as a stream: fields separated by commas (or semicolons, as
 * spreadsheets write it where the comma is the decimal mark, or tabs), records by LF, CRLF or CR; a field in double quotes may hold commas, line breaks and doubled quotes (`""`).
 * A byte-order mark at the start is skipped and blank lines are ignored. About a hundred lines
 * by hand instead of a dependency: the format is small, and the parser must stream.
 */

export interface CsvRecord {
  readonly fields: string[];
  /** The line (1-based) the record starts on, counting line breaks inside quoted fields. */
  readonly line: number;
  /**
   * Set when the record ran past `maxRecordLength`: its fields were dropped as they came
   * (`fields` is empty), so that one endless record cannot fill memory.
   */
  readonly oversized?: true;
}

export class CsvError extends Error {
  readonly line: number;
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`);
    this.name = 'CsvError';
    this.line = line;
  }
}

const State = {
  /** At the start of a field. */
  FieldStart: 0,
  /** Inside a field that did not start with a quote. */
  Unquoted: 1,
  /** Inside a quoted field. */
  Quoted: 2,
  /** Just after a quote inside a quoted field: a second quote, or the end of the field. */
  QuoteInQuoted: 3,
} as const;
type State = (typeof State)[keyof typeof State];

/** The field separators an import reads, with the names the CLI and its reports use. */
export const DELIMITERS = { ',': 'comma', ';': 'semicolon', '\t': 'tab' } as const;
export type Delimiter = keyof typeof DELIMITERS;

/**
 * The separator of a file from its header line: whichever of comma, semicolon and tab occurs
 * most outside quotes; a comma on a tie or when there is none (a file of one column).
 */
export function detectDelimiter(headerLine: string): Delimiter {
  const counts: Record<Delimiter, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of headerLine) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c]++;
  }
  let best: Delimiter = ',';
  for (const candidate of [';', '\t'] as const) if (counts[candidate] > counts[best]) best = candidate;
  return best;
}

/**
 * Parses CSV text arriving in chunks of any size into records, fields split at `delimiter`.
 * A record longer than `maxRecordLength` characters (line breaks included) is still read to
 * its end, but without keeping its text: it comes out `oversized`, with no fields.
 */
export async function* parseCsv(
  chunks: AsyncIterable<string | Buffer> | Iterable<string>,
  delimiter: Delimiter = ',',
  maxRecordLength = Number.POSITIVE_INFINITY,
): AsyncGenerator<CsvRecord> {
  let state: State = State.FieldStart;
  let field = '';
  let fields: string[] = [];
  let recordLength = 0;
  let oversized = false;
  let line = 1;
  let recordLine = 1;
  let quoteLine = 1;
  let lastCR = false;
  let first = true;
  const ready: CsvRecord[] = [];
  let failure: CsvError | undefined;

  const endField = () => {
    if (!oversized) fields.push(field);
    field = '';
  };
  const endRecord = () => {
    endField();
    if (oversized) ready.push({ fields: [], line: recordLine, oversized: true });
    // A blank line is one empty field: not a record.
    else if (!(fields.length === 1 && fields[0] === '')) ready.push({ fields, line: recordLine });
    fields = [];
    state = State.FieldStart;
    recordLength = 0;
    oversized = false;
  };

  for await (const chunk of chunks) {
    let text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (first && text.length > 0) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      // CRLF is one line break: the LF after a CR is skipped (or, inside quotes, not counted).
      const lfOfCRLF = c === '\n' && lastCR;
      lastCR = c === '\r';
      if (++recordLength > maxRecordLength && !oversized) {
        oversized = true;
        fields = [];
        field = '';
      }
      switch (state) {
        case State.FieldStart:
        case State.Unquoted:
          if (lfOfCRLF) break;
          if (c === delimiter) {
            endField();
            state = State.FieldStart;
          } else if (c === '\n' || c === '\r') {
            endRecord();
            line++;
            recordLine = line;
          } else if (c === '"' && state === State.FieldStart) {
            state = State.Quoted;
            quoteLine = line;
          } else {
            if (!oversized) field += c;
            state = State.Unquoted;
          }
          break;
        case State.Quoted:
          if (c === '"') {
            state = State.QuoteInQuoted;
          } else {
            if (c === '\r' || (c === '\n' && !lfOfCRLF)) line++;
            if (!oversized) field += c;
          }
          break;
        case State.QuoteInQuoted:
          if (c === '"') {
            if (!oversized) field += '"';
            state = State.Quoted;
          } else if (c === delimiter) {
            endField();
            state = State.FieldStart;
          } else if (c === '\n' || c === '\r') {
            endRecord();
            line++;
            recordLine = line;
          } else {
            failure = new CsvError(line, `unexpected ${JSON.stringify(c)} after the closing quote of a field`);
          }
          break;
      }
      if (failure !== undefined) break;
    }
    // The records before a fault are handed out first: they are sound.
    while (ready.length > 0) yield ready.shift()!;
    if (failure !== undefined) throw failure;
  }
  if (state === State.Quoted) throw new CsvError(quoteLine, 'a quoted field is never closed');
  if (state !== State.FieldStart || fields.length > 0) endRecord();
  while (ready.length > 0) yield ready.shift()!;
}

/** One field, quoted when it holds a comma, a quote, a line break or surrounding spaces. */
export function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record with its line break. */
export function csvRecord(values: readonly (string | number)[]): string {
  return `${values.map(csvField).join(',')}\n`;
}
