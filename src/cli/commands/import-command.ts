/**
 * `shortlink import`: loads links from a file (our own export, or another shortener's) straight
 * into the database, batch by batch, and reports every row it did not import.
 */
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { createAccountWithCode } from '../../accounts/access-code.ts';
import { createDomainService, type DomainService } from '../../domains/domain-service.ts';
import { DomainError } from '../../errors.ts';
import { DEFAULT_DOMAIN_ROW } from '../../domains/domain-store.ts';
import { linkKey } from '../../links/link-key.ts';
import { GENERATION_ATTEMPTS, generateShortcode } from '../../links/shortcode.ts';
import type { AdminStore, ImportLink, ImportOutcome } from '../../store/admin.ts';
import { reserveCodeFile, type CodeFileSlot } from '../access-code-source.ts';
import { CliFailure, parseCommand, UsageError, wholeNumber, type CliContext, type Command } from '../command.ts';
import { CsvError, DELIMITERS, detectDelimiter, parseCsv, type Delimiter } from '../csv.ts';
import { checkRow, describeColumns, detectColumns, hostOf, layoutName, MAX_ROW_LENGTH, type ColumnMap, type RowRules } from '../import-rows.ts';
import { createProgress } from '../progress.ts';
import { DATABASE_HELP, openAdmin } from './admin-commands.ts';
import { configOf } from './server-commands.ts';

/** Rows written per transaction: large enough to be fast, small enough not to hold up a live server. */
export const IMPORT_BATCH = 1000;

