/**
 * Operator commands that work on the database directly (DATABASE_URL), not through the API:
 * changing an account's cap and exporting every link.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { extname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../config.ts';
import { linkDetailsData } from '../../events/payloads.ts';
import { LINK_CSV_HEADER, linkCsvRecord } from '../../http/links-csv.ts';
import type { AdminStore, ExportedLink } from '../../store/admin.ts';
import { CliFailure, parseCommand, UsageError, wholeNumber, type Command } from '../command.ts';
import { createProgress } from '../progress.ts';
import { configOf, describeStorage } from './server-commands.ts';

export type FileFormat = 'jsonl' | 'csv';

export const DATABASE_HELP = `
Works on the database named by DATABASE_URL (a SQLite file path, or postgres://…; default
./data/shortlinks.db), next to running servers: every change is a short transaction that keeps
the service's rules (link counts, caps, unique shortcodes).`;

export function formatOf(command: Command, flag: string | undefined, path: string | undefined): FileFormat | undefined {
  if (flag !== undefined) {
    if (flag === 'jsonl' || flag === 'csv') return flag;
    throw new UsageError(command.name, `--format must be jsonl or csv, got ${JSON.stringify(flag)}`);
  }
  const extension = path === undefined ? '' : extname(path).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.jsonl' || extension === '.ndjson' || extension === '.json') return 'jsonl';
  return undefined;
}

/** Opens the admin store, turning a failure into one line. */
export async function openAdmin(config: Config, create: boolean): Promise<AdminStore> {
  // Loaded on use: the database drivers are most of the CLI's start-up time.
  const { openAdminStore } = await import('../../store/open-store.ts');
  try {
    return await openAdminStore(config.storage, { create });
  } catch (error) {
    throw new CliFailure(`cannot open the database (${(error as Error).message.split('\n')[0]})`);
  }
}

export const setMaxLinks: Command = {
  name: 'admin set-max-links',
  summary: "change an account's link cap: admin set-max-links UID N",
  help: `Usage: shortlink admin set-max-links UID N

Sets the MaxLinks of account UID to N. N may not be below the number of links the account
holds right now (an account never holds more than its cap); delete links first to go lower.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, { command: setMaxLinks, options: {}, positionals: ['uid', 'n'] });
    if (parsed === undefined) return 0;
    const uid = wholeNumber(setMaxLinks, 'UID', parsed.positionals[0]!, 1);
    const maxLinks = wholeNumber(setMaxLinks, 'N', parsed.positionals[1]!);
    if (maxLinks > 1_000_000_000) throw new UsageError(setMaxLinks.name, 'N must be at most 1000000000');
    const store = await openAdmin(configOf(context.env), false);
    try {
      const result = await store.setMaxLinks(uid, maxLinks);
      if (result.outcome === 'not_found') throw new CliFailure(`there is no account ${uid}`);
      if (result.outcome === 'below_held') {
        throw new CliFailure(`account ${uid} holds ${result.linkCount} links; MaxLinks cannot go below that`);
      }
      context.stdout.write(
        `Account ${uid}: MaxLinks ${result.previous} → ${result.account.maxLinks} (holds ${result.account.linkCount} links).\n`,
      );
      return 0;
    } finally {
      await store.close();
    }
  },
};

export const exportLinks: Command = {
  name: 'export',
  summary: 'write every link to stdout or a file: export [--format jsonl|csv] [--output FILE]',
  help: `Usage: shortlink export [--format jsonl|csv] [--output FILE]

Writes every link of every account, oldest first, read from one consistent snapshot, with
everything it holds: ShortCode, PointsTo, CreatedBy, Accesses, DateCreated, Title, Tags,
ExpiresAt, MaxVisits, Domain, ForwardQuery, Protected and Rules. Streams, so any number of
links fits in little memory; a progress line goes to stderr every 10,000 links. Passwords
are never exported (only their hashes are stored): Protected says a link has one, and
"shortlink import" refuses such a link rather than bring it back open to anyone.

  jsonl   one JSON object per line, keys as above (the default), as the API answers them
          (LinkDetails): Tags an array, an absent Title, ExpiresAt or MaxVisits null, Domain
          null on the default domain, Rules [{"If": {…}, "To": "…"}]
  csv     a header line, then RFC 4180 records (quoted where needed); Tags one field of
          comma-separated tags ("a,b"), ForwardQuery and Protected true or false, Rules its
          JSON text, an absent value (the default domain's Domain too) an empty field: the
          columns of GET /v1/links?format=csv, which any account may ask of its own links

Options:
  --format jsonl|csv  default: from the --output extension (.csv, .jsonl), else jsonl
  --output FILE       write to FILE (mode 0600, replaced only once the export is complete)
                      instead of stdout

"shortlink import" reads both formats back.
${DATABASE_HELP}
`,
  async run(args, context) {
    const parsed = parseCommand(args, context, {
      command: exportLinks,
      options: { format: { type: 'string' }, output: { type: 'string', short: 'o' } },
      positionals: [],
    });
    if (parsed === undefined) return 0;
    const output = parsed.values.output;
    const format = formatOf(exportLinks, parsed.values.format, output) ?? 'jsonl';
    const config = configOf(context.env);
    const store = await openAdmin(config, false);
    const progress = createProgress(context.stderr, 'exported');

    async function* chunks(): AsyncGenerator<string> {
      // Rows are gathered into chunks of about 64 KiB: one stream write per row costs more
      // than the formatting.
      let chunk = format === 'csv' ? LINK_CSV_HEADER : '';
      for await (const link of store.exportLinks()) {
        chunk += format === 'csv' ? linkCsvRecord(link) : jsonLine(link);
        progress.tick();
        if (chunk.length >= 65_536) {
          yield chunk;
          chunk = '';
        }
      }
      if (chunk !== '') yield chunk;
    }

    try {
      if (output === undefined) {
        await pipeline(Readable.from(chunks()), context.stdout, { end: false });
      } else {
        // Written beside the target and renamed at the end: FILE is never left half-written.
        const partial = `${output}.${randomBytes(4).toString('hex')}.partial`;
        try {
          await pipeline(Readable.from(chunks()), createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
          await rename(partial, output);
        } catch (error) {
          await rm(partial, { force: true });
          throw error;
        }
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A reader that stops early (`| head`) is not a failure of the export.
      if (code === 'EPIPE') return 0;
      if (code !== undefined && typeof (error as NodeJS.ErrnoException).syscall === 'string') {
        throw new CliFailure(`cannot write ${output ?? 'to stdout'} (${code})`);
      }
      throw error;
    } finally {
      await store.close();
    }
    context.stderr.write(
      `Exported ${progress.count} links from ${describeStorage(config)} as ${format}${output === undefined ? '' : ` to ${output}`}.\n`,
    );
    return 0;
  },
};

/** One link as the API's LinkDetails: the shortcode and its Domain apart, never a password. */
function jsonLine(link: ExportedLink): string {
  return `${JSON.stringify(linkDetailsData(link))}\n`;
}
