import { DomainError, ErrorCode, invalid } from '../errors.ts';
import type {
  LinkChanges, LinkDetailsRecord, LinkRecord, LinkRefusal, LinkStore, ResolvedLink,
} from './link-store.ts';
import type { AccountRecord } from '../accounts/account-store.ts';
import {
  decodeCursor, encodeCursor, parseExpires, parseLimit, parseMaxVisits, parseOrder, parseQuery, parseTags, parseTitle,
} from './link-details.ts';
import type { Visit } from '../stats/visit.ts';
import type { LinkEventSink } from '../events/domain-events.ts';
import { newEventId } from '../events/payloads.ts';
import { couldBeShortcode, generateShortcode, validateCustomShortcode, GENERATION_ATTEMPTS } from './shortcode.ts';
import { validateTargetUrl } from './target-url.ts';
import { canonicalHost } from './host-rules.ts';
import { fixedDomainRegistry, type DomainRegistry } from '../domains/domain-registry.ts';
import { codeOf, linkKey, UNLOCKED } from './link-key.ts';
import { parseRules, rulesJson } from './rules.ts';
import { hashPassword, parsePassword, SCRYPT_PARAMETERS, verifyPassword, type ScryptParameters } from './password.ts';

export interface CreateLinkInput {
  readonly url: string;
  /** Caller-chosen shortcode; undefined to have one generated. */
  readonly short: string | undefined;
  /** The optional details as sent (tags comma-separated); undefined or '' for none. */
  readonly title?: string | undefined;
  readonly tags?: string | undefined;
  readonly expires?: string | undefined;
  readonly maxVisits?: string | undefined;
  /** A registered host; omitted, empty or the default host: the default domain. */
  readonly domain?: string | undefined;
  /** `true` or `false`; FORWARD_QUERY when omitted. */
  readonly forwardQuery?: string | undefined;
  /** JSON text of the rules (rules.ts); omitted or empty for none. */
  readonly rules?: string | undefined;
  /** 8-200 code points; omitted or empty for an open link. */
  readonly password?: string | undefined;
}

/** An edit as sent: undefined leaves a field alone, '' clears it (an empty url is refused). */
export interface UpdateLinkInput {
  readonly url?: string | undefined;
  readonly title?: string | undefined;
  readonly tags?: string | undefined;
  readonly expires?: string | undefined;
  readonly maxVisits?: string | undefined;
  readonly forwardQuery?: string | undefined;
  /** '' clears them. */
  readonly rules?: string | undefined;
  /** '' removes the password. */
  readonly password?: string | undefined;
}

