/**
 * CONTRACT §8.3, protected links through HTTP: the password's bounds, the form page (not
 * counted, strict, never showing the target), unlocking by form and by the JSON resolve, the
 * 401 texts, RATE_LIMIT_PASSWORD (429 with Retry-After; RATE_LIMIT=off), the visit limit, and
 * the password or its hash never coming back out (list, edit, CSV, events, webhooks).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import type { LinkDetails } from '../../src/http/schemas.ts';
import { newAccount, TEST_BASE_URL } from '../helpers/app.ts';
import { openEventStream } from '../helpers/event-stream.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { appFor as appWithServerHashing, assertError, HTML, JSON_TYPE, LINK_KEYS, listen, TEXT, type Reply } from './support.ts';

/**
 * The apps here hash link passwords at a lower scrypt cost than the server's (2^10 instead of
 * 2^15: a millisecond a hash, not tens): the same code hashes and verifies, the cost is
 * recorded in each hash, and test/unit/password.test.ts covers the server's own cost.
 */
const appFor: typeof appWithServerHashing = (t, overrides = {}, extra = {}) =>
  appWithServerHashing(t, overrides, { passwordHashing: { N: 2 ** 10, r: 8, p: 1 }, ...extra });

const TARGET = 'https://secret-target.example/private/report?id=42';
const PASSWORD = 'open sesame 1';
const FORM = 'application/x-www-form-urlencoded';
const OPERATION = 'resolve link';

function auth(code: string) {
  return { authorization: `Bearer ${code}` };
}

async function createOk(app: FastifyInstance, code: string, params: Record<string, string>): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/v1/link', query: params, headers: auth(code) });
  assert.equal(response.statusCode, 200, response.body);
  return response.body.slice(`${TEST_BASE_URL}/`.length);
}

async function details(app: FastifyInstance, code: string, short: string): Promise<LinkDetails> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', headers: auth(code) });
  assert.equal(response.statusCode, 200, response.body);
  const link = (response.json() as LinkDetails[]).find((l) => l.ShortCode === short);
  assert.ok(link, `${short} is listed`);
  return link;
}

function unlock(app: FastifyInstance, short: string, password: string | undefined, headers: Record<string, string> = {}): Promise<Reply> {
  const payload = password === undefined ? '' : new URLSearchParams({ password }).toString();
  return app.inject({ method: 'POST', url: `/${short}`, headers: { 'content-type': FORM, ...headers }, payload });
}

function resolveWith(app: FastifyInstance, short: string, password?: string): Promise<Reply> {
  return app.inject({ method: 'GET', url: `/v1/get/${short}`, query: password === undefined ? {} : { password } });
}

/** The password form, as the contract and the issue want it. */
function assertFormPage(response: Reply, status: number): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], HTML);
  assert.match(response.body, /<form[^>]*method="post"/i);
  assert.match(response.body, /name="password"/);
  assert.doesNotMatch(response.body, /<script/i, 'no script');
  assert.ok(!response.body.includes('secret-target'), 'the page never shows the target');
  const csp = String(response.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /script-src/, 'nothing allows a script');
  assert.equal(response.headers.location, undefined);
  assert.ok(!JSON.stringify(response.headers).includes('secret-target'), 'no header names the target');
}

async function protectedApp(t: TestContext, overrides: Parameters<typeof appFor>[1] = {}) {
  const testApp = await appFor(t, overrides);
  const account = await newAccount(testApp.app);
  const short = await createOk(testApp.app, account.code, { url: TARGET, password: PASSWORD });
  return { ...testApp, ...account, short };
}

