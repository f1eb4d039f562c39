/**
 * The browser UI's files, read once into memory. Every asset is served under
 * `/assets/<version>/<file>`, where the version is a digest of all of them: a changed file
 * gets a new URL, so assets can be cached for a year and the page (revalidated on every
 * visit) always names the right ones. One version for the whole set keeps the ES modules'
 * relative imports (`./dom.js`, `./uqr.js`) working without rewriting them: the page names
 * only the entry module, `app.js`, and the browser fetches the rest from its imports.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
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
  /**
   * The page served at `/`, naming this service's public address (BASE_URL) so that short
   * URLs read right from the first load, whatever origin the page was opened on.
   */
  pageFor(baseUrl: string): WebFile;
  /** Assets by file name (`app.js` and the modules it imports, `uqr.js`, `app.css`, `favicon.svg`). */
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

const WEB_DIR = new URL('./', import.meta.url);

/**
 * Which files of this folder the browser gets: the UI's ES modules, its stylesheet and its
 * icon. Every module is served, so a new one needs no entry anywhere (the `.ts` files are
 * the server's).
 */
const SERVED = /\.(?:js|css|svg)$/;

/**
 * Where each served asset comes from, in name order (the version must not depend on the
 * order the file system lists them in). The QR encoder is served straight from its package,
 * as `uqr.js` beside the modules that import it.
 */
function sources(): Map<string, URL> {
  const found = new Map<string, URL>();
  const names = readdirSync(WEB_DIR, { withFileTypes: true })
    .filter((entry) => entry.isFile() && SERVED.test(entry.name))
    .map((entry) => entry.name)
    .sort();
  for (const name of names) found.set(name, new URL(name, WEB_DIR));
  if (found.has('uqr.js')) throw new Error('src/web/uqr.js would hide the uqr package served under that name');
  found.set('uqr.js', new URL(import.meta.resolve('uqr')));
  return found;
}

/** The placeholder in index.html that becomes `/assets/<version>`. */
const ASSETS_PLACEHOLDER = /%ASSETS%/g;
/** The placeholder in index.html (an attribute value) that becomes BASE_URL. */
const BASE_URL_PLACEHOLDER = /%BASE_URL%/g;

/** Text made safe inside a double-quoted HTML attribute. */
function attributeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

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
  for (const [name, source] of sources()) {
    const body = readFileSync(fileURLToPath(source));
    digest.update(name).update('\0').update(body).update('\0');
    files.set(name, webFile(body, typeOf(name)));
  }
  const version = digest.digest('hex').slice(0, 16);
  const prefix = `/assets/${version}`;
  const html = readFileSync(fileURLToPath(new URL('./index.html', import.meta.url)), 'utf8');
  const template = html.replace(ASSETS_PLACEHOLDER, prefix);
  // One page per public address; a process has one, tests a few.
  const pages = new Map<string, WebFile>();
  return {
    version,
    pageFor(baseUrl) {
      let page = pages.get(baseUrl);
      if (page === undefined) {
        page = webFile(Buffer.from(template.replace(BASE_URL_PLACEHOLDER, attributeText(baseUrl))), typeOf('.html'));
        pages.set(baseUrl, page);
      }
      return page;
    },
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
