/**
 * The browser UI's files, read once into memory. Every asset is served under
 * `/assets/<version>/<file>`, where the version is a digest of all of them: a changed file
 * gets a new URL, so assets can be cached for a year and the page (revalidated on every
 * visit) always names the right ones. One version for the whole set keeps the ES module's
 * relative imports (`./uqr.js`) working without rewriting them.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One file ready to send. */
export interface WebFile {
  readonly body: Buffer;
  readonly contentType: string;
  /** Strong validator, quoted as the header wants it. */
  readonly etag: string;
}

/** The UI's page and assets, as served. */
export interface WebAssets {
  /** Digest of every asset; the path segment after `/assets/`. */
  readonly version: string;
  /** The page served at `/`. */
  readonly page: WebFile;
  /** Assets by file name (`app.js`, `app.css`, `uqr.js`, `favicon.svg`). */
  readonly files: ReadonlyMap<string, WebFile>;
  /** The URL path of an asset, e.g. `/assets/3f9c…/app.css`. */
  href(name: string): string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

/** Where each served asset comes from. The QR encoder is served straight from its package. */
const SOURCES: Readonly<Record<string, URL>> = {
  'app.js': new URL('./app.js', import.meta.url),
  'app.css': new URL('./app.css', import.meta.url),
  'favicon.svg': new URL('./favicon.svg', import.meta.url),
  'uqr.js': new URL(import.meta.resolve('uqr')),
};

/** The placeholder in index.html that becomes `/assets/<version>`. */
const ASSETS_PLACEHOLDER = /%ASSETS%/g;

function typeOf(name: string): string {
  const type = TYPES[name.slice(name.lastIndexOf('.'))];
  if (type === undefined) throw new Error(`no content type known for ${name}`);
  return type;
}

function webFile(body: Buffer, contentType: string): WebFile {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function load(): WebAssets {
  const files = new Map<string, WebFile>();
  const digest = createHash('sha256');
  for (const [name, source] of Object.entries(SOURCES)) {
    const body = readFileSync(fileURLToPath(source));
    digest.update(name).update('\0').update(body).update('\0');
    files.set(name, webFile(body, typeOf(name)));
  }
  const version = digest.digest('hex').slice(0, 16);
  const prefix = `/assets/${version}`;
  const html = readFileSync(fileURLToPath(new URL('./index.html', import.meta.url)), 'utf8');
  const page = webFile(Buffer.from(html.replace(ASSETS_PLACEHOLDER, prefix)), typeOf('.html'));
  return {
    version,
    page,
    files,
    href(name) {
      if (!files.has(name)) throw new Error(`no web asset named ${name}`);
      return `${prefix}/${name}`;
    },
  };
}

let loaded: WebAssets | undefined;

/** The UI's files, read from disk on the first call and kept for the life of the process. */
export function webAssets(): WebAssets {
  loaded ??= load();
  return loaded;
}