describe('setting a password', () => {
  test('8 to 200 code points; 7 or 201 are 400; an empty password on create is none', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const refuse = async (password: string) => {
      const response = await app.inject({ method: 'GET', url: '/v1/link', query: { url: TARGET, password }, headers: auth(code) });
      assertError(response, 400, 'create link');
      assert.match(response.body, /password/);
      assert.ok(!response.body.includes(password), 'the error does not echo the password');
    };
    await refuse('seven77');
    await refuse('x'.repeat(201));
    await refuse('😀'.repeat(201));
    const eight = await createOk(app, code, { url: TARGET, password: '8chars!!' });
    const emoji = await createOk(app, code, { url: TARGET, password: '😀'.repeat(200) });
    const none = await createOk(app, code, { url: TARGET, password: '' });
    assert.equal((await details(app, code, eight)).Protected, true);
    assert.equal((await details(app, code, emoji)).Protected, true, '200 code points (400 UTF-16 units) fit');
    assert.equal((await details(app, code, none)).Protected, false);
    const open = await app.inject({ method: 'GET', url: `/${none}` });
    assert.equal(open.statusCode, 302);
    // The emoji password unlocks as typed.
    const unlocked = await unlock(app, emoji, '😀'.repeat(200));
    assert.equal(unlocked.statusCode, 302, unlocked.body);
  });

  test('edit sets, changes and (with an empty value) removes a password', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET });
    const edit = (password: string) => app.inject({ method: 'PATCH', url: '/v1/link', headers: auth(code), payload: { short, password } });
    const set = await edit(PASSWORD);
    assert.equal(set.statusCode, 200, set.body);
    assert.equal((set.json() as LinkDetails).Protected, true);
    assertFormPage(await app.inject({ method: 'GET', url: `/${short}` }), 200);
    assertError(await edit('short'), 400, 'update link');
    assert.equal((await edit('another password')).statusCode, 200);
    assert.equal((await unlock(app, short, PASSWORD)).statusCode, 401, 'the old password no longer works');
    assert.equal((await unlock(app, short, 'another password')).statusCode, 302);
    const removed = await edit('');
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal((removed.json() as LinkDetails).Protected, false);
    const open = await app.inject({ method: 'GET', url: `/${short}` });
    assert.equal(open.statusCode, 302);
    assert.equal(open.headers.location, TARGET);
    assert.equal((await resolveWith(app, short)).statusCode, 200);
  });
});

