import { DomainError, ErrorCode } from '../errors.ts';
import type { AccountRecord, LinkRecord, Store } from '../store/store.ts';
import { couldBeShortcode, generateShortcode, validateCustomShortcode } from './shortcode.ts';
import { validateTargetUrl } from './target-url.ts';

export interface CreateLinkInput {
  readonly url: string;
  /** Caller-chosen shortcode; undefined to have one generated. */
  readonly short: string | undefined;
}

export interface LinkService {
  /** Creates a link for the account and returns its shortcode. */
  create(account: AccountRecord, input: CreateLinkInput): Promise<string>;
  delete(account: AccountRecord, shortCode: string): Promise<void>;
  list(account: AccountRecord): Promise<LinkRecord[]>;
  /** Counts one access and returns the link with that access included. */
  resolve(shortCode: string): Promise<LinkRecord>;
  /** The link as it stands, without counting (HEAD). */
  peek(shortCode: string): Promise<LinkRecord>;
}

export interface LinkServiceDeps {
  readonly store: Store;
  readonly clock: () => Date;
  /** The service's own public origin; links pointing at it are refused. */
  readonly ownOrigin: string;
  /** Target hosts (and their subdomains), addresses and ranges refused at creation. */
  readonly blockedHosts?: readonly string[];
  /** Other names the service answers to (SELF_HOSTS); links pointing at them are refused. */
  readonly selfHosts?: readonly string[];
}

// A generated code collides with probability (links held) / 62^6 per draw; eight straight
// collisions mean the space is nearly full or something is wrong, not bad luck.
const GENERATION_ATTEMPTS = 8;

function notFound(): DomainError {
  return new DomainError(ErrorCode.LinkNotFound, 'no link has this shortcode');
}

export function createLinkService({ store, clock, ownOrigin, blockedHosts = [], selfHosts = [] }: LinkServiceDeps): LinkService {
  function capReached(account: AccountRecord): DomainError {
    return new DomainError(
      ErrorCode.LinkCapReached,
      `the account already holds its maximum of ${account.maxLinks} links`,
    );
  }

  return {
    async create(account, input) {
      const pointsTo = validateTargetUrl(input.url, ownOrigin, blockedHosts, selfHosts);
      const dateCreated = clock().toISOString();
      if (input.short !== undefined) {
        const shortCode = validateCustomShortcode(input.short);
        const result = await store.createLink({ shortCode, pointsTo, createdBy: account.uid, dateCreated });
        if (result === 'cap_reached') throw capReached(account);
        if (result === 'taken') {
          throw new DomainError(ErrorCode.ShortcodeTaken, `the shortcode "${shortCode}" is already taken`);
        }
        return shortCode;
      }
      for (let attempt = 0; attempt < GENERATION_ATTEMPTS; attempt++) {
        const shortCode = generateShortcode();
        const result = await store.createLink({ shortCode, pointsTo, createdBy: account.uid, dateCreated });
        if (result === 'created') return shortCode;
        if (result === 'cap_reached') throw capReached(account);
      }
      throw new Error(`no free shortcode after ${GENERATION_ATTEMPTS} attempts`);
    },

    async delete(account, shortCode) {
      if (!couldBeShortcode(shortCode)) throw notFound();
      const result = await store.deleteLink(shortCode, account.uid);
      if (result === 'not_found') throw notFound();
      if (result === 'not_owner') {
        throw new DomainError(ErrorCode.NotOwner, 'the link belongs to another account');
      }
    },

    list(account) {
      return store.listLinks(account.uid);
    },

    async resolve(shortCode) {
      const link = couldBeShortcode(shortCode) ? await store.resolveLink(shortCode) : undefined;
      if (link === undefined) throw notFound();
      return link;
    },

    async peek(shortCode) {
      const link = couldBeShortcode(shortCode) ? await store.findLink(shortCode) : undefined;
      if (link === undefined) throw notFound();
      return link;
    },
  };
}