export const importLinks: Command = {
  name: 'import',
  summary: 'load links from a file: import FILE [--account UID] [--dry-run] …',
  help: `Usage: shortlink import FILE [--format csv|jsonl|json] [--delimiter comma|semicolon|tab]
                       [--account UID] [--raise-cap] [--dry-run] [--save-code PATH]
                       [--domain HOST] [--create-domains]

Imports links from FILE ("-" for stdin): a "shortlink export", or a file from another
shortener: CSV (comma-, semicolon- or tab-separated), JSON lines, or one JSON document (an
array of links, or Kutt's API answer {"data": […]}). Columns are recognised by name (case,
spaces and punctuation ignored):

  shortcode   ShortCode, shortCode (Shlink), keyword (YOURLS), address (Kutt), slug, alias;
              or the last path segment of a short URL: link (Bitly), shortUrl
  url         PointsTo, longUrl (Shlink), long_url (Bitly), url (YOURLS), target (Kutt)
  accesses    Accesses, visits (Shlink), clicks (YOURLS, Bitly), visit_count (Kutt)
  created     DateCreated, createdAt, created_at, timestamp (YOURLS)
  title       Title, title (YOURLS, Shlink, Bitly), description (Kutt)
  tags        Tags (ours: "a,b"), tags (Shlink: "a|b", or its API's array)
  expires     ExpiresAt, expire_in (Kutt), meta.validUntil (Shlink's API)
  visit limit MaxVisits, meta.maxVisits (Shlink's API)
  domain      Domain, domain (Shlink); without one, the host of the short URL column
              (link, shortUrl): empty, or BASE_URL's host, is the default domain
  forwarding  ForwardQuery, forwardQuery (Shlink): true or false (empty: false)
  rules       Rules: JSON, as LinkDetails shows them ([{"If": …, "To": …}]) or as the rules
              parameter takes them ([{"if": …, "to": …}]), checked like the API's

Only the url is required: a missing shortcode is generated, missing accesses are 0, a missing
date is now, missing details are none. A "shortlink export" comes back whole. Another
shortener's title is cut to 200 characters, its line breaks made spaces; an expiry may be
past (the link comes back expired). Every row is checked like an API request (same url rules, with BASE_URL and
BLOCKED_HOSTS from the environment), except that a shortcode keeps its length: any code of
1-2000 characters from A-Z a-z 0-9 - . _ ~ is kept (YOURLS' "1", Bitly's 4 characters) and
resolves; only a reserved name (docs, healthz, …, in any case) is refused. Rows Kutt marks
banned, and password-protected rows (Kutt's, or Protected true in ours), are refused: no
export carries a password, so they would open to anyone. Accesses and dates are kept. A
shortcode is unique per domain: one that is already taken on its domain (or appears earlier
in the file for that domain) is a conflict: reported, never overwritten. A row on a domain
that is not registered is refused, naming it, unless --create-domains registers it.
Each not-imported row is listed with its line (its entry, in a JSON document), then a summary.

Dates: ISO 8601 / RFC 3339 with Z or an offset; YYYY-MM-DD HH:MM:SS or YYYY-MM-DD without
one (YOURLS), taken as UTC; Unix time in seconds or milliseconds; an HTTP date. Dates like
03/15/2024 or 15/03/2024 are refused as ambiguous, never guessed.

Options:
  --format csv|jsonl|json  default: from the file's extension (.csv, .tsv, .jsonl), else
                      from its first line: "[" or an object spread over lines (or holding
                      "data") is one JSON document, "{" JSON lines, anything else CSV
  --delimiter comma|semicolon|tab  the CSV field separator (also "," ";" "\\t"); default: the
                      one the header line holds most of (tab for .tsv files); implies CSV
  --account UID       the account that receives the links; its cap is respected: rows past it
                      are reported as over the cap (see --raise-cap)
  --raise-cap         raise the account's MaxLinks to hold every imported link
  (no --account)      a new account is created for the import, with MaxLinks raised to hold
                      its links; its access code is printed once
  --save-code PATH    write that new account's access code to PATH (mode 0600) instead
  --dry-run           check everything against the database, write nothing
  --domain HOST       put every link on the domain HOST, whatever the file says (BASE_URL's
                      host: the default domain): for a Bitly file whose links are on bit.ly
  --create-domains    register each domain the file names that is not registered yet, with
                      origin https://HOST (change it with "shortlink admin domains add")

Rows are written in transactions of ${IMPORT_BATCH}; a progress line goes to stderr every 10,000 rows.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: importLinks,
      options: {
        format: { type: 'string' },
        delimiter: { type: 'string' },
        account: { type: 'string' },
        'raise-cap': { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        'save-code': { type: 'string' },
        domain: { type: 'string' },
        'create-domains': { type: 'boolean' },
      },
      positionals: ['file'],
    });
    if (parsed === undefined) return 0;
    const { values } = parsed;
    const file = parsed.positionals[0]!;
    const accountUid = values.account === undefined ? undefined : wholeNumber(importLinks, '--account', values.account, 1);
    if (accountUid !== undefined && values['save-code'] !== undefined) {
      throw new UsageError(importLinks.name, '--save-code is for the account an import creates; it cannot go with --account');
    }
    const dryRun = values['dry-run'] === true;
    const flagDelimiter = values.delimiter === undefined ? undefined : delimiterOf(values.delimiter);
    let flagFormat = importFormatOf(values.format, file === '-' ? undefined : file);
    if (flagDelimiter !== undefined) {
      if (values.format !== undefined && values.format !== 'csv') {
        throw new UsageError(importLinks.name, `--delimiter is for CSV files; it cannot go with --format ${values.format}`);
      }
      flagFormat = 'csv';
    }

    const config = configOf(context.env);
    const defaultHost = new URL(config.baseUrl).hostname.toLowerCase();
    let domain: string | null | undefined;
    if (values.domain !== undefined) {
      const host = values.domain === '' ? '' : hostOf(values.domain);
      if (host === undefined) throw new UsageError(importLinks.name, `--domain must be a host name, got ${JSON.stringify(values.domain)}`);
      domain = host === '' || host === defaultHost ? null : host;
    }
    const chunks = await openInput(file);
    let store: AdminStore | undefined;
    try {
      let head: string;
      try {
        head = await chunks.head();
      } catch (error) {
        if (error instanceof NotUtf8) throw new CliFailure(`${file}: ${error.message}`);
        throw error;
      }
      const format = flagFormat ?? sniffFormat(head);
      const delimiter = flagDelimiter ?? (file !== '-' && TAB_EXTENSIONS.has(extname(file).toLowerCase()) ? '\t' : detectDelimiter(head));
      store = await openAdmin(config, !dryRun);
      const run = createImportRun(store, context, {
        dryRun,
        accountUid,
        raiseCap: values['raise-cap'] === true,
        defaultMaxLinks: config.defaultMaxLinks,
        saveCode: values['save-code'],
        createDomains: values['create-domains'] === true,
        baseUrl: config.baseUrl,
        rules: {
          ownOrigin: new URL(config.baseUrl).origin, blockedHosts: config.blockedHosts, selfHosts: [...config.selfHosts], now: new Date().toISOString(),
          defaultHost, ...(domain === undefined ? {} : { domain }),
        },
      });
      await run.prepare();
      let reading = true;
      try {
        for await (const row of readRows(format, delimiter, chunks.stream())) {
          reading = false;
          await run.add(row);
          reading = true;
        }
        reading = false;
        await run.finish();
      } catch (error) {
        // A file that turns unreadable part-way still has every row before the bad one
        // imported, so a rerun of the fixed file finds exactly those as conflicts.
        await run.abort(reading);
        if (error instanceof CsvError || error instanceof JsonDocumentError || error instanceof NotUtf8) {
          throw new CliFailure(`${file}: ${error.message}`);
        }
        throw error;
      }
    } finally {
      await store?.close();
      await chunks.close();
    }
    return 0;
  },
};

// ---------------------------------------------------------------------------------------------
// Reading

/** What an import reads: CSV, JSON lines, or one JSON document holding an array of links. */
export type ImportFormat = 'csv' | 'jsonl' | 'json';

const FORMATS: readonly ImportFormat[] = ['csv', 'jsonl', 'json'];
/** Extensions of tab-separated files: CSV read with a tab unless --delimiter says otherwise. */
const TAB_EXTENSIONS = new Set(['.tsv', '.tab']);

/** The format from --format, else from the file's extension; undefined: look at the content. */
function importFormatOf(flag: string | undefined, path: string | undefined): ImportFormat | undefined {
  if (flag !== undefined) {
    if ((FORMATS as readonly string[]).includes(flag)) return flag as ImportFormat;
    throw new UsageError(importLinks.name, `--format must be csv, jsonl or json, got ${JSON.stringify(flag)}`);
  }
  const extension = path === undefined ? '' : extname(path).toLowerCase();
  if (extension === '.csv' || TAB_EXTENSIONS.has(extension)) return 'csv';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  // A .json file may be either JSON lines (what "shortlink export" wrote before) or one document.
  return undefined;
}

const DELIMITER_NAMES: Readonly<Record<string, Delimiter>> = {
  comma: ',', ',': ',', semicolon: ';', ';': ';', tab: '\t', '\t': '\t', '\\t': '\t',
};

function delimiterOf(flag: string): Delimiter {
  const delimiter = DELIMITER_NAMES[flag.toLowerCase()];
  if (delimiter === undefined) {
    throw new UsageError(importLinks.name, `--delimiter must be comma, semicolon or tab (or ",", ";", "\\t"), got ${JSON.stringify(flag)}`);
  }
  return delimiter;
}

/**
 * The format from the file's first non-blank line: `[` starts a JSON document; `{` starts JSON
 * lines, unless that line is not a whole object (a document spread over lines) or is an object
 * holding a `data` array (Kutt's API answer on one line); anything else is CSV.
 */
function sniffFormat(head: string): ImportFormat {
  if (head.startsWith('[')) return 'json';
  if (!head.startsWith('{')) return 'csv';
  try {
    const value: unknown = JSON.parse(head);
    return value !== null && typeof value === 'object' && Array.isArray((value as Record<string, unknown>).data) ? 'json' : 'jsonl';
  } catch {
    return 'json';
  }
}

interface Input {
  /**
   * The first non-blank line (byte-order mark and leading blanks removed), read ahead; only
   * its first {@link MAX_ROW_LENGTH} characters when it is longer (a JSON document on one line).
   */
  head(): Promise<string>;
  stream(): AsyncIterable<string>;
  close(): Promise<void>;
}

/** Bytes that are not UTF-8: the file is refused there rather than read with U+FFFD in their place. */
class NotUtf8 extends Error {}

/**
 * Decodes UTF-8 strictly, a line at a time so that the report can say where the file stops
 * being text. A line break (0x0A) never occurs inside a multi-byte character, so each line
 * ends a character; the decoder carries a character split between chunks over.
 */
async function* strictUtf8(source: AsyncIterable<Buffer>): AsyncGenerator<string> {
  // The byte-order mark is kept, for the readers that skip it to find.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let line = 1;
  const refuse = () => new NotUtf8(`line ${line}: the file is not UTF-8 text there; save it as UTF-8 (the import never guesses another encoding)`);
  for await (const chunk of source) {
    const pieces: string[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      try {
        pieces.push(decoder.decode(chunk.subarray(start, end), { stream: newline === -1 }));
      } catch {
        // The lines before are sound: they are read (and imported) first.
        if (pieces.length > 0) yield pieces.join('');
        throw refuse();
      }
      if (newline === -1) break;
      line++;
      start = end;
    }
    yield pieces.join('');
  }
  try {
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  } catch {
    throw refuse();
  }
}

async function openInput(file: string): Promise<Input> {
  let bytes: AsyncIterable<Buffer>;
  let close = async () => {};
  if (file === '-') {
    bytes = process.stdin;
  } else {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      throw new CliFailure(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const stream = handle.createReadStream();
    bytes = stream;
    close = async () => {
      stream.destroy();
      await handle.close().catch(() => undefined);
    };
  }
  const iterator = strictUtf8(bytes)[Symbol.asyncIterator]();
  const peeked: string[] = [];
  return {
    async head() {
      // Read until a line break follows some content, or the input ends. Only the new chunk
      // is searched: a file of one long line (a JSON document) arrives in many.
      let text = peeked.join('').replace(/^[\s\ufeff]+/, '');
      let complete = /[\r\n]/.test(text);
      while (!complete && text.length <= MAX_ROW_LENGTH) {
        const next = await iterator.next();
        if (next.done === true) break;
        peeked.push(next.value);
        const chunk = text === '' ? next.value.replace(/^[\s\ufeff]+/, '') : next.value;
        text += chunk;
        complete = /[\r\n]/.test(chunk);
      }
      return text.split(/[\r\n]/, 1)[0]!.slice(0, MAX_ROW_LENGTH).trimEnd();
    },
    async *stream() {
      yield* peeked;
      for (;;) {
        const next = await iterator.next();
        if (next.done === true) return;
        yield next.value;
      }
    },
    close,
  };
}

/** One row of the file: where it is and a lookup of values by column name. */
interface SourceRow {
  /** How the report names the row: `line 3` (CSV, JSON lines) or `entry 3` (a JSON document). */
  readonly where: string;
  /** Set when the row cannot be read at all (bad JSON, no url column). */
  readonly problem?: string;
  readonly get: (header: string) => unknown;
  readonly columns: ColumnMap | undefined;
  readonly headers: readonly string[];
  /** Said once in the report, after the layout: e.g. `semicolon-separated`. */
  readonly shape?: string;
}

/**
 * An object's keys, with those of objects inside it one level down as `outer.inner`: Shlink
 * keeps a link's limits in `meta` (`meta.validUntil`, `meta.maxVisits`) and its visits in
 * `visitsSummary.total`.
 */
function flatten(object: Record<string, unknown>): Record<string, unknown> {
  let flat: Record<string, unknown> | undefined;
  for (const [key, inner] of Object.entries(object)) {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) continue;
    flat ??= { ...object };
    for (const [innerKey, innerValue] of Object.entries(inner as Record<string, unknown>)) {
      if (!(`${key}.${innerKey}` in flat)) flat[`${key}.${innerKey}`] = innerValue;
    }
  }
  return flat ?? object;
}

/** A JSON document that holds no links the import can find. */
class JsonDocumentError extends Error {}

async function* readRows(format: ImportFormat, delimiter: Delimiter, chunks: AsyncIterable<string>): AsyncGenerator<SourceRow> {
  if (format === 'csv') {
    let headers: string[] | undefined;
    let columns: ColumnMap | undefined;
    let index = new Map<string, number>();
    const shape = delimiter === ',' ? undefined : `${DELIMITERS[delimiter]}-separated`;
    for await (const record of parseCsv(chunks, delimiter, MAX_ROW_LENGTH)) {
      if (record.oversized === true) {
        if (headers === undefined) throw new CliFailure(`line ${record.line}: the header is ${TOO_LONG}`);
        yield { where: `line ${record.line}`, problem: `the record is ${TOO_LONG}`, get: () => undefined, columns: undefined, headers: [] };
        continue;
      }
      if (headers === undefined) {
        headers = record.fields.map((field) => field.trim());
        const found = detectColumns(headers);
        if (typeof found === 'string') throw new CliFailure(`line ${record.line}: ${found}`);
        columns = found;
        index = new Map(headers.map((header, i) => [header, i]));
        continue;
      }
      const fields = record.fields;
      yield { where: `line ${record.line}`, columns, headers, shape, get: (header) => fields[index.get(header) ?? -1] };
    }
    if (headers === undefined) throw new CliFailure('the file is empty: not even a header line');
    return;
  }

  // A mapping per set of keys, since nothing forces every object to use the same ones.
  const mappings = new Map<string, ColumnMap | string>();
  const rowOf = (value: unknown, where: string, shape?: string): SourceRow => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { where, problem: 'not a JSON object', get: () => undefined, columns: undefined, headers: [] };
    }
    const object = flatten(value as Record<string, unknown>);
    const headers = Object.keys(object);
    const signature = headers.join('\u0000');
    let mapping = mappings.get(signature);
    if (mapping === undefined) {
      mapping = detectColumns(headers);
      mappings.set(signature, mapping);
    }
    if (typeof mapping === 'string') return { where, problem: mapping, get: () => undefined, columns: undefined, headers };
    return { where, columns: mapping, headers, shape, get: (header) => object[header] };
  };

  if (format === 'json') {
    // One document, read whole: the API answers it comes from are pages of at most thousands.
    let text = '';
    for await (const chunk of chunks) text += chunk;
    let document: unknown;
    try {
      document = JSON.parse(text.replace(/^\ufeff/, ''));
    } catch (error) {
      throw new JsonDocumentError(`not a valid JSON document (${(error as Error).message})`);
    }
    const data = document !== null && typeof document === 'object' && !Array.isArray(document)
      ? (document as Record<string, unknown>).data
      : document;
    if (!Array.isArray(data)) {
      const keys = document !== null && typeof document === 'object' ? Object.keys(document).map((key) => JSON.stringify(key)).join(', ') : '';
      throw new JsonDocumentError(
        `a JSON document must be an array of links, or an object whose "data" is one (Kutt's API answer); found ${keys === '' ? 'no array' : `the keys ${keys}`}`,
      );
    }
    const shape = Array.isArray(document) ? 'JSON array' : 'JSON document, its "data"';
    for (const [i, value] of data.entries()) yield rowOf(value, `entry ${i + 1}`, shape);
    return;
  }

  // JSON lines, each kept only up to MAX_ROW_LENGTH: a longer one is refused as it streams past.
  let line = 0;
  let pieces: string[] = [];
  let length = 0;
  let oversized = false;
  const endLine = (): SourceRow | undefined => {
    line++;
    const text = pieces.join('');
    const tooLong = oversized;
    pieces = [];
    length = 0;
    oversized = false;
    if (tooLong) return { where: `line ${line}`, problem: `the line is ${TOO_LONG}`, get: () => undefined, columns: undefined, headers: [] };
    if (text.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { where: `line ${line}`, problem: 'not valid JSON', get: () => undefined, columns: undefined, headers: [] };
    }
    return rowOf(value, `line ${line}`);
  };
  let first = true;
  for await (let chunk of chunks) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf('\n', start);
      const end = newline === -1 ? chunk.length : newline;
      if (!oversized) {
        length += end - start;
        if (length > MAX_ROW_LENGTH) {
          oversized = true;
          pieces = [];
        } else if (end > start) {
          pieces.push(chunk.slice(start, end));
        }
      }
      if (newline === -1) break;
      const row = endLine();
      if (row !== undefined) yield row;
      start = newline + 1;
    }
  }
  const row = endLine();
  if (row !== undefined) yield row;
}