describe('the redirect of a protected link', () => {
  test('GET answers the form (200), HEAD too, neither counted; no target anywhere', async (t) => {
    const { app, code, short } = await protectedApp(t);
    const page = await app.inject({ method: 'GET', url: `/${short}` });
    assertFormPage(page, 200);
    assert.match(String(page.headers['cache-control']), /no-store/);
    const head = await app.inject({ method: 'HEAD', url: `/${short}` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers.location, undefined);
    assert.equal((await details(app, code, short)).Accesses, 0);
  });

  test('POST with the right password: the redirect to the target, counted once', async (t) => {
    const { app, code, short } = await protectedApp(t);
    const response = await unlock(app, short, PASSWORD);
    assert.equal(response.statusCode, 302, response.body);
    assert.equal(response.headers.location, new URL(TARGET).href);
    assert.equal(response.headers['cache-control'], 'private, no-cache');
    assert.equal((await details(app, code, short)).Accesses, 1);
    assert.equal((await unlock(app, short, PASSWORD)).statusCode, 302);
    assert.equal((await details(app, code, short)).Accesses, 2);
  });

  test('POST with a wrong or missing password: 401, the form with a message, WWW-Authenticate; not counted', async (t) => {
    const { app, code, short } = await protectedApp(t);
    for (const password of ['wrong password', PASSWORD.toUpperCase(), '', undefined]) {
      const response = await unlock(app, short, password);
      assertFormPage(response, 401);
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
      assert.match(response.body, /role="alert"/, 'a message');
    }
    assert.equal((await details(app, code, short)).Accesses, 0);
  });

  test('POST at a code that is not protected is no route (404); the form works on a registered domain', async (t) => {
    const token = 'token-for-protected-domain-tests-0123456789';
    const { app, code, short } = await protectedApp(t, { adminToken: token });
    const plain = await createOk(app, code, { url: TARGET });
    assert.equal((await unlock(app, plain, PASSWORD)).statusCode, 404);
    assert.equal((await unlock(app, 'nosuchcode', PASSWORD)).statusCode, 404);
    const put = await app.inject({ method: 'PUT', url: '/v1/admin/domain', query: { origin: 'https://go.example.com' }, headers: { authorization: `Bearer ${token}` } });
    assert.equal(put.statusCode, 200, put.body);
    await createOk(app, code, { url: 'https://other-target.example/', short, domain: 'go.example.com', password: 'the domain password' });
    assertFormPage(await app.inject({ method: 'GET', url: `/${short}`, headers: { host: 'go.example.com' } }), 200);
    assert.equal((await unlock(app, short, PASSWORD, { host: 'go.example.com' })).statusCode, 401, 'the default domain\'s password does not open it');
    const opened = await unlock(app, short, 'the domain password', { host: 'go.example.com' });
    assert.equal(opened.statusCode, 302);
    assert.equal(opened.headers.location, 'https://other-target.example/');
    assert.equal((await details(app, code, short)).Accesses, 0, 'the default domain\'s link was not counted');
  });
});

describe('the JSON resolve of a protected link', () => {
  test('absent → 401 "a password is required", wrong → 401 "the password is wrong", right → 200 Link counted', async (t) => {
    const { app, code, uid, short } = await protectedApp(t);
    const absent = await resolveWith(app, short);
    assertError(absent, 401, OPERATION);
    assert.equal(absent.body, 'Unable to resolve link: a password is required');
    assert.equal(absent.headers['www-authenticate'], 'Bearer realm="shortlink"');
    const empty = await resolveWith(app, short, '');
    assert.equal(empty.statusCode, 401);
    const wrong = await resolveWith(app, short, 'not the password');
    assertError(wrong, 401, OPERATION);
    assert.equal(wrong.body, 'Unable to resolve link: the password is wrong');
    assert.equal(wrong.headers['www-authenticate'], 'Bearer realm="shortlink"');
    assert.equal((await details(app, code, short)).Accesses, 0);

    const right = await resolveWith(app, short, PASSWORD);
    assert.equal(right.statusCode, 200, right.body);
    assert.equal(right.headers['content-type'], JSON_TYPE);
    assert.deepEqual(Object.keys(right.json() as object), LINK_KEYS);
    assert.deepEqual(right.json(), { ShortCode: short, PointsTo: TARGET, CreatedBy: uid, Accesses: 1 });
    // In a body too.
    const inJson = await app.inject({ method: 'POST', url: `/v1/get/${short}`, payload: { password: PASSWORD } });
    assert.equal(inJson.statusCode, 200, inJson.body);
    assert.equal((inJson.json() as { Accesses: number }).Accesses, 2);
    const inForm = await app.inject({ method: 'POST', url: `/v1/get/${short}`, headers: { 'content-type': FORM }, payload: `password=${encodeURIComponent(PASSWORD)}` });
    assert.equal(inForm.statusCode, 200, inForm.body);
    assert.equal((inForm.json() as { Accesses: number }).Accesses, 3);
    assert.equal((await details(app, code, short)).Accesses, 3);
    // HEAD counts nothing.
    await app.inject({ method: 'HEAD', url: `/v1/get/${short}`, query: { password: PASSWORD } });
    assert.equal((await details(app, code, short)).Accesses, 3);
  });

  test('max_visits stays exact with a password; wrong guesses never use a visit', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET, password: PASSWORD, max_visits: '2' });
    assert.equal((await unlock(app, short, 'wrong password')).statusCode, 401);
    assert.equal((await resolveWith(app, short, 'wrong password')).statusCode, 401);
    assert.equal((await unlock(app, short, PASSWORD)).statusCode, 302);
    assert.equal((await resolveWith(app, short, PASSWORD)).statusCode, 200);
    const gone = await resolveWith(app, short, PASSWORD);
    assertError(gone, 410, OPERATION);
    assert.equal(gone.body, 'Unable to resolve link: the link has reached its visit limit');
    const page = await unlock(app, short, PASSWORD);
    assert.equal(page.statusCode, 410);
    assert.equal(page.headers['content-type'], HTML);
    assert.equal((await details(app, code, short)).Accesses, 2);
  });

  test('racing right passwords with max_visits: exactly N succeed', async (t) => {
    const { app } = await appFor(t);
    const { code } = await newAccount(app);
    const short = await createOk(app, code, { url: TARGET, password: PASSWORD, max_visits: '3' });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? unlock(app, short, PASSWORD) : resolveWith(app, short, PASSWORD))));
    const succeeded = answers.filter((r) => r.statusCode === 200 || r.statusCode === 302).length;
    assert.equal(succeeded, 3, answers.map((r) => r.statusCode).join(','));
    assert.ok(answers.every((r) => [200, 302, 410].includes(r.statusCode)));
    assert.equal((await details(app, code, short)).Accesses, 3);
  });
});

