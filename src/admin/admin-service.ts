/**
 * Administration (CONTRACT §7.3): the rules behind `/v1/admin/…`. Parameters arrive as the
 * strings the request carried and are checked here (ADR 3); the store does the work in one
 * statement or transaction per call. Who may call it is the HTTP layer's business (the admin
 * token); this service trusts its caller.
 */
import { domainToUnicode } from 'node:url';
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import type { AdminAccount, Administration, FoundLink } from './administration.ts';
import type { LinkEventSink } from '../events/domain-events.ts';
import { newEventId } from '../events/payloads.ts';
import type { LinkDetailsRecord } from '../links/link-store.ts';
import { foldCase } from '../links/link-details.ts';
import { linkKey } from '../links/link-key.ts';

/** A key without a domain registry: the host as given, in lower case. */
function plainKey(shortCode: string, domain: string | undefined): string {
  return linkKey(domain?.toLowerCase(), shortCode);
}

/** One page of a list; `next` is the cursor of the following page, undefined on the last. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | undefined;
}

export interface ListParameters {
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
}

export interface UpdateAccountParameters {
  readonly uid?: string | undefined;
  readonly maxLinks?: string | undefined;
  readonly disabled?: string | undefined;
}

export interface SearchLinksParameters extends ListParameters {
  readonly host?: string | undefined;
  readonly q?: string | undefined;
}

export interface AdminService {
  listAccounts(parameters: ListParameters): Promise<Page<AdminAccount>>;
  updateAccount(parameters: UpdateAccountParameters): Promise<AdminAccount>;
  searchLinks(parameters: SearchLinksParameters): Promise<Page<LinkDetailsRecord>>;
  /**
   * Deletes the link `short` names on `domain` (omitted: the default domain) whoever owns it,
   * telling the owner's webhooks and streams; the link as it was.
   */
  takeDown(shortCode: string | undefined, domain?: string | undefined): Promise<LinkDetailsRecord>;
}

export interface AdminServiceDeps {
  /** The server's Store, or the CLI's AdminStore: both run the same per-engine code. */
  readonly store: Administration;
  /** Told about every account this service changed, so that cached copies go at once. */
  readonly accountChanged: (uid: number) => void;
  /**
   * The live stream, in a server process: a takedown is published to the owner's streams once
   * committed. The CLI has none (its takedown still reaches the webhooks, through the outbox).
   */
  readonly events?: Pick<LinkEventSink, 'linkDeleted'>;
  /**
   * The key (links/link-key.ts) of a shortcode on the domain a `domain` parameter names,
   * throwing a 400 for an unregistered host: the link service's `keyOf`. Omitted, `domain`
   * keys as given (lower case; empty for the default domain).
   */
  readonly keyOf?: (shortCode: string, domain: string | undefined) => string | Promise<string>;
}

/** Without `limit`, a page holds this many; at most MAX_LIMIT. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** The most links one search reads from the store per round while filtering by host. */
const HOST_SCAN_CHUNK = 500;
const MAX_CAP = 1_000_000_000;
const MAX_QUERY = 2000;

function wholeNumber(name: string, raw: string, min: number, max: number): number {
  const value = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) throw invalid(`the parameter "${name}" must be a whole number from ${min} to ${max}`);
  return value;
}

function pageLimit(raw: string | undefined): number {
  return raw === undefined ? DEFAULT_LIMIT : wholeNumber('limit', raw, 1, MAX_LIMIT);
}

/** Cursors are opaque to clients; this service makes them from row ids and uids. */
function cursorValue(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw invalid('the parameter "cursor" is not valid');
  return Number(raw);
}

/**
 * The host a search asks for, as the WHATWG URL parser writes hosts (lower case, ASCII,
 * punycode), and its Unicode form, both lower case.
 */