/** The list's parameters as sent; all optional. */
export interface ListLinksInput {
  /** Only this domain's links (a registered host, or the default host); every domain when omitted. */
  readonly domain?: string | undefined;
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

/** One item's outcome in a bulk create: its link's key, or the error a single create would have thrown. */
export type CreateOutcome = { readonly shortCode: string } | { readonly error: unknown };

/** How a visitor unlocks a protected link (CONTRACT §8.3). */
export interface PasswordAttempt {
  /** As sent; undefined when the visitor gave none. */
  readonly password: string | undefined;
  /** Runs before the password is checked: throws (429) when the client has guessed too often. */
  readonly before?: () => Promise<void>;
  /** Told of a wrong password, before the 401 is thrown. */
  readonly wrong?: () => Promise<void>;
}

export interface LinkService {
  /** Creates a link for the account and returns its key (link-key.ts: the code, with its domain's host off the default domain). */
  create(account: AccountRecord, input: CreateLinkInput): Promise<string>;
  /**
   * Creates each link independently, with `create`'s rules, and answers each one's outcome in
   * order (CONTRACT §8.4). Every create reaches the store in the same event-loop turn and in
   * order, so they share one write batch (one transaction on either engine, each insert in its
   * own savepoint or row result) and the cap counts them in order; one failure never fails
   * the others.
   */
  createMany(account: AccountRecord, inputs: readonly CreateLinkInput[]): Promise<CreateOutcome[]>;
  /** Deletes the account's link `shortCode` on `domain` (a host; the default domain when omitted). */
  delete(account: AccountRecord, shortCode: string, domain?: string): Promise<void>;
  list(account: AccountRecord): Promise<LinkRecord[]>;
  /** The account's links with their details (owner view), filtered and paged. */
  listDetails(account: AccountRecord, input?: ListLinksInput): Promise<LinkListPage>;
  /** Edits one of the account's links and answers it as it then stands. */
  update(account: AccountRecord, shortCode: string, input: UpdateLinkInput, domain?: string): Promise<LinkDetailsRecord>;
  /**
   * Counts one access to the link `key` names and returns it with that access included. A
   * link that no longer resolves (expired, at its visit limit, disabled) throws LinkGone and
   * is not counted. A protected link throws PasswordRequired without `attempt.password`, and
   * WrongPassword with a wrong one, counting nothing. With `visit`, a counted access's
   * statistics are recorded with its count.
   */
  resolve(key: string, visit?: Visit, attempt?: PasswordAttempt): Promise<ResolvedLink>;
  /** The link as it stands, without counting (HEAD); LinkGone as resolve would (a protected link is answered as it stands). */
  peek(key: string): Promise<ResolvedLink>;
  /** The key of `shortCode` on the domain a `domain` parameter names (400 for an unregistered host). */
  keyOf(shortCode: string, domain: string | undefined): string;
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
  /** The domains links may be made on; only the default one (ownOrigin's) when omitted. */
  readonly domains?: DomainRegistry;
  /** `forward_query` of a link created without one (FORWARD_QUERY). */
  readonly forwardQueryDefault?: boolean;
  /**
   * The scrypt cost new link passwords are hashed with (default SCRYPT_PARAMETERS). Tests
   * that set many passwords pass a lower one: each hash records its parameters, so verifying
   * is the same either way.
   */
  readonly passwordHashing?: ScryptParameters;
}


function notFound(): DomainError {
  return new DomainError(ErrorCode.LinkNotFound, 'no link has this shortcode');
}

/** A refusal that makes a link gone (410); a password is asked for instead. */
export type GoneRefusal = Exclude<LinkRefusal, 'password'>;

const GONE_REASONS: Readonly<Record<GoneRefusal, string>> = {
  expired: 'the link has expired',
  visit_limit: 'the link has reached its visit limit',
  disabled: 'the link has been disabled',
};

/** A link that exists but no longer resolves (410), and why, for the page a browser gets. */
export class LinkGoneError extends DomainError {
  readonly refusal: GoneRefusal;
  /** Whether a password protects the link (its form's POST is then still a route: it answers the gone page). */
  readonly protectedLink: boolean;

  constructor(refusal: GoneRefusal, protectedLink = false) {
    super(ErrorCode.LinkGone, GONE_REASONS[refusal]);
    this.refusal = refusal;
    this.protectedLink = protectedLink;
  }
}

/** A protected link asked for without a password (401), or with a wrong one. */
export class PasswordError extends DomainError {
  /** The link the password is for. */
  readonly link: ResolvedLink;

