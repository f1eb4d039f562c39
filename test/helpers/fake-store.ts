/**
 * An in-memory `Store` for unit tests of the domain: no database, every call recorded, and
 * createLink's answers scriptable, so a test can make the store say `taken` or `cap_reached`
 * exactly when it needs to. Unscripted calls follow the contract's rules (cap before
 * uniqueness, owner checks, one access per resolution); the real engines are held to those
 * rules by test/store/contract.ts, this fake is not a substitute for that suite.
 */
import type {
  AccountRecord, CreateLinkResult, DeleteLinkResult, LinkDetailsInput, LinkDetailsRecord, LinkRecord, NewAccount, NewLink,
  Store,
} from '../../src/store/store.ts';

/** One call the store received: the method's name and its arguments. */
export interface StoreCall {
  readonly method: Exclude<keyof Store, 'engine' | 'webhooks' | 'streamSlots' | 'domains'>;
  readonly args: readonly unknown[];
}

export interface FakeStore extends Store {
  /** Every call so far, in order. */
  readonly calls: StoreCall[];
  /** The links held, by shortcode. */
  readonly links: Map<string, LinkRecord & NewLinkDetails>;
  /** Answers the next createLink calls with these results (in order), whatever the data says. */
  scriptCreateLink(...results: CreateLinkResult[]): void;
  /** Calls of one method, for assertions. */
  callsOf(method: StoreCall['method']): readonly (readonly unknown[])[];
}