/** Why a row past {@link MAX_ROW_LENGTH} is refused. */
const TOO_LONG = `longer than ${MAX_ROW_LENGTH.toLocaleString('en')} characters, far more than any link needs; it was not read`;

// ---------------------------------------------------------------------------------------------
// Importing

interface RunOptions {
  readonly dryRun: boolean;
  readonly accountUid: number | undefined;
  readonly raiseCap: boolean;
  readonly defaultMaxLinks: number;
  readonly saveCode: string | undefined;
  /** Register the unregistered domains rows name (`--create-domains`). */
  readonly createDomains: boolean;
  readonly baseUrl: string;
  /** Its `selfHosts` array grows with the registered domains: a target there is a loop. */
  readonly rules: RowRules & { readonly selfHosts: string[] };
}

/** A row on its way: rejected before the database, or waiting for its batch. */
interface Entry {
  /** How the report names the row (`line 3`, `entry 3`). */
  readonly where: string;
  /** Set once the row is settled without the database. */
  note?: string;
  /** `shortCode` is the link's key (links/link-key.ts): its code on its domain. */
  link?: Omit<ImportLink, 'shortCode'> & { shortCode: string };
  /** The link's domain (null: the default one), for a code drawn again. */
  domain: string | null;
  /** The file gave no shortcode: a taken one is drawn again instead of reported. */
  generated: boolean;
  attempts: number;
}