function parseHost(raw: string): { ascii: string; unicode: string } {
  let url: URL | undefined;
  // A colon after any bracketed IPv6 address is a port, even the default one (`:80`) or an
  // empty one, which the URL parser drops without a trace.
  const hasPort = raw.slice(raw.lastIndexOf(']') + 1).includes(':');
  try {
    url = hasPort || /[/?#@\s\\]/.test(raw) ? undefined : new URL(`http://${raw}/`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.port !== '' || url.hostname === '') {
    throw invalid('the parameter "host" must be a host name or address, without scheme, port or path');
  }
  const ascii = url.hostname.replace(/\.$/, '');
  return { ascii, unicode: (domainToUnicode(ascii) || ascii).toLowerCase() };
}

/** True when the target's host is `host` or one of its subdomains. */
function targetOnHost(pointsTo: string, host: string): boolean {
  const hostname = URL.parse(pointsTo)?.hostname.replace(/\.$/, '');
  return hostname !== undefined && (hostname === host || hostname.endsWith(`.${host}`));
}

export function createAdminService({ store, accountChanged, events, keyOf = plainKey }: AdminServiceDeps): AdminService {
  return {
    async listAccounts(parameters) {
      const limit = pageLimit(parameters.limit);
      const after = cursorValue(parameters.cursor);
      const rows = await store.listAccounts(after, limit + 1);
      const items = rows.slice(0, limit);
      return { items, next: rows.length > limit ? String(items.at(-1)!.uid) : undefined };
    },

    async updateAccount({ uid: rawUid, maxLinks: rawMax, disabled: rawDisabled }) {
      if (rawUid === undefined) throw invalid('the parameter "uid" is required');
      const uid = wholeNumber('uid', rawUid, 1, Number.MAX_SAFE_INTEGER);
      if (rawMax === undefined && rawDisabled === undefined) {
        throw invalid('at least one of the parameters "max_links" and "disabled" is required');
      }
      const maxLinks = rawMax === undefined ? undefined : wholeNumber('max_links', rawMax, 0, MAX_CAP);
      if (rawDisabled !== undefined && rawDisabled !== 'true' && rawDisabled !== 'false') {
        throw invalid('the parameter "disabled" must be true or false');
      }
      const disabled = rawDisabled === undefined ? undefined : rawDisabled === 'true';
      const result = await store.updateAccount(uid, { ...(maxLinks === undefined ? {} : { maxLinks }), ...(disabled === undefined ? {} : { disabled }) });
      if (result.outcome === 'not_found') throw new DomainError(ErrorCode.AccountNotFound, 'no account has this uid');
      if (result.outcome === 'below_held') {
        throw invalid(`the account holds ${result.linkCount} links; "max_links" cannot go below that`);
      }
      accountChanged(uid);
      return result.account;
    },

    async searchLinks(parameters) {
      const limit = pageLimit(parameters.limit);
      let after = cursorValue(parameters.cursor);
      const host = parameters.host === undefined ? undefined : parseHost(parameters.host);
      if (parameters.q !== undefined && [...parameters.q].length > MAX_QUERY) {
        throw invalid(`the parameter "q" must be at most ${MAX_QUERY} characters`);
      }
      const text = parameters.q === undefined ? undefined : foldCase(parameters.q);
      // No stored text holds a NUL (PostgreSQL text cannot), so such a search matches nothing;
      // answered here, since PostgreSQL refuses the parameter itself.
      if (text?.includes('\u0000')) return { items: [], next: undefined };
      const wanted = limit + 1;
      const found: FoundLink[] = [];
      // The store narrows by text the target contains (either form of the host); the parsed
      // host decides, so `example.com` does not match `notexample.com` or `example.com.evil`.
      for (;;) {
        const chunkSize = host === undefined ? wanted : Math.max(wanted, HOST_SCAN_CHUNK);
        const chunk = await store.searchLinks({
          after, limit: chunkSize,
          ...(text === undefined ? {} : { text }),
          ...(host === undefined ? {} : { targetContains: [host.ascii, host.unicode] }),
        });
        for (const candidate of chunk) {
          if (host !== undefined && !targetOnHost(candidate.link.pointsTo, host.ascii)) continue;
          found.push(candidate);
          if (found.length === wanted) break;
        }
        if (found.length === wanted || chunk.length < chunkSize) break;
        after = chunk.at(-1)!.id;
      }
      const items = found.slice(0, limit);
      return { items: items.map((item) => item.link), next: found.length > limit ? String(items.at(-1)!.id) : undefined };
    },

    async takeDown(shortCode, domain) {
      if (shortCode === undefined) throw invalid('the parameter "short" is required');
      // A '/' is in no shortcode: without this check `host/code` would name a key directly.
      const key = shortCode.includes('/') ? undefined : await keyOf(shortCode, domain);
      // A NUL is in no shortcode (and PostgreSQL refuses it as a parameter).
      const eventId = newEventId();
      const removed = key === undefined || key.includes('\u0000') ? undefined : await store.takeDownLink(key, eventId);
      if (removed === undefined) throw new DomainError(ErrorCode.LinkNotFound, 'no link has this shortcode');
      events?.linkDeleted(removed, eventId);
      return removed;
    },
  };
}