export function createFakeStore(): FakeStore {
  const calls: StoreCall[] = [];
  const accounts = new Map<number, AccountRecord>();
  const byCodeHash = new Map<string, number>();
  const links = new Map<string, LinkRecord & NewLinkDetails>();
  const scripted: CreateLinkResult[] = [];
  let nextUid = 1;

  const record = (method: StoreCall['method'], ...args: unknown[]) => void calls.push({ method, args });
  const held = (uid: number) => [...links.values()].filter((link) => link.createdBy === uid).length;

  return {
    engine: 'fake',
    webhooks: new Proxy({} as Store['webhooks'], {
      get: (_target, name) => () => Promise.reject(new Error(`the fake store keeps no webhooks (${String(name)})`)),
    }),
    streamSlots: new Proxy({} as Store['streamSlots'], {
      get: (_target, name) => () => Promise.reject(new Error(`the fake store keeps no stream slots (${String(name)})`)),
    }),
    apiKeys: new Proxy({} as Store['apiKeys'], {
      get: (_target, name) => () => Promise.reject(new Error(`the fake store keeps no API keys (${String(name)})`)),
    }),
    domains: new Proxy({} as Store['domains'], {
      get: (_target, name) => () => Promise.reject(new Error(`the fake store keeps no domains (${String(name)})`)),
    }),
    calls,
    links,
    scriptCreateLink: (...results) => void scripted.push(...results),
    callsOf: (method) => calls.filter((call) => call.method === method).map((call) => call.args),

    async createAccount(account: NewAccount) {
      record('createAccount', account);
      const created = { uid: nextUid++, dateCreated: account.dateCreated, maxLinks: account.maxLinks, disabled: false };
      accounts.set(created.uid, created);
      byCodeHash.set(account.codeHash, created.uid);
      return created;
    },

    async findAccountByCodeHash(codeHash) {
      record('findAccountByCodeHash', codeHash);
      const uid = byCodeHash.get(codeHash);
      return uid === undefined ? undefined : accounts.get(uid);
    },

    async createLink(link: NewLink): Promise<CreateLinkResult> {
      record('createLink', link);
      const forced = scripted.shift();
      if (forced !== undefined) return forced;
      const account = accounts.get(link.createdBy);
      if (account === undefined) throw new Error(`fake store: no account ${link.createdBy}`);
      if (held(account.uid) >= account.maxLinks) return 'cap_reached';
      if (links.has(link.shortCode)) return 'taken';
      links.set(link.shortCode, { ...link, accesses: 0 });
      return 'created';
    },

    async deleteLink(shortCode, accountUid): Promise<DeleteLinkResult> {
      record('deleteLink', shortCode, accountUid);
      const link = links.get(shortCode);
      if (link === undefined) return { status: 'not_found' };
      if (link.createdBy !== accountUid) return { status: 'not_owner' };
      links.delete(shortCode);
      return { status: 'deleted', link: detailsOfFake(link) };
    },

    async listLinks(accountUid) {
      record('listLinks', accountUid);
      return [...links.values()].filter((link) => link.createdBy === accountUid).map(publicFields);
    },

    async listLinkDetails(accountUid, query = {}) {
      record('listLinkDetails', accountUid, query);
      const all = [...links.values()].filter((link) => link.createdBy === accountUid).map(detailsOfFake);
      return { links: query.limit === undefined ? all : all.slice(0, query.limit), next: undefined };
    },

    async updateLink(shortCode, accountUid, changes) {
      record('updateLink', shortCode, accountUid, changes);
      const link = links.get(shortCode);
      if (link === undefined) return { status: 'not_found' };
      if (link.createdBy !== accountUid) return { status: 'not_owner' };
      const updated = { ...link, ...changes };
      links.set(shortCode, updated);
      return { status: 'updated', link: detailsOfFake(updated) };
    },

    // No group commit: nothing to watch.
    watchCounts: () => () => undefined,

    async resolveLink(shortCode) {
      record('resolveLink', shortCode);
      const link = links.get(shortCode);
      if (link === undefined) return undefined;
      const counted = { ...link, accesses: link.accesses + 1 };
      links.set(shortCode, counted);
      return publicFields(counted);
    },

    async findLink(shortCode) {
      record('findLink', shortCode);
      const link = links.get(shortCode);
      return link === undefined ? undefined : publicFields(link);
    },

    async readStats(scope, fromHour, toHour) {
      record('readStats', scope, fromHour, toHour);
      return { series: [], values: [] };
    },

    async foldStats(options) {
      record('foldStats', options);
      return 0;
    },

    async rotateAccessCode(uid, codeHash, newCodeHash) {
      record('rotateAccessCode', uid, codeHash, newCodeHash);
      if (byCodeHash.get(codeHash) !== uid) return undefined;
      byCodeHash.delete(codeHash);
      byCodeHash.set(newCodeHash, uid);
      return accounts.get(uid);
    },

    async deleteAccount(uid) {
      record('deleteAccount', uid);
      for (const [code, link] of links) if (link.createdBy === uid) links.delete(code);
      for (const [hash, owner] of byCodeHash) if (owner === uid) byCodeHash.delete(hash);
      return accounts.delete(uid);
    },

    // Administration is tested on the real engines (test/store/contract.ts); the domain's unit
    // tests never reach it.
    async listAccounts() {
      throw new Error('fake store: listAccounts is not faked');
    },
    async updateAccount() {
      throw new Error('fake store: updateAccount is not faked');
    },
    async searchLinks() {
      throw new Error('fake store: searchLinks is not faked');
    },
    async takeDownLink() {
      throw new Error('fake store: takeDownLink is not faked');
    },

    async ping() {
      record('ping');
    },

    async close() {
      record('close');
    },
  };
}

function detailsOfFake(link: LinkRecord & NewLinkDetails): LinkDetailsRecord {
  return {
    ...publicFields(link), dateCreated: link.dateCreated, title: link.title ?? null, tags: link.tags ?? [],
    expiresAt: link.expiresAt ?? null, maxVisits: link.maxVisits ?? null,
    forwardQuery: link.forwardQuery ?? false, rules: link.rules ?? null, protected: (link.passwordHash ?? null) !== null,
  };
}

type NewLinkDetails = LinkDetailsInput & { readonly dateCreated: string };

function publicFields(link: LinkRecord): LinkRecord {
  return { shortCode: link.shortCode, pointsTo: link.pointsTo, createdBy: link.createdBy, accesses: link.accesses };
}
