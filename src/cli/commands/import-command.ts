/**
 * `shortlink import`: loads links from a file (our own export, or another shortener's) straight
 * into the database, batch by batch, and reports every row it did not import.
 */
import { open } from 'node:fs/promises';
import { hashAccessCode, newAccessCode } from '../../accounts/access-code.ts';
import { generateShortcode } from '../../links/shortcode.ts';
import type { AdminStore, ImportLink, ImportOutcome } from '../../store/admin.ts';
import { reserveCodeFile, type CodeFileSlot } from '../access-code-source.ts';
import { CliFailure, parseCommand, UsageError, wholeNumber, type CliContext, type Command } from '../command.ts';
import { CsvError, parseCsv } from '../csv.ts';
import { checkRow, describeColumns, detectColumns, layoutName, type ColumnMap, type RowRules } from '../import-rows.ts';
import { createProgress } from '../progress.ts';
import { DATABASE_HELP, formatOf, openAdmin, type FileFormat } from './admin-commands.ts';
import { configOf } from './server-commands.ts';

/** Rows written per transaction: large enough to be fast, small enough not to hold up a live server. */
export const IMPORT_BATCH = 1000;
// Tries at a fresh code for a row whose file gave none, before giving up on it.
const GENERATION_ATTEMPTS = 8;

