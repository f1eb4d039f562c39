import { DomainError, ErrorCode, invalid } from '../errors.ts';
import type {
  LinkChanges, LinkDetailsRecord, LinkPosition, LinkRecord, LinkRefusal, LinkStore, ResolvedLink,
} from './link-store.ts';
import type { AccountRecord } from '../accounts/account-store.ts';
import {
  foldCase, decodeCursor, encodeCursor, parseExpires, parseLimit, parseMaxVisits, parseOrder, parseQuery, parseTags, parseTitle,
} from './link-details.ts';
import type { Visit } from '../stats/visit.ts';
import type { LinkEventSink } from '../events/domain-events.ts';
import { newEventId } from '../events/payloads.ts';
import { couldBeShortcode, generateShortcode, validateCustomShortcode } from './shortcode.ts';
import { validateTargetUrl } from './target-url.ts';

export interface CreateLinkInput {
  readonly url: string;
  /** Caller-chosen shortcode; undefined to have one generated. */
  readonly short: string | undefined;
  /** The optional details as sent (tags comma-separated); undefined or '' for none. */
  readonly title?: string | undefined;
  readonly tags?: string | undefined;
  readonly expires?: string | undefined;
  readonly maxVisits?: string | undefined;
}

/** An edit as sent: undefined leaves a field alone, '' clears it (an empty url is refused). */
export interface UpdateLinkInput {
  readonly url?: string | undefined;
  readonly title?: string | undefined;
  readonly tags?: string | undefined;
  readonly expires?: string | undefined;
  readonly maxVisits?: string | undefined;
}

/** The list's parameters as sent; all optional. */
export interface ListLinksInput {
  readonly q?: string | undefined;
  /** Comma-separated; a link must carry them all. */
  readonly tag?: string | undefined;
  readonly limit?: string | undefined;
  /** `oldest` (the default), `newest` or `visits`. */
  readonly order?: string | undefined;
  /** Holds its own order: with an `order` that differs, refused. */
  readonly cursor?: string | undefined;
}

export interface LinkListPage {
  readonly links: LinkDetailsRecord[];
  /** The cursor of the next page, when more links match. */
  readonly nextCursor: string | undefined;
}

/** One item's outcome in a bulk create: its shortcode, or the error a single create would have thrown. */
export type CreateOutcome = { readonly shortCode: string } | { readonly error: unknown };

export interface LinkService {
  /** Creates a link for the account and returns its shortcode. */
  create(account: AccountRecord, input: CreateLinkInput): Promise<string>;
  /**
   * Creates each link independently, with `create`'s rules, and answers each one's outcome in
   * order (CONTRACT §8.4). Every create reaches the store in the same event-loop turn and in
   * order, so they share one write batch (one transaction on either engine, each insert in its
   * own savepoint or row result) and the cap counts them in order; one failure never fails
   * the others.
   */
  createMany(account: AccountRecord, inputs: readonly CreateLinkInput[]): Promise<CreateOutcome[]>;
  delete(account: AccountRecord, shortCode: string): Promise<void>;
  list(account: AccountRecord): Promise<LinkRecord[]>;
  /** The account's links with their details (owner view), filtered and paged. */
  listDetails(account: AccountRecord, input?: ListLinksInput): Promise<LinkListPage>;
  /** Edits one of the account's links and answers it as it then stands. */
  update(account: AccountRecord, shortCode: string, input: UpdateLinkInput): Promise<LinkDetailsRecord>;
  /**
   * Counts one access and returns the link with that access included. A link that no longer
   * resolves (expired, at its visit limit, disabled) throws LinkGone and is not counted.
   * With `visit`, a counted access's statistics are recorded with its count.
   */
  resolve(shortCode: string, visit?: Visit): Promise<LinkRecord>;
  /** The link as it stands, without counting (HEAD); LinkGone as resolve would. */
  peek(shortCode: string): Promise<LinkRecord>;
}

export interface LinkServiceDeps {
  readonly store: LinkStore;
  readonly clock: () => Date;
  /** The service's own public origin; links pointing at it are refused. */
  readonly ownOrigin: string;
  /** Target hosts (and their subdomains), addresses and ranges refused at creation. */
  readonly blockedHosts?: readonly string[];
  /** Other names the service answers to (SELF_HOSTS); links pointing at them are refused. */
  readonly selfHosts?: readonly string[];
  /** Told of each change once it has committed (the live events); none when omitted. */
  readonly events?: LinkEventSink | undefined;
}