describe('RATE_LIMIT_PASSWORD', () => {
  const limited = () => ({
    rateLimit: true, rateLimitExempt: [],
    rateLimitPolicies: loadConfig({ RATE_LIMIT_PASSWORD: '3/15m', RATE_LIMIT_RESOLVE: '1000/1m', RATE_LIMIT_UNKNOWN_CODE: '1000/1m' }).rateLimitPolicies,
  });

  test('past 3 wrong guesses even the right one is 429 with Retry-After: the form on POST /{code}, text on JSON', async (t) => {
    const { app, code, short } = await protectedApp(t, limited());
    const other = await createOk(app, code, { url: TARGET, password: PASSWORD });
    for (let i = 0; i < 3; i++) assert.equal((await unlock(app, short, `wrong guess ${i}`)).statusCode, 401);
    const page = await unlock(app, short, PASSWORD);
    assertFormPage(page, 429);
    assert.ok(Number(page.headers['retry-after']) >= 1 && Number(page.headers['retry-after']) <= 900, String(page.headers['retry-after']));
    const json = await resolveWith(app, short, PASSWORD);
    assertError(json, 429, OPERATION);
    assert.ok(Number(json.headers['retry-after']) >= 1, String(json.headers['retry-after']));
    const wrongJson = await resolveWith(app, short, 'yet another wrong');
    assert.equal(wrongJson.statusCode, 429);
    assert.equal((await details(app, code, short)).Accesses, 0);
    // Per link: another link of the same client is not limited.
    assert.equal((await unlock(app, other, PASSWORD)).statusCode, 302);
    // Visiting the form is no guess.
    assertFormPage(await app.inject({ method: 'GET', url: `/${short}` }), 200);
  });

  test('wrong guesses on the JSON resolve count against the same limit; right guesses do not count', async (t) => {
    const { app, short } = await protectedApp(t, limited());
    for (let i = 0; i < 5; i++) assert.equal((await resolveWith(app, short, PASSWORD)).statusCode, 200);
    for (let i = 0; i < 3; i++) assert.equal((await resolveWith(app, short, `wrong ${i}`)).statusCode, 401);
    assert.equal((await unlock(app, short, PASSWORD)).statusCode, 429);
  });

  test('per client address: another address still gets in', async (t) => {
    const { app, short } = await protectedApp(t, { ...limited(), trustProxy: ['127.0.0.1'] });
    for (let i = 0; i < 3; i++) assert.equal((await unlock(app, short, `wrong ${i}`, { 'x-forwarded-for': '203.0.113.5' })).statusCode, 401);
    assert.equal((await unlock(app, short, PASSWORD, { 'x-forwarded-for': '203.0.113.5' })).statusCode, 429);
    assert.equal((await unlock(app, short, PASSWORD, { 'x-forwarded-for': '198.51.100.9' })).statusCode, 302);
  });

  test('RATE_LIMIT=off turns it off', async (t) => {
    const { app, short } = await protectedApp(t, { ...limited(), rateLimit: false });
    for (let i = 0; i < 6; i++) assert.equal((await unlock(app, short, `wrong ${i}`)).statusCode, 401);
    assert.equal((await unlock(app, short, PASSWORD)).statusCode, 302);
    assert.equal((await resolveWith(app, short, PASSWORD)).statusCode, 200);
  });
});

