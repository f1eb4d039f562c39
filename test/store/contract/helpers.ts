/**
 * What the parts of the store contract (test/store/contract.ts) share: the fixture a backend
 * hands the suite, the per-test fixture the parts read, and small helpers for comparing
 * records and making visits.
 */
import { afterEach, beforeEach } from 'node:test';
import { randomBytes } from 'node:crypto';
import type { AccountRecord, NewLink, StatsRows, Store } from '../../../src/store/store.ts';
import type { Visit, VisitClasses } from '../../../src/stats/visit.ts';

/** What a backend's factory hands the suite for one test. */
export interface OpenedStore {
  /** A freshly opened store with its migrations applied. */
  readonly store: Store;
  /**
   * Closes every store this factory opened that is still open (close() must be idempotent)
   * and removes the database.
   */
  cleanup(): Promise<void>;
  /**
   * Opens the same database again, after the suite has closed `store`. Backends that cannot
   * (an in-memory database) leave it out and the persistence tests are skipped.
   */
  reopen?(): Promise<Store>;
}

/**
 * An OpenedStore whose stores all come from `open` (so `reopen` reaches the same database);
 * cleanup closes every one of them, then runs `remove`.
 */
export async function reopenableStore(open: () => Promise<Store>, remove: () => void = () => {}): Promise<OpenedStore> {
  const opened: Store[] = [];
  const openOne = async (): Promise<Store> => {
    const store = await open();
    opened.push(store);
    return store;
  };
  return {
    store: await openOne(),
    reopen: openOne,
    async cleanup() {
      for (const store of opened) await store.close();
      remove();
    },
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomTag(length: number): string {
  return Array.from(randomBytes(length), (byte) => ALPHANUMERIC[byte % 62]).join('');
}

/** A resolved link's routing that routes nothing: the same, by the Store's word, as none read at all. */
export function routesNothing(routing: unknown): boolean {
  if (typeof routing !== 'object' || routing === null) return false;
  const { forwardQuery, rules, passwordHash } = routing as Record<string, unknown>;
  return forwardQuery === false && rules === null && passwordHash === null && Object.keys(routing).length === 3;
}

/**
 * The record as a plain object, so that drivers returning null-prototype rows compare equal.
 * A resolved link's `routing` that routes nothing is left out (ResolvedLink: "absent means
 * none of it"), so the cases that are not about routing compare the four Link fields alone;
 * the routing cases look at `routing` themselves.
 */
export function plain<T extends object>(record: T | undefined): T | undefined {
  if (record === undefined) return undefined;
  const copy = { ...record } as Record<string, unknown>;
  if ('routing' in copy && routesNothing(copy.routing)) delete copy.routing;
  return copy as T;
}

export function plainAll<T extends object>(records: readonly T[]): T[] {
  return records.map((record) => ({ ...record }));
}

/** A visit of the given hour, a human on desktop Chrome unless `classes` says otherwise. */
export function visit(hour: number, classes: Partial<VisitClasses> = {}): Visit {
  const full: VisitClasses = { bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Windows', device: 'desktop', ...classes };
  return { ...full, hour, key: JSON.stringify([hour, full]) };
}

/** Statistics rows in a fixed order, so that engines compare equal. */
export function sortedStats(rows: StatsRows): StatsRows {
  return {
    series: rows.series.map((r) => ({ ...r })).sort((a, b) => a.hour - b.hour),
    values: rows.values.map((r) => ({ ...r })).sort((a, b) => a.dimension - b.dimension || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)),
  };
}

export function valuesOf(rows: StatsRows, dimension: number): Record<string, number> {
  return Object.fromEntries(rows.values.filter((r) => r.dimension === dimension).map((r) => [r.value, r.visits]));
}

export function tally<T extends string>(results: readonly T[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}

/**
 * What every part of the contract works with during one test. `store`, `opened` and `tag` are
 * the running test's: a part reads them in its own beforeEach (they change from test to test).
 */
export interface ContractFixture {
  /** The store opened for the running test. */
  readonly store: Store;
  /** What the backend's factory handed the running test. */
  readonly opened: OpenedStore;
  /** The running test's random suffix. */
  readonly tag: string;
  /** A shortcode unique to this test run: the given stem plus the test's random suffix. */
  code(stem: string): string;
  createAccount(maxLinks?: number, target?: Store): Promise<AccountRecord>;
  link(createdBy: number, shortCode: string, pointsTo?: string): NewLink;
}

/**
 * Opens a store before each test of the enclosing describe and cleans it up after, and answers
 * the fixture that reads the running test's. Call it inside a describe.
 */
export function contractFixture(open: () => Promise<OpenedStore>): ContractFixture {
  let opened: OpenedStore;
  let store: Store;
  let tag: string;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    tag = randomTag(8);
  });

  afterEach(async () => {
    await opened.cleanup();
  });

  return {
    get store() {
      return store;
    },
    get opened() {
      return opened;
    },
    get tag() {
      return tag;
    },
    code: (stem) => `${stem}-${tag}`,
    createAccount(maxLinks = 20, target = store) {
      return target.createAccount({
        codeHash: randomBytes(32).toString('hex'),
        dateCreated: new Date().toISOString(),
        maxLinks,
      });
    },
    link(createdBy, shortCode, pointsTo = 'https://example.com/') {
      return { shortCode, pointsTo, createdBy, dateCreated: new Date().toISOString() };
    },
  };
}
