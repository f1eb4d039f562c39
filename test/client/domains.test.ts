/**
 * The typed client's domain calls against the real server (CONTRACT §8.1): the admin client
 * registers, lists and removes domains; an account lists the domains it may use.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ShortlinkAdminClient, ShortlinkClient, ShortlinkError } from '../../packages/client/src/index.ts';
import { cleanup, E2E_BASE_URL, startServer, type ServerProcess } from '../helpers/process.ts';

const ADMIN_TOKEN = 'client-domains-admin-token-0123456789abcdef';
const DEFAULT_HOST = new URL(E2E_BASE_URL).hostname;

async function refusal(work: () => Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(work, (error: unknown) => {
    assert.ok(error instanceof ShortlinkError, String(error));
    assert.equal(error.status, status, error.message);
    assert.match(error.message, message);
    return true;
  });
}

describe('client: domains', () => {
  let server: ServerProcess;
  let admin: ShortlinkAdminClient;

  before(async () => {
    server = await startServer({ env: { ADMIN_TOKEN } });
    admin = new ShortlinkAdminClient({ baseUrl: server.url, token: ADMIN_TOKEN });
  });
  after(cleanup);

  test('putDomain registers a domain and sets its fallbacks as given; listDomains lists it after the default', async () => {
    const put = await admin.putDomain('https://go.client.example', { notFoundUrl: 'https://www.example.com/404', expiredUrl: 'https://www.example.com/gone' });
    assert.deepEqual(Object.keys(put), ['Host', 'Origin', 'NotFoundUrl', 'RootUrl', 'ExpiredUrl', 'Links', 'DateCreated']);
    assert.deepEqual({ ...put, DateCreated: null }, {
      Host: 'go.client.example', Origin: 'https://go.client.example', NotFoundUrl: 'https://www.example.com/404', RootUrl: null,
      ExpiredUrl: 'https://www.example.com/gone', Links: 0, DateCreated: null,
    });
    const replaced = await admin.putDomain('https://go.client.example', { rootUrl: 'https://www.example.com/' });
    assert.deepEqual([replaced.NotFoundUrl, replaced.RootUrl, replaced.ExpiredUrl, replaced.DateCreated], [null, 'https://www.example.com/', null, put.DateCreated]);
    const listed = await admin.listDomains();
    assert.deepEqual(listed.map((domain) => [domain.Host, domain.DateCreated === null]), [[DEFAULT_HOST, true], ['go.client.example', false]]);
    await admin.deleteDomain('go.client.example');
  });

  test('an account lists the domains it may use, the default first; a removed one is gone', async () => {
    const anonymous = new ShortlinkClient({ baseUrl: server.url });
    const client = anonymous.withAccessCode((await anonymous.newAccount()).AccessCode);
    await admin.putDomain('http://links.client.example:8080');
    assert.deepEqual(await client.listDomains(), [
      { Host: DEFAULT_HOST, Origin: E2E_BASE_URL }, { Host: 'links.client.example', Origin: 'http://links.client.example:8080' },
    ]);
    await admin.deleteDomain('links.client.example');
    assert.deepEqual(await client.listDomains(), [{ Host: DEFAULT_HOST, Origin: E2E_BASE_URL }]);
    await refusal(() => anonymous.listDomains(), 401, /^Unable to manage domains: /);
  });

  test('refusals arrive as ShortlinkErrors named "manage domains"', async () => {
    await refusal(() => admin.putDomain('https://bad.client.example/path'), 400, /^Unable to manage domains: the parameter "origin"/);
    await refusal(() => admin.deleteDomain('nowhere.client.example'), 404, /^Unable to manage domains: no domain has this host$/);
    await refusal(() => admin.deleteDomain(DEFAULT_HOST), 400, /^Unable to manage domains: the default domain/);
    await refusal(() => new ShortlinkAdminClient({ baseUrl: server.url, token: `${ADMIN_TOKEN}x` }).listDomains(), 401, /^Unable to manage domains: /);
  });
});