interface Totals {
  rows: number;
  imported: number;
  conflicts: number;
  rejected: number;
  overCap: number;
}

function createImportRun(store: AdminStore, context: CliContext, options: RunOptions) {
  const out = (text: string) => context.stdout.write(text);
  const progress = createProgress(context.stderr, options.dryRun ? 'checked' : 'read');
  const totals: Totals = { rows: 0, imported: 0, conflicts: 0, rejected: 0, overCap: 0 };
  // Keys met so far in the file and where: a repeat is a conflict with the earlier row.
  const seen = new Map<string, string>();
  // Registered hosts (the default domain's is not one); filled by prepare().
  const registered = new Set<string>();
  let domainService: DomainService | undefined;
  let batch: Entry[] = [];
  let retry: Entry[] = [];
  let uid: number | undefined = options.accountUid;
  let maxLinks: number | undefined;
  let raiseCap = options.raiseCap;
  let described = false;
  let codeSlot: CodeFileSlot | undefined;

  async function ensureAccount(): Promise<number | null> {
    if (uid !== undefined) return uid;
    if (options.dryRun) return null;
    const account = await createAccountWithCode(store, { dateCreated: new Date().toISOString(), maxLinks: options.defaultMaxLinks });
    const { accessCode } = account;
    uid = account.uid;
    if (codeSlot !== undefined) {
      codeSlot.write(accessCode);
      codeSlot = undefined;
      out(`Created account ${uid} for the import; its access code is in ${options.saveCode} (mode 0600).\n`);
    } else {
      out(`Created account ${uid} for the import. Its access code, shown only this once:\n  ${accessCode}\n`);
    }
    return uid;
  }

  function settle(entry: Entry, kind: keyof Omit<Totals, 'rows' | 'imported'>, note: string): void {
    totals[kind]++;
    entry.note = note;
  }

  async function flush(): Promise<void> {
    const pending = batch.filter((entry) => entry.note === undefined);
    if (pending.length > 0) {
      const target = await ensureAccount();
      const outcomes = await store.importLinks(
        pending.map((entry): ImportLink => entry.link!),
        { accountUid: target, raiseCap, dryRun: options.dryRun, pendingLinks: totals.imported },
      );
      pending.forEach((entry, i) => record(entry, outcomes[i]!));
    }
    for (const entry of batch) if (entry.note !== undefined && entry.note !== '') out(`${entry.where}: ${entry.note}\n`);
    batch = [];
    // Generated codes that happened to be taken are drawn again in the next batch.
    if (retry.length > 0) {
      const again = retry;
      retry = [];
      for (const entry of again) {
        entry.link!.shortCode = freshCode(entry.where, entry.domain);
        batch.push(entry);
      }
    }
  }

  function record(entry: Entry, outcome: ImportOutcome): void {
    const code = entry.link!.shortCode;  // the key: host/code off the default domain
    if (outcome === 'imported') {
      totals.imported++;
      entry.note = '';
    } else if (outcome === 'taken') {
      if (entry.generated && entry.attempts < GENERATION_ATTEMPTS) {
        // Not counted yet: the row goes round again with a new code.
        entry.attempts++;
        retry.push(entry);
        return;
      }
      settle(entry, 'conflicts', `conflict: the shortcode "${code}" is already taken${entry.domain === null ? '' : ' on its domain'}`);
    } else {
      settle(
        entry,
        'overCap',
        `over the cap: "${code}" not imported; account ${uid} already holds its maximum of ${maxLinks} links (--raise-cap lifts it)`,
      );
    }
  }

  function freshCode(where: string, domain: string | null): string {
    for (;;) {
      const key = linkKey(domain, generateShortcode());
      if (!seen.has(key)) {
        seen.set(key, where);
        return key;
      }
    }
  }

  /**
   * Whether links may go to `host`: registered, or registered now (--create-domains; a dry run
   * only says it would be). The reason when not.
   */
  async function domainReady(host: string): Promise<string | undefined> {
    if (registered.has(host)) return undefined;
    if (!options.createDomains) {
      return `the domain "${host}" is not registered (register it with "shortlink admin domains add https://${host}", ` +
        'or give --create-domains; --domain HOST puts every row on one domain)';
    }
    if (!options.dryRun) {
      try {
        await service().put({ origin: `https://${host}` });
      } catch (error) {
        if (error instanceof DomainError) return `the domain "${host}" cannot be registered: ${error.message}`;
        throw error;
      }
    }
    registered.add(host);
    options.rules.selfHosts.push(host);
    out(`${options.dryRun ? 'Would register' : 'Registered'} the domain ${host} (origin https://${host}).\n`);
    return undefined;
  }

  function service(): DomainService {
    domainService ??= createDomainService({ store: store.domains, baseUrl: options.baseUrl });
    return domainService;
  }

  return {
    /** Checks the account and reserves the code file, before anything is read or written. */
    async prepare(): Promise<void> {
      const defaultHost = options.rules.defaultHost;
      for (const row of await store.domains.listDomains()) {
        if (row.host !== DEFAULT_DOMAIN_ROW && row.host !== defaultHost) registered.add(row.host);
      }
      // As the API's loop rule: a target on a registered domain would redirect back here.
      options.rules.selfHosts.push(...registered);
      if (uid !== undefined) {
        const account = await store.findAccount(uid);
        if (account === undefined) throw new CliFailure(`there is no account ${uid}`);
        maxLinks = account.maxLinks;
      } else {
        // An account made for the import exists to hold what the file has.
        raiseCap = true;
        if (options.saveCode !== undefined && !options.dryRun) codeSlot = reserveCodeFile(options.saveCode);
      }
    },

    async add(row: SourceRow): Promise<void> {
      if (!described && row.columns !== undefined) {
        described = true;
        const shape = row.shape === undefined ? '' : ` (${row.shape})`;
        out(`${options.dryRun ? 'Dry run (nothing is written). ' : ''}Reading ${layoutName(row.headers)} layout${shape}: ${describeColumns(row.columns, options.rules.domain)}.\n`);
      }
      totals.rows++;
      progress.tick();
      const entry: Entry = { where: row.where, generated: false, attempts: 0, domain: null };
      if (row.problem !== undefined || row.columns === undefined) {
        settle(entry, 'rejected', `rejected: ${row.problem ?? 'unreadable row'}`);
      } else {
        const checked = checkRow(row.get, row.columns, options.rules);
        if (!checked.ok) {
          settle(entry, 'rejected', `rejected: ${checked.reason}`);
        } else {
          const { shortCode, pointsTo, accesses, dateCreated, title, tags, expiresAt, maxVisits, domain, forwardQuery, rules } = checked.row;
          const key = shortCode === undefined ? undefined : linkKey(domain, shortCode);
          const earlier = key === undefined ? undefined : seen.get(key);
          const refused = domain === null ? undefined : await domainReady(domain);
          if (refused !== undefined) {
            settle(entry, 'rejected', `rejected: ${refused}`);
          } else if (earlier !== undefined) {
            settle(entry, 'conflicts', `conflict: the shortcode "${key}" appears earlier in the file (${earlier})`);
          } else {
            if (key !== undefined) seen.set(key, row.where);
            entry.domain = domain;
            entry.link = {
              shortCode: key ?? freshCode(row.where, domain), pointsTo, accesses, dateCreated, title, tags, expiresAt, maxVisits, forwardQuery, rules,
            };
            entry.generated = shortCode === undefined;
          }
        }
      }
      batch.push(entry);
      if (batch.length >= IMPORT_BATCH) await flush();
    },

    async finish(): Promise<void> {
      do await flush();
      while (batch.length > 0);
      await summarise();
    },

    /**
     * After a failure: imports the rows read before it when the file was at fault (not the
     * database), says what was done, and removes an unused code file.
     */
    async abort(whileReading: boolean): Promise<void> {
      if (whileReading && totals.rows > 0) {
        try {
          do await flush();
          while (batch.length > 0);
        } catch {
          // The database failed too; the summary says what got in.
        }
      }
      codeSlot?.abandon();
      codeSlot = undefined;
      if (totals.rows === 0) return;
      out(`Stopped after ${totals.rows} rows.\n`);
      await summarise().catch(() => undefined);
    },
  };

  async function summarise(): Promise<void> {
    if (totals.rows === 0) {
      out('The file has no rows to import.\n');
    }
    if (codeSlot !== undefined) {
      // Nothing was imported, so no account was made.
      codeSlot.abandon();
      codeSlot = undefined;
    }
    const verb = options.dryRun ? 'Would import' : 'Imported';
    let where: string;
    if (uid === undefined) {
      where = options.dryRun ? 'a new account' : 'no account (none was created)';
    } else {
      const account = options.dryRun ? undefined : await store.findAccount(uid);
      where = account === undefined
        ? `account ${uid}`
        : `account ${uid}, which now holds ${account.linkCount} links (MaxLinks ${account.maxLinks})`;
    }
    out(
      `${verb} ${totals.imported} of ${totals.rows} rows into ${where}.\n` +
        `Not imported: ${totals.conflicts} conflicts (shortcode taken), ${totals.rejected} rejected, ${totals.overCap} over the cap.\n`,
    );
  }
}