// A generated code collides with probability (links held) / 62^6 per draw; eight straight
// collisions mean the space is nearly full or something is wrong, not bad luck.
const GENERATION_ATTEMPTS = 8;

function notFound(): DomainError {
  return new DomainError(ErrorCode.LinkNotFound, 'no link has this shortcode');
}

const GONE_REASONS: Readonly<Record<LinkRefusal, string>> = {
  expired: 'the link has expired',
  visit_limit: 'the link has reached its visit limit',
  disabled: 'the link has been disabled',
};

/** A link that exists but no longer resolves (410), and why, for the page a browser gets. */
export class LinkGoneError extends DomainError {
  readonly refusal: LinkRefusal;

  constructor(refusal: LinkRefusal) {
    super(ErrorCode.LinkGone, GONE_REASONS[refusal]);
    this.refusal = refusal;
  }
}

/** The link of a resolution, or the 404/410 it amounts to. */
function live(link: ResolvedLink | undefined): LinkRecord {
  if (link === undefined) throw notFound();
  if (link.refused !== undefined) throw new LinkGoneError(link.refused);
  return link;
}

/**
 * The clock's instant as ISO text, formatted once per millisecond: every resolution needs it,
 * `toISOString` costs about 2 µs on this machine, and under load many resolutions share a
 * millisecond. Keyed by the instant, so a test's clock is followed exactly.
 */
function isoClock(clock: () => Date): () => string {
  let lastMs = NaN;
  let lastIso = '';
  return () => {
    const ms = clock().getTime();
    // An invalid instant (NaN) never matches, and toISOString throws for it as before.
    if (ms !== lastMs) {
      lastIso = new Date(ms).toISOString();
      lastMs = ms;
    }
    return lastIso;
  };
}

