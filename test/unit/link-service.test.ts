/**
 * The link service's own rules, against an in-memory store: what it checks before it asks
 * the store (and in which order), how it retries generated codes, and how the store's answers
 * become domain errors. Storage itself is covered by the store contract suite.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError, ErrorCode } from '../../src/errors.ts';
import { createLinkService, type LinkService } from '../../src/links/link-service.ts';
import type { AccountRecord, NewLink } from '../../src/store/store.ts';
import { createFakeStore, type FakeStore } from '../helpers/fake-store.ts';

const OWN_ORIGIN = 'http://sl.test';
const NOW = new Date('2026-01-02T03:04:05.678Z');
const GENERATED = /^[A-Za-z0-9]{6}$/;

interface Fixture {
  readonly store: FakeStore;
  readonly links: LinkService;
  readonly account: AccountRecord;
  readonly other: AccountRecord;
}

async function fixture({ maxLinks = 10, blockedHosts = ['blocked.example'] } = {}): Promise<Fixture> {
  const store = createFakeStore();
  const links = createLinkService({ store, clock: () => NOW, ownOrigin: OWN_ORIGIN, blockedHosts });
  const account = await store.createAccount({ codeHash: 'a'.repeat(64), dateCreated: NOW.toISOString(), maxLinks });
  const other = await store.createAccount({ codeHash: 'b'.repeat(64), dateCreated: NOW.toISOString(), maxLinks });
  return { store, links, account, other };
}

/** Matches a DomainError with this code (and, when given, this exact reason). */
function domainError(code: ErrorCode, message?: string | RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof DomainError, `expected a DomainError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (typeof message === 'string') assert.equal(error.message, message);
    else if (message !== undefined) assert.match(error.message, message);
    return true;
  };
}

const createdLinks = (store: FakeStore) => store.callsOf('createLink').map(([link]) => link as NewLink);

describe('createLinkService: creating with a chosen shortcode', () => {
  test('stores the link as given, owned by the account, dated by the clock', async () => {
    const { store, links, account } = await fixture();
    assert.equal(await links.create(account, { url: 'https://example.org/a?b=c#d', short: 'chosen-1' }), 'chosen-1');
    const [created] = createdLinks(store);
    assert.match(String(created?.eventId), /^msg_[0-9a-f]{32}$/, 'the id its link.created event is to have');
    assert.deepEqual(createdLinks(store), [
      {
        shortCode: 'chosen-1', pointsTo: 'https://example.org/a?b=c#d', createdBy: account.uid, dateCreated: NOW.toISOString(),
        title: null, tags: [], expiresAt: null, maxVisits: null, forwardQuery: false, rules: null, passwordHash: null, eventId: created?.eventId,
      },
    ]);
  });

  test('checks the url before the shortcode, and asks the store nothing when either is refused', async () => {
    const { store, links, account } = await fixture();
    await assert.rejects(links.create(account, { url: 'ftp://example.org', short: 'no' }), domainError(ErrorCode.InvalidParameter, 'url must use http or https'));
    await assert.rejects(links.create(account, { url: 'https://example.org', short: 'no' }), domainError(ErrorCode.InvalidParameter, 'short must be 5 to 2000 characters long'));
    await assert.rejects(links.create(account, { url: 'https://example.org', short: 'bad code' }), domainError(ErrorCode.InvalidParameter, /may contain only/));
    assert.deepEqual(store.callsOf('createLink'), []);
  });

  test('refuses links back to the service itself and to blocked hosts (and their subdomains)', async () => {
    const { store, links, account } = await fixture();
    await assert.rejects(links.create(account, { url: `${OWN_ORIGIN}/chosen-1`, short: undefined }), domainError(ErrorCode.InvalidParameter, 'url must not point back at this service'));
    for (const url of ['https://blocked.example/x', 'https://deep.sub.blocked.example/']) {
      await assert.rejects(links.create(account, { url, short: undefined }), domainError(ErrorCode.InvalidParameter, /are not allowed on this service/));
    }
    assert.deepEqual(store.callsOf('createLink'), []);
  });

  test('refuses a reserved name in any case, without asking the store', async () => {
    const { store, links, account } = await fixture();
    for (const short of ['admin', 'ADMIN', 'Metrics', 'favicon.ico', '.well-known']) {
      await assert.rejects(links.create(account, { url: 'https://example.org', short }), domainError(ErrorCode.InvalidParameter, `short "${short}" is reserved by the service`));
    }
    assert.deepEqual(store.callsOf('createLink'), []);
    assert.equal(await links.create(account, { url: 'https://example.org', short: 'admins' }), 'admins');
  });

  test('a taken shortcode is a ShortcodeTaken error naming it, and is not retried', async () => {
    const { store, links, account, other } = await fixture();
    await links.create(other, { url: 'https://example.org/first', short: 'wanted' });
    await assert.rejects(links.create(account, { url: 'https://example.org/second', short: 'wanted' }), domainError(ErrorCode.ShortcodeTaken, 'the shortcode "wanted" is already taken'));
    assert.equal(store.callsOf('createLink').length, 2);
    assert.equal(store.links.get('wanted')?.createdBy, other.uid, 'the first owner keeps it');
  });

  test('a full account is a LinkCapReached error naming its cap', async () => {
    const { store, links, account } = await fixture({ maxLinks: 2 });
    await links.create(account, { url: 'https://example.org/1', short: 'first' });
    await links.create(account, { url: 'https://example.org/2', short: 'second' });
    await assert.rejects(links.create(account, { url: 'https://example.org/3', short: 'third' }), domainError(ErrorCode.LinkCapReached, 'the account already holds its maximum of 2 links'));
    assert.equal(store.links.has('third'), false);
  });

  test('the store\'s answer decides, whatever the service could have guessed', async () => {
    const { store, links, account } = await fixture();
    store.scriptCreateLink('cap_reached', 'taken');
    await assert.rejects(links.create(account, { url: 'https://example.org', short: 'free-one' }), domainError(ErrorCode.LinkCapReached));
    await assert.rejects(links.create(account, { url: 'https://example.org', short: 'free-two' }), domainError(ErrorCode.ShortcodeTaken));
    assert.equal(store.links.size, 0);
  });

  test('a store failure reaches the caller unchanged', async () => {
    const { store, links, account } = await fixture();
    const failure = new DomainError(ErrorCode.StorageUnavailable, 'storage unavailable', { retryAfter: 1 });
    store.createLink = async () => {
      throw failure;
    };
    await assert.rejects(links.create(account, { url: 'https://example.org', short: 'any-code' }), (error) => error === failure);
  });
});

describe('createLinkService: creating with a generated shortcode', () => {
  test('draws a 6-character alphanumeric code and returns what was stored', async () => {
    const { store, links, account } = await fixture();
    const code = await links.create(account, { url: 'https://example.org', short: undefined });
    assert.match(code, GENERATED);
    assert.deepEqual(createdLinks(store).map((link) => link.shortCode), [code]);
    assert.equal(store.links.get(code)?.pointsTo, 'https://example.org');
  });

  test('draws again when the store says the code is taken, with a new code each time', async () => {
    const { store, links, account } = await fixture();
    store.scriptCreateLink('taken', 'taken');
    const code = await links.create(account, { url: 'https://example.org', short: undefined });
    const tried = createdLinks(store).map((link) => link.shortCode);
    assert.equal(tried.length, 3);
    assert.equal(tried[2], code);
    for (const attempt of tried) assert.match(attempt, GENERATED);
    assert.equal(new Set(tried).size, 3, `three different codes: ${tried.join(', ')}`);
  });

  test('gives up after eight taken codes with an internal error, not a domain error', async () => {
    const { store, links, account } = await fixture();
    store.scriptCreateLink(...Array.from({ length: 8 }, () => 'taken' as const));
    await assert.rejects(links.create(account, { url: 'https://example.org', short: undefined }), (error) => {
      assert.ok(!(error instanceof DomainError));
      assert.equal((error as Error).message, 'no free shortcode after 8 attempts');
      return true;
    });
    assert.equal(store.callsOf('createLink').length, 8);
  });

  test('stops at once when the account is full: the cap is not retried', async () => {
    const { store, links, account } = await fixture();
    store.scriptCreateLink('taken', 'cap_reached');
    await assert.rejects(links.create(account, { url: 'https://example.org', short: undefined }), domainError(ErrorCode.LinkCapReached, 'the account already holds its maximum of 10 links'));
    assert.equal(store.callsOf('createLink').length, 2);
  });
});

describe('createLinkService: deleting', () => {
  test('deletes the owner\'s link', async () => {
    const { store, links, account } = await fixture();
    await links.create(account, { url: 'https://example.org', short: 'doomed' });
    assert.equal(await links.delete(account, 'doomed'), undefined);
    assert.deepEqual(store.callsOf('deleteLink'), [['doomed', account.uid]]);
    assert.equal(store.links.has('doomed'), false);
  });

  test('tells the link.deleted listener the link as the store removed it, without reading the list', async () => {
    const store = createFakeStore();
    const told: [string, number, string][] = [];
    const events = {
      linkCreated() {}, linkUpdated() {},
      linkDeleted: (link: { shortCode: string; accesses: number }, eventId: string) => told.push([link.shortCode, link.accesses, eventId]),
    };
    const links = createLinkService({ store, clock: () => NOW, ownOrigin: OWN_ORIGIN, blockedHosts: [], events });
    const account = await store.createAccount({ codeHash: 'a'.repeat(64), dateCreated: NOW.toISOString(), maxLinks: 5 });
    await links.create(account, { url: 'https://example.org', short: 'watched' });
    await links.resolve('watched');
    await links.delete(account, 'watched');
    assert.equal(store.callsOf('listLinkDetails').length, 0, 'no list is read to find the link');
    const [[shortCode, accesses, eventId] = []] = told;
    assert.deepEqual([shortCode, accesses], ['watched', 1]);
    assert.match(String(eventId), /^msg_[0-9a-f]{32}$/);
  });

  test('another account\'s link is NotOwner, and stays', async () => {
    const { store, links, account, other } = await fixture();
    await links.create(other, { url: 'https://example.org', short: 'theirs' });
    await assert.rejects(links.delete(account, 'theirs'), domainError(ErrorCode.NotOwner, 'the link belongs to another account'));
    assert.equal(store.links.has('theirs'), true);
  });

  test('an unknown shortcode is LinkNotFound', async () => {
    const { links, account } = await fixture();
    await assert.rejects(links.delete(account, 'nobody'), domainError(ErrorCode.LinkNotFound, 'no link has this shortcode'));
  });

  test('text that cannot be a shortcode is LinkNotFound without asking the store', async () => {
    const { store, links, account } = await fixture();
    for (const text of ['has space', 'abc/d', 'x'.repeat(2001), '']) {
      await assert.rejects(links.delete(account, text), domainError(ErrorCode.LinkNotFound));
    }
    assert.deepEqual(store.callsOf('deleteLink'), []);
  });
});

describe('createLinkService: listing, resolving, peeking', () => {
  test('lists the account\'s links through the store', async () => {
    const { store, links, account, other } = await fixture();
    await links.create(account, { url: 'https://example.org/mine', short: 'mine-1' });
    await links.create(other, { url: 'https://example.org/theirs', short: 'theirs-1' });
    assert.deepEqual(await links.list(account), [{ shortCode: 'mine-1', pointsTo: 'https://example.org/mine', createdBy: account.uid, accesses: 0 }]);
    assert.deepEqual(store.callsOf('listLinks'), [[account.uid]]);
  });

  test('resolving counts one access each time and answers the link with it', async () => {
    const { store, links, account } = await fixture();
    await links.create(account, { url: 'https://example.org/r', short: 'counted' });
    assert.equal((await links.resolve('counted')).accesses, 1);
    const second = await links.resolve('counted');
    assert.deepEqual(second, { shortCode: 'counted', pointsTo: 'https://example.org/r', createdBy: account.uid, accesses: 2 });
    assert.equal(store.callsOf('resolveLink').length, 2);
    assert.equal(store.callsOf('findLink').length, 0);
  });

  test('peeking answers the link without counting', async () => {
    const { store, links, account } = await fixture();
    await links.create(account, { url: 'https://example.org/p', short: 'peeked' });
    assert.equal((await links.peek('peeked')).accesses, 0);
    assert.equal((await links.peek('peeked')).accesses, 0);
    assert.equal(store.callsOf('resolveLink').length, 0);
  });

  test('an unknown shortcode is LinkNotFound for both', async () => {
    const { links } = await fixture();
    await assert.rejects(links.resolve('unknown'), domainError(ErrorCode.LinkNotFound, 'no link has this shortcode'));
    await assert.rejects(links.peek('unknown'), domainError(ErrorCode.LinkNotFound, 'no link has this shortcode'));
  });

  test('text that cannot be a shortcode is LinkNotFound for both, without asking the store', async () => {
    const { store, links } = await fixture();
    for (const text of ['', 'a/b/c/d', 'ünïcode', 'x'.repeat(2001)]) {
      await assert.rejects(links.resolve(text), domainError(ErrorCode.LinkNotFound));
      await assert.rejects(links.peek(text), domainError(ErrorCode.LinkNotFound));
    }
    assert.deepEqual(store.callsOf('resolveLink'), []);
    assert.deepEqual(store.callsOf('findLink'), []);
  });
});