  constructor(link: ResolvedLink, given: boolean) {
    super(ErrorCode.Unauthenticated, given ? 'the password is wrong' : 'a password is required');
    this.link = link;
  }
}

/** The link of a resolution, or the 404/410 it amounts to (a password refusal is the caller's). */
function live(link: ResolvedLink | undefined): ResolvedLink {
  if (link === undefined) throw notFound();
  if (link.refused !== undefined && link.refused !== 'password') throw new LinkGoneError(link.refused, (link.routing?.passwordHash ?? null) !== null);
  return link;
}

/** `forward_query` as sent: `true` or `false`. */
function parseForwardQuery(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalid('forward_query must be true or false');
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

export function createLinkService({
  store, clock, ownOrigin, blockedHosts = [], selfHosts = [], events, domains = fixedDomainRegistry(ownOrigin), forwardQueryDefault = false,
  passwordHashing = SCRYPT_PARAMETERS,
}: LinkServiceDeps): LinkService {
  const nowIso = isoClock(clock);
  // The loop rule covers every registered domain, whatever the target's scheme or port
  // (CONTRACT §8.1); BASE_URL's own origin and SELF_HOSTS keep §5's origin comparison.
  function checkTarget(url: string): string {
    const checked = validateTargetUrl(url, ownOrigin, blockedHosts, selfHosts);
    const registered = domains.registeredHosts();
    if (registered.length > 0 && registered.includes(canonicalHost(new URL(checked).hostname))) {
      throw invalid('url must not point back at this service');
    }
    return checked;
  }
  const keyOf = (shortCode: string, domain: string | undefined): string => {
    const named = domains.named(domain);
    return linkKey(named.isDefault ? null : named.host, shortCode);
  };
  function capReached(account: AccountRecord): DomainError {
    return new DomainError(
      ErrorCode.LinkCapReached,
      `the account already holds its maximum of ${account.maxLinks} links`,
    );
  }

  return {
    keyOf,

    async create(account, input) {
      const pointsTo = checkTarget(input.url);
      const now = clock();
      const dateCreated = now.toISOString();
      const shortCode = input.short === undefined ? undefined : validateCustomShortcode(input.short);
      const domain = domains.named(input.domain);
      const host = domain.isDefault ? null : domain.host;
      const rules = input.rules === undefined || input.rules === '' ? null : rulesJson(parseRules(input.rules, checkTarget));
      const password = input.password === undefined || input.password === '' ? undefined : parsePassword(input.password);
      const details = {
        title: input.title === undefined ? null : parseTitle(input.title),
        tags: input.tags === undefined ? [] : parseTags(input.tags),
        expiresAt: input.expires === undefined || input.expires === '' ? null : parseExpires(input.expires, now),
        maxVisits: input.maxVisits === undefined || input.maxVisits === '' ? null : parseMaxVisits(input.maxVisits),
        forwardQuery: input.forwardQuery === undefined || input.forwardQuery === '' ? forwardQueryDefault : parseForwardQuery(input.forwardQuery),
        rules,
      };
      // Hashed once every parameter is known to be good (scrypt runs on the thread pool).
      const passwordHash = password === undefined ? null : await hashPassword(password, passwordHashing);
      // One id for whichever attempt commits: its outbox event's and its live event's.
      const eventId = newEventId();
      const created = (key: string): string => {
        events?.linkCreated({
          shortCode: key, pointsTo, createdBy: account.uid, accesses: 0, dateCreated, ...details, protected: passwordHash !== null,
        }, eventId);
        return key;
      };
      const insert = (key: string) =>
        store.createLink({ shortCode: key, pointsTo, createdBy: account.uid, dateCreated, ...details, passwordHash, eventId });
      if (shortCode !== undefined) {
        const result = await insert(linkKey(host, shortCode));
        if (result === 'cap_reached') throw capReached(account);
        if (result === 'taken') {
          throw new DomainError(ErrorCode.ShortcodeTaken, `the shortcode "${shortCode}" is already taken`);
        }
        return created(linkKey(host, shortCode));
      }
      for (let attempt = 0; attempt < GENERATION_ATTEMPTS; attempt++) {
        const generated = linkKey(host, generateShortcode());
        const result = await insert(generated);
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

    async delete(account, shortCode, domain) {
      const key = keyOf(shortCode, domain);
      if (!couldBeShortcode(shortCode)) throw notFound();
      const eventId = newEventId();
      const result = await store.deleteLink(key, account.uid, eventId);
      if (result.status === 'not_found') throw notFound();
      if (result.status === 'not_owner') {
        throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
      }
      // The store answers the removed row: the event carries the link's last state.
      events?.linkDeleted(result.link, eventId);
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
      const domain = input.domain === undefined ? undefined : domains.named(input.domain);
      const page = await store.listLinkDetails(account.uid, {
        ...(domain === undefined ? {} : { domain: domain.isDefault ? '' : domain.host }),
        ...(input.q === undefined ? {} : { q: parseQuery(input.q) }),
        ...(tags.length === 0 ? {} : { tags }),
        ...(input.limit === undefined ? {} : { limit: parseLimit(input.limit) }),
        ...(order === 'oldest' ? {} : { order }),
        ...(cursor === undefined ? {} : { after: cursor.after }),
      });
      return { links: page.links, nextCursor: page.next === undefined ? undefined : encodeCursor(order, page.next) };
    },

    async update(account, shortCode, input, domain) {
      if (input.url === undefined && input.title === undefined && input.tags === undefined &&
          input.expires === undefined && input.maxVisits === undefined && input.forwardQuery === undefined &&
          input.rules === undefined && input.password === undefined) {
        throw invalid('give at least one of url, title, tags, expires, max_visits, forward_query, rules, password');
      }
      if (input.url === '') throw invalid('the parameter "url" must not be empty');
      const key = keyOf(shortCode, domain);
      const now = clock();
      const password = input.password === undefined || input.password === '' ? input.password : parsePassword(input.password);
      const changes: LinkChanges = {
        ...(input.url === undefined ? {} : { pointsTo: checkTarget(input.url) }),
        ...(input.title === undefined ? {} : { title: parseTitle(input.title) }),
        ...(input.tags === undefined ? {} : { tags: parseTags(input.tags) }),
        ...(input.expires === undefined ? {} : { expiresAt: input.expires === '' ? null : parseExpires(input.expires, now) }),
        ...(input.maxVisits === undefined ? {} : { maxVisits: input.maxVisits === '' ? null : parseMaxVisits(input.maxVisits) }),
        ...(input.forwardQuery === undefined ? {} : { forwardQuery: input.forwardQuery === '' ? forwardQueryDefault : parseForwardQuery(input.forwardQuery) }),
        ...(input.rules === undefined ? {} : { rules: input.rules === '' ? null : rulesJson(parseRules(input.rules, checkTarget)) }),
        ...(password === undefined ? {} : { passwordHash: password === '' ? null : await hashPassword(password, passwordHashing) }),
      };
      if (!couldBeShortcode(shortCode)) throw notFound();
      const eventId = newEventId();
      const result = await store.updateLink(key, account.uid, changes, eventId);
      switch (result.status) {
        case 'updated':
          events?.linkUpdated(result.link, eventId);
          return result.link;
        case 'not_found': throw notFound();
        case 'not_owner': throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
        case 'account_disabled': throw new DomainError(ErrorCode.AccountDisabled, 'the account is disabled');
      }
    },

    async resolve(key, visit, attempt) {
      if (!couldBeShortcode(codeOf(key))) throw notFound();
      const link = live(await store.resolveLink(key, nowIso(), visit));
      if (link.refused !== 'password') return link;
      // Protected (CONTRACT §8.3): nothing was counted. With the right password, count it
      // through the unlocked key; the limit on guesses is checked before the password is.
      if (attempt?.password === undefined) throw new PasswordError(link, false);
      await attempt.before?.();
      if (!(await verifyPassword(attempt.password, link.routing?.passwordHash ?? ''))) {
        await attempt.wrong?.();
        throw new PasswordError(link, true);
      }
      const unlocked = live(await store.resolveLink(UNLOCKED + key, nowIso(), visit));
      if (unlocked.refused === 'password') throw new PasswordError(unlocked, true);
      return unlocked;
    },

    async peek(key) {
      if (!couldBeShortcode(codeOf(key))) throw notFound();
      const link = live(await store.findLink(key, nowIso()));
      return link;
    },
  };
}