export function createLinkService({ store, clock, ownOrigin, blockedHosts = [], selfHosts = [], events }: LinkServiceDeps): LinkService {
  const nowIso = isoClock(clock);
  function capReached(account: AccountRecord): DomainError {
    return new DomainError(
      ErrorCode.LinkCapReached,
      `the account already holds its maximum of ${account.maxLinks} links`,
    );
  }

  /** One of the account's links with its details, or undefined (through the list: the store has no single-link read of details). */
  async function ownLinkDetails(accountUid: number, shortCode: string): Promise<LinkDetailsRecord | undefined> {
    let after: LinkPosition | undefined;
    do {
      const page = await store.listLinkDetails(accountUid, { q: foldCase(shortCode), limit: 1000, ...(after === undefined ? {} : { after }) });
      const found = page.links.find((link) => link.shortCode === shortCode);
      if (found !== undefined) return found;
      after = page.next;
    } while (after !== undefined);
    return undefined;
  }

  return {
    async create(account, input) {
      const pointsTo = validateTargetUrl(input.url, ownOrigin, blockedHosts, selfHosts);
      const now = clock();
      const dateCreated = now.toISOString();
      const shortCode = input.short === undefined ? undefined : validateCustomShortcode(input.short);
      const details = {
        title: input.title === undefined ? null : parseTitle(input.title),
        tags: input.tags === undefined ? [] : parseTags(input.tags),
        expiresAt: input.expires === undefined || input.expires === '' ? null : parseExpires(input.expires, now),
        maxVisits: input.maxVisits === undefined || input.maxVisits === '' ? null : parseMaxVisits(input.maxVisits),
      };
      // One id for whichever attempt commits: its outbox event's and its live event's.
      const eventId = newEventId();
      const created = (code: string): string => {
        events?.linkCreated({ shortCode: code, pointsTo, createdBy: account.uid, accesses: 0, dateCreated, ...details }, eventId);
        return code;
      };
      if (shortCode !== undefined) {
        const result = await store.createLink({ shortCode, pointsTo, createdBy: account.uid, dateCreated, ...details, eventId });
        if (result === 'cap_reached') throw capReached(account);
        if (result === 'taken') {
          throw new DomainError(ErrorCode.ShortcodeTaken, `the shortcode "${shortCode}" is already taken`);
        }
        return created(shortCode);
      }
      for (let attempt = 0; attempt < GENERATION_ATTEMPTS; attempt++) {
        const generated = generateShortcode();
        const result = await store.createLink({ shortCode: generated, pointsTo, createdBy: account.uid, dateCreated, ...details, eventId });
        if (result === 'created') return created(generated);
        if (result === 'cap_reached') throw capReached(account);
      }
      throw new Error(`no free shortcode after ${GENERATION_ATTEMPTS} attempts`);
    },

    createMany(account, inputs) {
      // `this.create` runs synchronously up to its store call: started in a loop, the creates
      // are queued in order before any of them is written.
      return Promise.all(inputs.map((input) => this.create(account, input).then(
        (shortCode): CreateOutcome => ({ shortCode }),
        (error: unknown): CreateOutcome => ({ error }),
      )));
    },

    async delete(account, shortCode) {
      if (!couldBeShortcode(shortCode)) throw notFound();
      // The event carries the link's last state: read only when someone listens.
      const last = events?.wants(account.uid) === true ? await ownLinkDetails(account.uid, shortCode) : undefined;
      const eventId = newEventId();
      const result = await store.deleteLink(shortCode, account.uid, eventId);
      if (result === 'not_found') throw notFound();
      if (result === 'not_owner') {
        throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
      }
      if (last !== undefined) events?.linkDeleted(last, eventId);
    },

    list(account) {
      return store.listLinks(account.uid);
    },

    async listDetails(account, input = {}) {
      const tags = input.tag === undefined ? [] : parseTags(input.tag, 'tag');
      const asked = input.order === undefined ? undefined : parseOrder(input.order);
      const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
      if (asked !== undefined && cursor !== undefined && cursor.order !== asked) {
        throw invalid(`cursor belongs to order=${cursor.order}, not order=${asked}`);
      }
      const order = cursor?.order ?? asked ?? 'oldest';
      const page = await store.listLinkDetails(account.uid, {
        ...(input.q === undefined ? {} : { q: parseQuery(input.q) }),
        ...(tags.length === 0 ? {} : { tags }),
        ...(input.limit === undefined ? {} : { limit: parseLimit(input.limit) }),
        ...(order === 'oldest' ? {} : { order }),
        ...(cursor === undefined ? {} : { after: cursor.after }),
      });
      return { links: page.links, nextCursor: page.next === undefined ? undefined : encodeCursor(order, page.next) };
    },

    async update(account, shortCode, input) {
      if (input.url === undefined && input.title === undefined && input.tags === undefined &&
          input.expires === undefined && input.maxVisits === undefined) {
        throw invalid('give at least one of url, title, tags, expires, max_visits');
      }
      if (input.url === '') throw invalid('the parameter "url" must not be empty');
      const now = clock();
      const changes: LinkChanges = {
        ...(input.url === undefined ? {} : { pointsTo: validateTargetUrl(input.url, ownOrigin, blockedHosts, selfHosts) }),
        ...(input.title === undefined ? {} : { title: parseTitle(input.title) }),
        ...(input.tags === undefined ? {} : { tags: parseTags(input.tags) }),
        ...(input.expires === undefined ? {} : { expiresAt: input.expires === '' ? null : parseExpires(input.expires, now) }),
        ...(input.maxVisits === undefined ? {} : { maxVisits: input.maxVisits === '' ? null : parseMaxVisits(input.maxVisits) }),
      };
      if (!couldBeShortcode(shortCode)) throw notFound();
      const eventId = newEventId();
      const result = await store.updateLink(shortCode, account.uid, changes, eventId);
      switch (result.status) {
        case 'updated':
          events?.linkUpdated(result.link, eventId);
          return result.link;
        case 'not_found': throw notFound();
        case 'not_owner': throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
        case 'account_disabled': throw new DomainError(ErrorCode.AccountDisabled, 'the account is disabled');
      }
    },

    async resolve(shortCode, visit) {
      return live(couldBeShortcode(shortCode) ? await store.resolveLink(shortCode, nowIso(), visit) : undefined);
    },

    async peek(shortCode) {
      return live(couldBeShortcode(shortCode) ? await store.findLink(shortCode, nowIso()) : undefined);
    },
  };
}