export const importLinks: Command = {
  name: 'import',
  summary: 'load links from a file: import FILE [--account UID] [--dry-run] …',
  help: `Usage: shortlink import FILE [--format jsonl|csv] [--account UID] [--raise-cap]
                       [--dry-run] [--save-code PATH]

Imports links from FILE ("-" for stdin): a "shortlink export", or a CSV or JSONL file from
another shortener. Columns are recognised by name (case, spaces and punctuation ignored):

  shortcode   ShortCode, shortCode (Shlink), keyword (YOURLS), address (Kutt), slug, alias;
              or the last path segment of a short URL: link (Bitly), shortUrl
  url         PointsTo, longUrl (Shlink), long_url (Bitly), url (YOURLS), target (Kutt)
  accesses    Accesses, visits (Shlink), clicks (YOURLS, Bitly), visit_count (Kutt)
  created     DateCreated, createdAt, created_at, timestamp (YOURLS, taken as UTC), Unix time

Only the url is required: a missing shortcode is generated, missing accesses are 0, a missing
date is now. Every row is checked like an API request (same url and shortcode rules, with
BASE_URL and BLOCKED_HOSTS from the environment). Accesses and dates are kept. A shortcode
that is already taken (or appears earlier in the file) is a conflict: reported, never
overwritten. Each not-imported row is listed with its line number, then a summary.

Options:
  --format jsonl|csv  default: from the file's extension, else guessed from its first character
  --account UID       the account that receives the links; its cap is respected: rows past it
                      are reported as over the cap (see --raise-cap)
  --raise-cap         raise the account's MaxLinks to hold every imported link
  (no --account)      a new account is created for the import, with MaxLinks raised to hold
                      its links; its access code is printed once
  --save-code PATH    write that new account's access code to PATH (mode 0600) instead
  --dry-run           check everything against the database, write nothing

Rows are written in transactions of ${IMPORT_BATCH}; a progress line goes to stderr every 10,000 rows.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: importLinks,
      options: {
        format: { type: 'string' },
        account: { type: 'string' },
        'raise-cap': { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        'save-code': { type: 'string' },
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
    const flagFormat = formatOf(importLinks, values.format, file === '-' ? undefined : file);

    const config = configOf(context.env);
    const chunks = await openInput(file);
    let store: AdminStore | undefined;
    try {
      const format = flagFormat ?? (await chunks.sniff());
      store = await openAdmin(config, !dryRun);
      const run = createImportRun(store, context, {
        dryRun,
        accountUid,
        raiseCap: values['raise-cap'] === true,
        defaultMaxLinks: config.defaultMaxLinks,
        saveCode: values['save-code'],
        rules: { ownOrigin: new URL(config.baseUrl).origin, blockedHosts: config.blockedHosts, selfHosts: config.selfHosts, now: new Date().toISOString() },
      });
      await run.prepare();
      let reading = true;
      try {
        for await (const row of readRows(format, chunks.stream())) {
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
        if (error instanceof CsvError) throw new CliFailure(`${file}: ${error.message}`);
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

interface Input {
  /** The file's format from its first non-blank character: `{` is JSONL, anything else CSV. */
  sniff(): Promise<FileFormat>;
  stream(): AsyncIterable<string>;
  close(): Promise<void>;
}

async function openInput(file: string): Promise<Input> {
  let source: AsyncIterable<string>;
  let close = async () => {};
  if (file === '-') {
    process.stdin.setEncoding('utf8');
    source = process.stdin;
  } else {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      throw new CliFailure(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const stream = handle.createReadStream({ encoding: 'utf8' });
    source = stream;
    close = async () => {
      stream.destroy();
      await handle.close().catch(() => undefined);
    };
  }
  const iterator = source[Symbol.asyncIterator]();
  const peeked: string[] = [];
  return {
    async sniff() {
      let seen = peeked.join('');
      while (/^[\s\ufeff]*$/.test(seen)) {
        const next = await iterator.next();
        if (next.done === true) break;
        peeked.push(next.value);
        seen += next.value;
      }
      return seen.replace(/^[\s\ufeff]+/, '').startsWith('{') ? 'jsonl' : 'csv';
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

/** One row of the file: its line and a lookup of values by column name. */
interface SourceRow {
  readonly line: number;
  /** Set when the row cannot be read at all (bad JSON, no url column). */
  readonly problem?: string;
  readonly get: (header: string) => unknown;
  readonly columns: ColumnMap | undefined;
  readonly headers: readonly string[];
}

async function* readRows(format: FileFormat, chunks: AsyncIterable<string>): AsyncGenerator<SourceRow> {
  if (format === 'csv') {
    let headers: string[] | undefined;
    let columns: ColumnMap | undefined;
    let index = new Map<string, number>();
    for await (const record of parseCsv(chunks)) {
      if (headers === undefined) {
        headers = record.fields.map((field) => field.trim());
        const found = detectColumns(headers);
        if (typeof found === 'string') throw new CliFailure(`line ${record.line}: ${found}`);
        columns = found;
        index = new Map(headers.map((header, i) => [header, i]));
        continue;
      }
      const fields = record.fields;
      yield { line: record.line, columns, headers, get: (header) => fields[index.get(header) ?? -1] };
    }
    if (headers === undefined) throw new CliFailure('the file is empty: not even a header line');
    return;
  }

  // JSONL: a mapping per set of keys, since nothing forces every object to use the same ones.
  const mappings = new Map<string, ColumnMap | string>();
  let line = 0;
  let rest = '';
  const parse = function (text: string, at: number): SourceRow | undefined {
    if (text.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { line: at, problem: 'not valid JSON', get: () => undefined, columns: undefined, headers: [] };
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { line: at, problem: 'not a JSON object', get: () => undefined, columns: undefined, headers: [] };
    }
    const object = value as Record<string, unknown>;
    const headers = Object.keys(object);
    const signature = headers.join('\u0000');
    let mapping = mappings.get(signature);
    if (mapping === undefined) {
      mapping = detectColumns(headers);
      mappings.set(signature, mapping);
    }
    if (typeof mapping === 'string') return { line: at, problem: mapping, get: () => undefined, columns: undefined, headers };
    return { line: at, columns: mapping, headers, get: (header) => object[header] };
  };
  let first = true;
  for await (let chunk of chunks) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    rest += chunk;
    let newline: number;
    while ((newline = rest.indexOf('\n')) !== -1) {
      const text = rest.slice(0, newline);
      rest = rest.slice(newline + 1);
      line++;
      const row = parse(text, line);
      if (row !== undefined) yield row;
    }
  }
  line++;
  const row = parse(rest, line);
  if (row !== undefined) yield row;
}

// ---------------------------------------------------------------------------------------------
// Importing

interface RunOptions {
  readonly dryRun: boolean;
  readonly accountUid: number | undefined;
  readonly raiseCap: boolean;
  readonly defaultMaxLinks: number;
  readonly saveCode: string | undefined;
  readonly rules: RowRules;
}

/** A row on its way: rejected before the database, or waiting for its batch. */
interface Entry {
  readonly line: number;
  /** Set once the row is settled without the database. */
  note?: string;
  link?: { shortCode: string; pointsTo: string; accesses: number; dateCreated: string };
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
  // Shortcodes met so far in the file and where: a repeat is a conflict with the earlier row.
  const seen = new Map<string, number>();
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
    const accessCode = newAccessCode();
    const account = await store.createAccount({
      codeHash: hashAccessCode(accessCode),
      dateCreated: new Date().toISOString(),
      maxLinks: options.defaultMaxLinks,
    });
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
    for (const entry of batch) if (entry.note !== undefined && entry.note !== '') out(`line ${entry.line}: ${entry.note}\n`);
    batch = [];
    // Generated codes that happened to be taken are drawn again in the next batch.
    if (retry.length > 0) {
      const again = retry;
      retry = [];
      for (const entry of again) {
        entry.link!.shortCode = freshCode(entry.line);
        batch.push(entry);
      }
    }
  }

  function record(entry: Entry, outcome: ImportOutcome): void {
    const code = entry.link!.shortCode;
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
      settle(entry, 'conflicts', `conflict: the shortcode "${code}" is already taken`);
    } else {
      settle(
        entry,
        'overCap',
        `over the cap: "${code}" not imported; account ${uid} already holds its maximum of ${maxLinks} links (--raise-cap lifts it)`,
      );
    }
  }

  function freshCode(line: number): string {
    for (;;) {
      const code = generateShortcode();
      if (!seen.has(code)) {
        seen.set(code, line);
        return code;
      }
    }
  }

  return {
    /** Checks the account and reserves the code file, before anything is read or written. */
    async prepare(): Promise<void> {
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
        out(`${options.dryRun ? 'Dry run (nothing is written). ' : ''}Reading ${layoutName(row.headers)} layout: ${describeColumns(row.columns)}.\n`);
      }
      totals.rows++;
      progress.tick();
      const entry: Entry = { line: row.line, generated: false, attempts: 0 };
      if (row.problem !== undefined || row.columns === undefined) {
        settle(entry, 'rejected', `rejected: ${row.problem ?? 'unreadable row'}`);
      } else {
        const checked = checkRow(row.get, row.columns, options.rules);
        if (!checked.ok) {
          settle(entry, 'rejected', `rejected: ${checked.reason}`);
        } else {
          const { shortCode, pointsTo, accesses, dateCreated } = checked.row;
          const earlier = shortCode === undefined ? undefined : seen.get(shortCode);
          if (earlier !== undefined) {
            settle(entry, 'conflicts', `conflict: the shortcode "${shortCode}" appears earlier in the file (line ${earlier})`);
          } else {
            if (shortCode !== undefined) seen.set(shortCode, row.line);
            entry.link = { shortCode: shortCode ?? freshCode(row.line), pointsTo, accesses, dateCreated };
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
