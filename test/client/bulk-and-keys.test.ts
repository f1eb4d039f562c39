/**
 * The typed client's bulk create and API keys against the real server (CONTRACT §8.4, §8.5).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ShortlinkClient, ShortlinkError } from '../../packages/client/src/index.ts';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';

describe('client: bulk create and API keys', () => {
  let server: ServerProcess;
  let anonymous: ShortlinkClient;

  before(async () => {
    server = await startServer({ env: { DEFAULT_MAX_LINKS: '3' } });
    anonymous = new ShortlinkClient({ baseUrl: server.url });
  });
  after(cleanup);

  async function signedIn(): Promise<ShortlinkClient> {
    return anonymous.withAccessCode((await anonymous.newAccount()).AccessCode);
  }

  test('createLinks answers each item in place: the short URL, or the status and text of a single create', async () => {
    const client = await signedIn();
    const results = await client.createLinks([
      { url: 'https://example.com/a', short: 'bulk-client-a', title: 'A', tags: ['x'], maxVisits: 2 },
      { url: 'not a url' },
      { url: 'https://example.com/b', short: 'bulk-client-a' },
      { url: 'https://example.com/c' },
      { url: 'https://example.com/d' },
    ]);
    assert.deepEqual(results[0], { ShortUrl: `${E2E_BASE_URL}/bulk-client-a` });
    assert.equal((results[1] as { Status: number }).Status, 400);
    assert.deepEqual(results[2], { Status: 409, Error: 'Unable to create link: the shortcode "bulk-client-a" is already taken' });
    assert.ok('ShortUrl' in results[3]!);
    assert.ok('ShortUrl' in results[4]!);
    const links = await client.listLinks();
    assert.deepEqual(links.map((link) => link.Title), ['A', null, null]);
    await assert.rejects(client.createLinks([]), (error: unknown) => error instanceof ShortlinkError && error.status === 400 && /^Unable to create links: /.test(error.message));
  });

  test('keys.create, keys.list and keys.delete manage API keys; a key works as the client\'s credential within its scopes', async () => {
    const client = await signedIn();
    const created = await client.keys.create('deploy', ['links:write', 'links:read']);
    assert.deepEqual(Object.keys(created), ['Id', 'Name', 'Scopes', 'Key', 'DateCreated', 'LastUsed']);
    assert.match(created.Key, /^slk_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(created.Scopes, ['links:read', 'links:write']);
    const keyed = anonymous.withAccessCode(created.Key);
    await keyed.createLink('https://example.com/by-key', { short: 'client-by-key' });
    assert.deepEqual((await keyed.listLinks()).map((link) => link.ShortCode), ['client-by-key']);
    await assert.rejects(keyed.stats(), (error: unknown) =>
      error instanceof ShortlinkError && error.status === 403 && error.message === 'Unable to get statistics: the key does not allow this');
    await assert.rejects(keyed.keys.list(), (error: unknown) => error instanceof ShortlinkError && error.status === 403);
    const listed = await client.keys.list();
    assert.deepEqual(listed.map((key) => key.Id), [created.Id]);
    assert.ok(!('Key' in listed[0]!));
    await client.keys.delete(created.Id);
    assert.deepEqual(await client.keys.list(), []);
    await assert.rejects(keyed.listLinks(), (error: unknown) => error instanceof ShortlinkError && error.status === 401);
  });
});
