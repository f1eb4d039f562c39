/**
 * The typed client against the real server: every method, and every error status a client
 * can meet, arriving as a ShortlinkError with the status and the service's message.
 * Statuses a healthy test server does not produce (500, 503) and network failures are
 * checked through a stand-in fetch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { ShortlinkAdminClient, ShortlinkClient, ShortlinkError, type Account, type LinkDetails } from '../../packages/client/src/index.ts';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';

const ADMIN_TOKEN = 'client-test-admin-token-0123456789abcdef';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Runs `work`, expecting a ShortlinkError; returns it for further checks. */
async function refusal(work: () => Promise<unknown>, status: number, message: RegExp): Promise<ShortlinkError> {
  try {
    await work();
  } catch (error) {
    assert.ok(error instanceof ShortlinkError, `expected a ShortlinkError, got ${String(error)}`);
    assert.equal(error.status, status, error.message);
    assert.match(error.message, message);
    assert.equal(error.name, 'ShortlinkError');
    return error;
  }
  assert.fail(`expected HTTP ${status}, but the call succeeded`);
}

describe('client against a running server', () => {
  let server: ServerProcess;
  let anonymous: ShortlinkClient;

  before(async () => {
    server = await startServer({ env: { DEFAULT_MAX_LINKS: '3', ADMIN_TOKEN, WEBHOOK_SECRET_KEY: 'a-webhook-key-of-at-least-32-characters', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    anonymous = new ShortlinkClient({ baseUrl: server.url });
  });
  after(cleanup);

  async function signedIn(): Promise<{ account: Account; client: ShortlinkClient }> {
    const account = await anonymous.newAccount();
    return { account, client: new ShortlinkClient({ baseUrl: server.url, accessCode: account.AccessCode }) };
  }

  test('newAccount answers the Account JSON with a fresh access code', async () => {
    const account = await anonymous.newAccount();
    assert.deepEqual(Object.keys(account), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
    assert.ok(Number.isInteger(account.Uid) && account.Uid > 0);
    assert.match(account.AccessCode, UUID_V4);
    assert.equal(new Date(account.DateCreated).toISOString(), account.DateCreated);
    assert.equal(account.MaxLinks, 3);
  });

  test('getAccount and userInfo answer the account of the access code', async () => {
    const { account, client } = await signedIn();
    assert.deepEqual(await client.getAccount(), account);
    assert.deepEqual(await client.userInfo(), account);
  });

  test('withAccessCode gives the same client with another code', async () => {
    const account = await anonymous.newAccount();
    assert.deepEqual(await anonymous.withAccessCode(account.AccessCode).getAccount(), account);
  });

  test('createLink answers the short URL, with a chosen or a generated shortcode', async () => {
    const { client } = await signedIn();
    assert.equal(await client.createLink('https://example.com/chosen', { short: 'client-chosen' }), `${E2E_BASE_URL}/client-chosen`);
    const generated = await client.createLink('https://example.com/generated');
    assert.match(generated, new RegExp(`^${E2E_BASE_URL}/[A-Za-z0-9]{6}$`));
  });

  test('shorten answers the short URL and the shortcode, chosen or generated, ready for the other calls', async () => {
    const { client } = await signedIn();
    assert.deepEqual(await client.shorten('https://example.com/s1', { short: 'client-shorten' }), {
      shortUrl: `${E2E_BASE_URL}/client-shorten`, shortCode: 'client-shorten', domain: null,
    });
    const generated = await client.shorten('https://example.com/s2', { title: 'Two' });
    assert.match(generated.shortCode, /^[A-Za-z0-9]{6}$/);
    assert.equal(generated.shortUrl, `${E2E_BASE_URL}/${generated.shortCode}`);
    const edited = await client.updateLink(generated.shortCode, { maxVisits: 3 });
    assert.equal(edited.ShortCode, generated.shortCode);
    assert.equal(edited.Title, 'Two');
  });

  test('listLinksCsv answers the links as CSV, the columns of shortlink export', async () => {
    const { account, client } = await signedIn();
    await client.createLink('https://example.com/csv', { short: 'client-csv', title: 'A, "b"', tags: ['t1', 't2'] });
    const [link] = await client.listLinks();
    assert.equal(
      await client.listLinksCsv(),
      'ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules\n' +
        `client-csv,https://example.com/csv,${account.Uid},0,${link!.DateCreated},"A, ""b""","t1,t2",,,,false,false,\n`,
    );
    assert.equal(await client.listLinksCsv({ q: 'nothing-matches' }), 'ShortCode,PointsTo,CreatedBy,Accesses,DateCreated,Title,Tags,ExpiresAt,MaxVisits,Domain,ForwardQuery,Protected,Rules\n');
  });

  test('listLinks answers the LinkDetails of each link, oldest first', async () => {
    const { account, client } = await signedIn();
    assert.deepEqual(await client.listLinks(), []);
    await client.createLink('https://example.com/1', { short: 'client-list-1' });
    await client.createLink('https://example.com/2', { short: 'client-list-2' });
    const list: LinkDetails[] = await client.listLinks();
    const none = { Title: null, Tags: [], ExpiresAt: null, MaxVisits: null, Domain: null, ForwardQuery: false, Protected: false, Rules: [] };
    assert.deepEqual(list, [
      { ShortCode: 'client-list-1', PointsTo: 'https://example.com/1', CreatedBy: account.Uid, Accesses: 0, DateCreated: list[0]!.DateCreated, ...none },
      { ShortCode: 'client-list-2', PointsTo: 'https://example.com/2', CreatedBy: account.Uid, Accesses: 0, DateCreated: list[1]!.DateCreated, ...none },
    ]);
    assert.deepEqual(Object.keys(list[0]!), [
      'ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules',
    ]);
  });

  test('a link on another domain, with forwarding, rules and a password: created, listed, edited, resolved, counted, deleted by its LinkRef', async () => {
    const { client } = await signedIn();
    const registered = await fetch(`${server.url}/v1/admin/domain?origin=https://go.client.test`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(registered.status, 200, await registered.text());
    const created = await client.shorten('https://example.com/routed', {
      short: 'client-twin', domain: 'go.client.test', forwardQuery: true, password: 'open sesame',
      rules: [{ if: { os: 'ios' }, to: 'https://apps.example.com/ios' }, { if: { device: ['mobile', 'tablet'], query: { ref: 'qr' } }, to: 'https://example.com/qr' }],
    });
    assert.deepEqual(created, { shortUrl: 'https://go.client.test/client-twin', shortCode: 'client-twin', domain: 'go.client.test' });
    await client.createLink('https://example.com/plain', { short: 'client-twin' });

    const [onDomain, ...others] = await client.listLinks({ domain: 'go.client.test' });
    assert.equal(others.length, 0);
    assert.deepEqual([onDomain!.Domain, onDomain!.ForwardQuery, onDomain!.Protected, onDomain!.Rules], ['go.client.test', true, true, [
      { If: { os: ['ios'] }, To: 'https://apps.example.com/ios' },
      { If: { device: ['mobile', 'tablet'], query: { ref: ['qr'] } }, To: 'https://example.com/qr' },
    ]]);

    await refusal(() => anonymous.resolve(created), 401, /^Unable to resolve link: a password is required$/);
    await refusal(() => anonymous.resolve(created, { password: 'not it at all' }), 401, /^Unable to resolve link: the password is wrong$/);
    assert.equal((await anonymous.resolve(created, { password: 'open sesame' })).PointsTo, 'https://example.com/routed');
    assert.equal((await anonymous.resolve('client-twin')).PointsTo, 'https://example.com/plain');
    assert.equal((await client.stats({ short: 'client-twin', domain: 'go.client.test' })).ShortCode, 'client-twin');

    const edited = await client.updateLink(created, { forwardQuery: false, rules: null, password: null, title: 'Open' });
    assert.deepEqual([edited.Domain, edited.ForwardQuery, edited.Protected, edited.Rules, edited.Title], ['go.client.test', false, false, [], 'Open']);
    assert.equal((await anonymous.resolve(created)).Accesses, 2);
    await refusal(() => client.createLink('https://example.com/x', { domain: 'nowhere.client.test' }), 400, /^Unable to create link: .*not registered/);

    await client.deleteLink({ shortCode: onDomain!.ShortCode, domain: onDomain!.Domain });
    assert.deepEqual((await client.listLinks()).map((link) => [link.ShortCode, link.Domain]), [['client-twin', null]]);
    const results = await client.createLinks([{ url: 'https://example.com/bulk', domain: 'go.client.test', forwardQuery: true }]);
    assert.match((results[0] as { ShortUrl: string }).ShortUrl, /^https:\/\/go\.client\.test\/[A-Za-z0-9]{6}$/);
    const admin = new ShortlinkAdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
    await admin.takeDownLink({ shortCode: 'client-twin', domain: null });
    assert.deepEqual((await client.listLinks()).map((link) => [link.Domain, link.ForwardQuery]), [['go.client.test', true]]);
  });

  test('createLink takes the details, updateLink edits and clears them, listLinksPage follows the cursor', async () => {
    const { client } = await signedIn();
    const expires = new Date(Date.now() + 3_600_000);
    await client.createLink('https://example.com/d1', { short: 'client-det-1', title: 'One', tags: ['Alpha', 'beta'], expires, maxVisits: 2 });
    await client.createLink('https://example.com/d2', { short: 'client-det-2', tags: ['alpha'] });
    const [first] = await client.listLinks({ q: 'det-1' });
    assert.deepEqual([first!.Title, first!.Tags, first!.ExpiresAt, first!.MaxVisits], ['One', ['alpha', 'beta'], expires.toISOString(), 2]);
    const edited = await client.updateLink('client-det-1', { url: 'https://example.com/moved', title: null, tags: null, expires: null, maxVisits: 5 });
    assert.deepEqual([edited.PointsTo, edited.Title, edited.Tags, edited.ExpiresAt, edited.MaxVisits], ['https://example.com/moved', null, [], null, 5]);
    const page1 = await client.listLinksPage({ limit: 1 });
    assert.deepEqual(page1.links.map((l) => l.ShortCode), ['client-det-1']);
    assert.ok(page1.nextCursor !== undefined);
    const page2 = await client.listLinksPage({ limit: 1, cursor: page1.nextCursor });
    assert.deepEqual(page2.links.map((l) => l.ShortCode), ['client-det-2']);
    assert.equal(page2.nextCursor, undefined);
    assert.deepEqual((await client.listLinks({ tags: ['alpha'] })).map((l) => l.ShortCode), ['client-det-2']);
    await refusal(() => client.updateLink('client-det-1', { maxVisits: 0 }), 400, /^Unable to update link: /);
    await refusal(() => client.updateLink('client-none', { title: 'x' }), 404, /^Unable to update link: /);
    await client.updateLink('client-det-1', { maxVisits: 1 });
    await client.resolve('client-det-1');
    await refusal(() => client.resolve('client-det-1'), 410, /^Unable to resolve link: the link has reached its visit limit$/);
  });

  test('resolve counts one access and answers the link with it', async () => {
    const { account, client } = await signedIn();
    await client.createLink('https://example.com/resolve', { short: 'client-resolve' });
    assert.deepEqual(await anonymous.resolve('client-resolve'), {
      ShortCode: 'client-resolve', PointsTo: 'https://example.com/resolve', CreatedBy: account.Uid, Accesses: 1,
    });
    assert.equal((await anonymous.resolve('client-resolve')).Accesses, 2);
  });

  test('follow answers the redirect target without following it, and counts the access', async () => {
    const { client } = await signedIn();
    await client.createLink('https://bücher.example/straße?q=1', { short: 'client-follow' });
    assert.equal(await anonymous.follow('client-follow'), 'https://xn--bcher-kva.example/stra%C3%9Fe?q=1');
    assert.equal((await anonymous.resolve('client-follow')).Accesses, 2);
  });

  test('stats and statsCsv answer the statistics of a link and of the account', async () => {
    const { client } = await signedIn();
    await client.createLink('https://example.com/stats', { short: 'client-stats' });
    await anonymous.resolve('client-stats');
    await anonymous.follow('client-stats');
    const stats = await client.stats({ short: 'client-stats', from: new Date(Date.now() - 3 * 3_600_000), interval: 'hour' });
    assert.equal(stats.ShortCode, 'client-stats');
    assert.equal(stats.Visits, 2);
    assert.equal(stats.Interval, 'hour');
    assert.equal(stats.Series.length, 4);
    assert.equal((await client.stats()).ShortCode, null);
    const csv = await client.statsCsv({ short: 'client-stats', interval: 'day' });
    assert.match(csv, /^time,visits,bots\n/);
    assert.equal(csv.trimEnd().split('\n').length, 32);
    await refusal(() => client.stats({ short: 'client-stats', interval: 'week' as 'day' }), 400, /^Unable to get statistics: /);
    await refusal(() => client.stats({ short: 'client-none' }), 404, /^Unable to get statistics: /);
  });

  test('events yields the account\'s events live, typed, until the signal aborts', async () => {
    const { account, client } = await signedIn();
    const controller = new AbortController();
    const stream = client.events({ signal: controller.signal });
    // The stream opens with the first next(); the link is made once it listens.
    const first = stream.next();
    const created = (async () => {
      for (let i = 0; i < 50; i++) {
        await client.createLink('https://example.com/events', { short: `client-events-${i}` });
        const seen = await Promise.race([first.then(() => true), new Promise((resolve) => setTimeout(resolve, 1000, false))]);
        if (seen === true) return;
        await client.deleteLink(`client-events-${i}`);
      }
    })();
    const { value } = await first;
    await created;
    assert.ok(value !== undefined);
    assert.equal(value.type, 'link.created');
    assert.match(value.id, /^msg_[0-9a-f]{32}$/, 'the id of its webhook deliveries (webhook-id)');
    if (value.type === 'link.created') assert.equal(value.data.CreatedBy, account.Uid);
    await anonymous.resolve(value.type === 'link.created' ? value.data.ShortCode : '');
    for (;;) {
      const next = await stream.next();
      assert.equal(next.done, false);
      if (next.value?.type === 'link.visited') {
        assert.equal(next.value.data.visits.length, 1);
        break;
      }
    }
    controller.abort();
    assert.deepEqual(await stream.next(), { done: true, value: undefined });
    await refusal(() => anonymous.events().next(), 401, /^Unable to handle request: the client has no access code/);
    await refusal(() => new ShortlinkClient({ baseUrl: server.url, accessCode: crypto.randomUUID() }).events().next(), 401, /^Unable to handle request: the access code is not valid/);
  });

  test('deleteLink removes the link and frees its shortcode', async () => {
    const { client } = await signedIn();
    await client.createLink('https://example.com/delete', { short: 'client-delete' });
    await client.deleteLink('client-delete');
    assert.deepEqual(await client.listLinks(), []);
    await refusal(() => anonymous.resolve('client-delete'), 404, /^Unable to resolve link: /);
    await client.createLink('https://example.com/again', { short: 'client-delete' });
  });

  test('400: an invalid url or shortcode', async () => {
    const { client } = await signedIn();
    await refusal(() => client.createLink('ftp://example.com'), 400, /^Unable to create link: url must use http or https$/);
    await refusal(() => client.createLink('https://example.com', { short: 'ab' }), 400, /^Unable to create link: short must be/);
  });

  test('401: an unknown access code, or none at all', async () => {
    const stranger = anonymous.withAccessCode('0b8e6f0e-5d9c-4a51-9f7e-3c2d1b0a9f88');
    await refusal(() => stranger.getAccount(), 401, /^Unable to get account information: /);
    await refusal(() => stranger.listLinks(), 401, /^Unable to list links: /);
    await refusal(() => stranger.createLink('https://example.com'), 401, /^Unable to create link: /);
    await refusal(() => stranger.deleteLink('whatever'), 401, /^Unable to delete link: /);
    // Without a code the client does not even ask.
    await refusal(() => anonymous.listLinks(), 401, /no access code/);
  });

  test('403: the link cap, and deleting another account\'s link', async () => {
    const { client } = await signedIn();
    for (let i = 0; i < 3; i++) await client.createLink(`https://example.com/cap/${i}`);
    await refusal(() => client.createLink('https://example.com/cap/3'), 403, /^Unable to create link: .*maximum of 3 links/);

    const owner = await signedIn();
    await owner.client.createLink('https://example.com/owned', { short: 'client-owned' });
    await refusal(() => client.deleteLink('client-owned'), 403, /^Unable to delete link: /);
    assert.equal((await owner.client.listLinks()).length, 1);
  });

  test('404: unknown shortcodes for resolve, follow and delete', async () => {
    const { client } = await signedIn();
    await refusal(() => anonymous.resolve('no-such-link'), 404, /^Unable to resolve link: /);
    // The short URL answers an HTML page for browsers; the client words its own line.
    await refusal(() => anonymous.follow('no-such-link'), 404, /^Unable to resolve link: not found$/);
    await refusal(() => client.deleteLink('no-such-link'), 404, /^Unable to delete link: /);
  });

  test('409: a shortcode that is already taken', async () => {
    const first = await signedIn();
    const second = await signedIn();
    await first.client.createLink('https://example.com/a', { short: 'client-taken' });
    await refusal(() => second.client.createLink('https://example.com/b', { short: 'client-taken' }), 409, /^Unable to create link: .*taken/);
  });

  test('shortcodes are sent escaped in paths and queries', async () => {
    await refusal(() => anonymous.resolve('a/b?c#d'), 404, /^Unable to resolve link: /);
    const { client } = await signedIn();
    await refusal(() => client.deleteLink('x&short=y'), 404, /^Unable to delete link: /);
  });

  test('rotateAccessCode answers the account with a new code; the old one is refused', async () => {
    const { account, client } = await signedIn();
    const rotated = await client.rotateAccessCode();
    assert.equal(rotated.Uid, account.Uid);
    assert.match(rotated.AccessCode, UUID_V4);
    assert.notEqual(rotated.AccessCode, account.AccessCode);
    await refusal(() => client.getAccount(), 401, /^Unable to get account information: /);
    assert.deepEqual(await client.withAccessCode(rotated.AccessCode).getAccount(), rotated);
  });

  test('webhooks: create (secret once), list, deliveries, delete; a delivery verifies', async () => {
    const { client } = await signedIn();
    const receiver = await startReceiver();
    try {
      const created = await client.createWebhook(receiver.url, ['link.created']);
      assert.match(created.Secret, /^whsec_/);
      assert.deepEqual((await client.listWebhooks()).map((w) => [w.Id, w.Url, w.Events]), [[created.Id, receiver.url, ['link.created']]]);
      await client.createLink('https://example.com/hooked');
      await receiver.until((got) => got.length === 1);
      const event = new Webhook(created.Secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>);
      assert.equal((event as { type: string }).type, 'link.created');
      let deliveries: Awaited<ReturnType<typeof client.webhookDeliveries>> = [];
      for (const deadline = Date.now() + 5000; deliveries.length === 0 && Date.now() < deadline;) {
        deliveries = await client.webhookDeliveries(created.Id);
      }
      assert.equal(deliveries[0]?.Status, 200);
      await refusal(() => client.createWebhook('ftp://example.com/', ['link.created']), 400, /^Unable to manage webhooks: /);
      await client.deleteWebhook(created.Id);
      await refusal(() => client.webhookDeliveries(created.Id), 404, /^Unable to manage webhooks: /);
      assert.deepEqual(await client.listWebhooks(), []);
    } finally {
      await receiver.close();
    }
  });

  test('deleteAccount removes the account and its links', async () => {
    const { client } = await signedIn();
    const shortUrl = await client.createLink('https://example.com/doomed');
    await client.deleteAccount();
    await refusal(() => client.listLinks(), 401, /^Unable to list links: /);
    await refusal(() => anonymous.resolve(shortUrl.slice(shortUrl.lastIndexOf('/') + 1)), 404, /^Unable to resolve link: /);
  });

  test('the admin client lists, updates, searches and takes down; a wrong token is a 401 ShortlinkError', async () => {
    const admin = new ShortlinkAdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
    const { account, client } = await signedIn();
    const shortUrl = await client.createLink('https://takedown.client.example/x');
    const short = shortUrl.slice(shortUrl.lastIndexOf('/') + 1);
    const first = await admin.listAccounts({ limit: 1 });
    assert.equal(first.items.length, 1);
    assert.ok(first.next !== undefined, 'more accounts remain');
    const second = await admin.listAccounts({ limit: 1, cursor: first.next });
    assert.ok(second.items[0]!.Uid > first.items[0]!.Uid);
    const updated = await admin.updateAccount(account.Uid, { maxLinks: 4, disabled: true });
    assert.deepEqual({ ...updated, DateCreated: '' }, { Uid: account.Uid, DateCreated: '', MaxLinks: 4, Links: 1, Disabled: true });
    await refusal(() => client.listLinks(), 403, /^Unable to list links: the account is disabled$/);
    await admin.updateAccount(account.Uid, { disabled: false });
    const found = await admin.searchLinks({ host: 'client.example' });
    assert.deepEqual(found.items.map((link) => link.ShortCode), [short]);
    assert.equal(found.next, undefined);
    await admin.takeDownLink(short);
    await refusal(() => admin.takeDownLink(short), 404, /^Unable to administer: /);
    await refusal(() => new ShortlinkAdminClient({ baseUrl: server.url, token: `${ADMIN_TOKEN}x` }).listAccounts(), 401, /^Unable to administer: /);
    await refusal(() => new ShortlinkAdminClient({ baseUrl: server.url, token: account.AccessCode }).listAccounts(), 401, /^Unable to administer: /);
  });
});

describe('client against a rate-limited server', () => {
  after(cleanup);

  test('429 carries the Retry-After seconds', async () => {
    const server = await startServer({ env: { RATE_LIMIT: 'on', RATE_LIMIT_EXEMPT: '', RATE_LIMIT_NEW_ACCOUNT: '1/1m' } });
    const client = new ShortlinkClient({ baseUrl: server.url });
    await client.newAccount();
    const error = await refusal(() => client.newAccount(), 429, /^Unable to create account: too many requests/);
    assert.ok(error.retryAfter !== undefined && error.retryAfter > 0 && error.retryAfter <= 60, String(error.retryAfter));
  });
});

describe('client with a stand-in fetch', () => {
  function answering(status: number, body: string, headers: Record<string, string> = {}): typeof fetch {
    return async () => new Response(body, { status, headers });
  }

  test('500 and 503 become ShortlinkErrors with the service line and Retry-After', async () => {
    const broken = new ShortlinkClient({
      baseUrl: 'http://sl.test',
      fetch: answering(500, 'Unable to list links: internal error', { 'content-type': 'text/plain; charset=utf-8' }),
      accessCode: 'code',
    });
    await refusal(() => broken.listLinks(), 500, /^Unable to list links: internal error$/);
    const down = new ShortlinkClient({
      baseUrl: 'http://sl.test',
      fetch: answering(503, 'Unable to resolve link: storage unavailable', { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '1' }),
    });
    const error = await refusal(() => down.resolve('abcde'), 503, /storage unavailable/);
    assert.equal(error.retryAfter, 1);
  });

  test('a body that is not the service\'s plain text is replaced by a line naming the status', async () => {
    const proxied = new ShortlinkClient({
      baseUrl: 'http://sl.test',
      fetch: answering(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' }),
    });
    await refusal(() => proxied.newAccount(), 502, /^Unable to create account: HTTP 502/);
  });

  test('requests carry the access code as a Bearer header and link parameters as JSON', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const client = new ShortlinkClient({
      baseUrl: 'http://sl.test/',
      accessCode: 'the-code',
      fetch: async (url, init) => {
        seen.push({ url: String(url), init: init ?? {} });
        return new Response('http://sl.test/abcde', { status: 200 });
      },
    });
    await client.createLink('https://example.com/?a=1&b=2', { short: 'abcde' });
    assert.equal(seen[0]!.url, 'http://sl.test/v1/link');
    assert.equal(seen[0]!.init.method, 'POST');
    assert.deepEqual(seen[0]!.init.headers, { authorization: 'Bearer the-code', 'content-type': 'application/json' });
    assert.deepEqual(JSON.parse(String(seen[0]!.init.body)), { url: 'https://example.com/?a=1&b=2', short: 'abcde' });
  });

  test('network failures and timeouts surface as they are', async () => {
    const unreachable = new ShortlinkClient({ baseUrl: 'http://127.0.0.1:1' });
    await assert.rejects(() => unreachable.newAccount(), { name: 'TypeError', message: 'fetch failed' });
    const slow = new ShortlinkClient({
      baseUrl: 'http://sl.test',
      timeoutMs: 50,
      fetch: (_url, init) =>
        new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason))),
    });
    await assert.rejects(() => slow.resolve('abcde'), { name: 'TimeoutError' });
  });

  test('the base URL must be http(s)', () => {
    assert.throws(() => new ShortlinkClient({ baseUrl: 'localhost:8080' }), TypeError);
    assert.throws(() => new ShortlinkClient({ baseUrl: 'ftp://example.com' }), TypeError);
  });
});
