/**
 * `shortlink shorten --from-file PATH`: many links at once through the bulk create
 * (`POST /v1/links`, CONTRACT §8.4), 100 per request, each line answered in its place.
 */
import { readFileSync } from 'node:fs';
import type { BulkLink, CreateLinkOptions, ShortlinkClient } from '../../../packages/client/src/index.ts';
import { CliFailure, ExitCode, type CliContext } from '../command.ts';

/** The most links one bulk request may carry. */
const PER_REQUEST = 100;

export const FROM_FILE_HELP = `  --from-file PATH    create one link per line of PATH (- for standard input): "URL" or
                      "URL CODE"; blank lines and lines starting with # are skipped. The other
                      options (--domain, --title, --rule, --password-file, …) apply to every
                      link. Sent 100 at a time; prints one line per link, the short URL or the
                      error`;

/** The file's links with their line numbers; a line is `URL` or `URL CODE`. */
export function readLinkLines(text: string): { line: number; link: BulkLink }[] {
  const links: { line: number; link: BulkLink }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const [url, short, ...rest] = trimmed.split(/\s+/);
    if (rest.length > 0) throw new CliFailure(`line ${i + 1}: expected "URL" or "URL CODE", found ${rest.length + 2} words`);
    links.push({ line: i + 1, link: short === undefined ? { url: url! } : { url: url!, short } });
  });
  return links;
}

/** Creates the file's links, each with `shared` options; exit code 1 when any of them was refused. */
export async function shortenFromFile(client: ShortlinkClient, path: string, context: CliContext, shared: CreateLinkOptions = {}): Promise<number> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new CliFailure(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const links = readLinkLines(text);
  if (links.length === 0) throw new CliFailure(`${path} holds no links`);
  let failed = 0;
  for (let start = 0; start < links.length; start += PER_REQUEST) {
    const chunk = links.slice(start, start + PER_REQUEST);
    const results = await client.createLinks(chunk.map((entry) => ({ ...shared, ...entry.link })));
    results.forEach((result, i) => {
      if ('ShortUrl' in result) {
        context.stdout.write(`${result.ShortUrl}\n`);
      } else {
        failed++;
        context.stdout.write(`line ${chunk[i]!.line}: ${result.Error}\n`);
      }
    });
  }
  if (failed > 0) context.stderr.write(`${failed} of ${links.length} links were not created\n`);
  return failed === 0 ? ExitCode.Ok : ExitCode.Failure;
}