describe('the password never comes back out', () => {
  const leaks = (text: string) => text.includes(PASSWORD) || /scrypt|\$N=/.test(text);

  test('not in the list, the edit answer, the CSV export, nor the events and webhook deliveries; Protected is true', async (t) => {
    const { app } = await appFor(t, { webhookSecretKey: 'k'.repeat(40), webhookAllowPrivate: true }, { webhooks: { pollMs: 20, collectEveryMs: 50 } });
    const { code } = await newAccount(app);
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const hook = await app.inject({
      method: 'POST', url: '/v1/webhooks', headers: auth(code), payload: { url: receiver.url, events: 'link.created,link.updated,link.deleted,link.visited' },
    });
    assert.equal(hook.statusCode, 200, hook.body);
    const { host, port } = await listen(app);
    const stream = await openEventStream(`http://${host}:${port}`, auth(code));
    t.after(() => stream.close());

    const short = await createOk(app, code, { url: TARGET, password: PASSWORD });
    const listed = await app.inject({ method: 'GET', url: '/v1/links', headers: auth(code) });
    assert.equal((listed.json() as LinkDetails[])[0]!.Protected, true);
    assert.ok(!leaks(listed.body), listed.body);
    const edited = await app.inject({ method: 'PATCH', url: '/v1/link', headers: auth(code), payload: { short, title: 'Secret', password: `${PASSWORD}!` } });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal((edited.json() as LinkDetails).Protected, true);
    assert.ok(!leaks(edited.body) && !edited.body.includes(`${PASSWORD}!`), edited.body);
    const csv = await app.inject({ method: 'GET', url: '/v1/links', query: { format: 'csv' }, headers: auth(code) });
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.ok(csv.body.includes(short));
    assert.ok(!leaks(csv.body), csv.body);
    assert.equal((await unlock(app, short, `${PASSWORD}!`)).statusCode, 302);
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/link', query: { short }, headers: auth(code) });
    assert.equal(deleted.body, 'Success');

    const created = await stream.next((e) => e.event === 'link.created', 'link.created');
    const updated = await stream.next((e) => e.event === 'link.updated', 'link.updated');
    const removed = await stream.next((e) => e.event === 'link.deleted', 'link.deleted');
    await stream.next((e) => e.event === 'link.visited', 'link.visited');
    for (const event of [created, updated, removed]) {
      assert.equal(event.data.data.Protected, true, event.event);
      assert.ok(!leaks(JSON.stringify(event.data)), JSON.stringify(event.data));
    }
    await receiver.until((received) => ['link.created', 'link.updated', 'link.deleted', 'link.visited'].every((type) => received.some((r) => r.body.includes(`"type":"${type}"`))));
    for (const request of receiver.received) {
      assert.ok(!leaks(request.body) && !request.body.includes(`${PASSWORD}!`), request.body);
    }
  });

  test('an error answer never echoes a wrong password', async (t) => {
    const { app, short } = await protectedApp(t);
    const guess = 'my-guess-<b>bold</b>';
    const json = await resolveWith(app, short, guess);
    assert.equal(json.headers['content-type'], TEXT);
    assert.ok(!json.body.includes('my-guess'));
    const page = await unlock(app, short, guess);
    assert.ok(!page.body.includes('my-guess'));
  });
});
