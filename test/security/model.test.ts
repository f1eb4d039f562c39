/**
 * Model-based test: random sequences of account creation, link creation (generated and
 * chosen codes, valid and invalid, with titles, tags and visit limits), edits (target,
 * title, tags, visit limit, CONTRACT §7.1), resolution (410 at the visit limit), redirect,
 * HEAD, deletion, listing and
 * requests with a wrong access code, over several accounts, run against the real app and
 * checked step by step against an in-memory model of the contract: status, content type and
 * body of every answer, Accesses counts, list order, the link cap and ownership.
 *
 * Runs on SQLite (a fresh database per sequence) and, when TEST_DATABASE_URL is set, on
 * PostgreSQL (one database for the file; each sequence uses its own accounts and a prefix
 * for its chosen codes, so sequences cannot see each other).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import fc, { type AsyncCommand } from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { openPostgresStore } from '../../src/store/postgres/store.ts';
import { openSqliteStore } from '../../src/store/sqlite/store.ts';
import type { Store } from '../../src/store/store.ts';
import { TEST_BASE_URL, tempDir, testConfig } from '../helpers/app.ts';
import { createPostgresDatabase, postgresGate } from '../helpers/services.ts';
import type { Account } from '../../src/http/schemas.ts';

const MAX_LINKS = 3;
const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

// ---------------------------------------------------------------------------------- the model

interface ModelAccount {
  readonly code: string;
  readonly uid: number;
}

interface ModelLink {
  pointsTo: string;
  readonly owner: number;
  accesses: number;
  title: string | null;
  tags: string[];
  maxVisits: number | null;
}

/** Visit limits small enough to be reached within a sequence; '' on edit clears. */
const LIMITS = ['1', '2', '1', ''] as const;
const TITLES = ['Spring sale', '', 'x'.repeat(201)] as const;
const TAG_LISTS = ['Promo,news', 'a_b', '', 'bad tag'] as const;

interface Model {
  readonly accounts: ModelAccount[];
  /** Live links in creation order (Map keeps insertion order; a re-created code goes last). */
  readonly links: Map<string, ModelLink>;
  /** Chosen codes of this sequence are `${prefix}${name}`. */
  readonly prefix: string;
  lastUid: number;
}

interface Real {
  readonly app: FastifyInstance;
}

/** Targets, with whether the contract accepts them (BASE_URL is http://sl.test). */
const TARGETS: readonly (readonly [string, boolean])[] = [
  ['https://example.org/a', true],
  ['http://example.com/b?q=1&r=2', true],
  ['https://münchen.de/straße', true],
  ['HTTPS://EXAMPLE.NET/Path#frag', true],
  ['http:/\\host.example/x', true],
  ['javascript:alert(1)', false],
  ['ftp://files.example/', false],
  ['https://user:pw@example.org/', false],
  ['http://sl.test/loop', false],
  ['https://exa mple.com/', false],
  ['', false],
];

/** Chosen codes: names made valid by the sequence's prefix, or invalid whatever the prefix. */
const CHOSEN: readonly (readonly [string, boolean])[] = [
  ['alpha', true],
  ['Alpha', true],
  ['gamma_2.x~', true],
  ['d'.repeat(300), true],
  ['ab', false],
  ['a/b/c', false],
  ['has space', false],
  ['ünïcode', false],
];
const RESERVED = 'admin';

function chosenCode(model: Model, index: number): { code: string; valid: boolean } {
  const [name, valid] = CHOSEN[index % CHOSEN.length]!;
  return valid ? { code: `${model.prefix}${name}`, valid } : { code: name, valid };
}

function linksOf(model: Model, uid: number): [string, ModelLink][] {
  return [...model.links].filter(([, link]) => link.owner === uid);
}

/** A shortcode to act on: a live one most of the time, else a chosen or unknown one. */
function pickCode(model: Model, pick: number, mode: number): string {
  const live = [...model.links.keys()];
  if (mode < 6 && live.length > 0) return live[pick % live.length]!;
  if (mode < 8) return chosenCode(model, pick).code;
  return `${model.prefix}never-${pick}`;
}

// ------------------------------------------------------------------------- response checks

/** Outcomes seen, per operation and status, to show what the random sequences covered. */
const seen = new Map<string, number>();
function note(what: string): void {
  seen.set(what, (seen.get(what) ?? 0) + 1);
}

function expectError(response: LightMyRequestResponse, status: number, operation: string, context: string): void {
  note(`${operation} ${status}`);
  assert.equal(response.statusCode, status, `${context}: expected ${status}, got ${response.statusCode}: ${response.body}`);
  assert.equal(response.headers['content-type'], TEXT, context);
  if (response.body !== '') {
    assert.match(response.body, new RegExp(`^Unable to ${operation}: [^\\r\\n]+$`), context);
  }
}

function auth(account: ModelAccount) {
  return { authorization: `Bearer ${account.code}` };
}

// -------------------------------------------------------------------------------- commands

type Command = AsyncCommand<Model, Real>;

/** A command: a name for shrunk counterexamples, a precondition and a step. */
function command(
  name: string,
  run: (model: Model, real: Real) => Promise<void>,
  check: (model: Readonly<Model>) => boolean = () => true,
): Command {
  return { check, run, toString: () => name };
}

const needsAccount = (model: Readonly<Model>) => model.accounts.length > 0;

function newAccount(): Command {
  return command('NewAccount', async (model, real) => {
    const response = await real.app.inject({ method: 'POST', url: '/v1/new_account' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as Account;
    assert.deepEqual(Object.keys(body), ['Uid', 'AccessCode', 'DateCreated', 'MaxLinks']);
    assert.ok(body.Uid > model.lastUid, `Uid ${body.Uid} increases past ${model.lastUid}`);
    assert.equal(body.MaxLinks, MAX_LINKS);
    assert.match(body.AccessCode, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    model.lastUid = body.Uid;
    model.accounts.push({ code: body.AccessCode, uid: body.Uid });
  });
}

/** `chosen`: an index into CHOSEN, `reserved`, or undefined to have the code generated. */
function createLink(who: number, target: number, chosenIndex: number | 'reserved' | undefined, viaJson: boolean, limit = LIMITS.length - 1): Command {
  const name = `CreateLink(who=${who}, target=${target}, chosen=${String(chosenIndex)}, json=${viaJson}, limit=${limit})`;
  return command(name, async (model, real) => {
    const account = model.accounts[who % model.accounts.length]!;
    const [url, urlValid] = TARGETS[target % TARGETS.length]!;
    const chosen = chosenIndex === undefined ? undefined
      : chosenIndex === 'reserved' ? { code: RESERVED, valid: false }
      : chosenCode(model, chosenIndex);
    const params: Record<string, string> = { url };
    if (chosen !== undefined) params.short = chosen.code;
    const maxVisits = LIMITS[limit % LIMITS.length]!;
    if (maxVisits !== '') params.max_visits = maxVisits;
    const response = viaJson
      ? await real.app.inject({ method: 'POST', url: '/v1/link', headers: { ...auth(account), 'content-type': 'application/json' }, payload: JSON.stringify(params) })
      : await real.app.inject({ method: 'GET', url: '/v1/link', query: { ...params, auth: account.code } });
    // Contract order: parameters (400), then the cap (403), then uniqueness (409).
    if (!urlValid || (chosen !== undefined && !chosen.valid)) return expectError(response, 400, 'create link', name);
    if (linksOf(model, account.uid).length >= MAX_LINKS) return expectError(response, 403, 'create link', name);
    if (chosen !== undefined && model.links.has(chosen.code)) return expectError(response, 409, 'create link', name);
    assert.equal(response.statusCode, 200, `${name}: ${response.body}`);
    assert.equal(response.headers['content-type'], TEXT);
    assert.ok(response.body.startsWith(`${TEST_BASE_URL}/`), response.body);
    const code = response.body.slice(TEST_BASE_URL.length + 1);
    if (chosen !== undefined) {
      assert.equal(code, chosen.code);
    } else {
      assert.match(code, /^[A-Za-z0-9]{6}$/);
      assert.equal(model.links.has(code), false, 'a generated code is never a live one');
    }
    model.links.set(code, { pointsTo: url, owner: account.uid, accesses: 0, title: null, tags: [], maxVisits: maxVisits === '' ? null : Number(maxVisits) });
    note(`create link 200 (${chosen === undefined ? 'generated' : 'chosen'})`);
  }, needsAccount);
}

type How = 'get' | 'redirect' | 'head-get' | 'head-redirect';

function resolve(pick: number, mode: number, how: How): Command {
  const name = `Resolve(pick=${pick}, mode=${mode}, ${how})`;
  return command(name, async (model, real) => {
    const code = pickCode(model, pick, mode);
    const link = model.links.get(code);
    const redirect = how === 'redirect' || how === 'head-redirect';
    const head = how.startsWith('head');
    const response = await real.app.inject({ method: head ? 'HEAD' : 'GET', url: redirect ? `/${encodeURIComponent(code)}` : `/v1/get/${encodeURIComponent(code)}` });
    const context = `${name} on ${code.slice(0, 40)}`;
    if (link === undefined) {
      if (redirect) {
        assert.equal(response.statusCode, 404, context);
        assert.equal(response.headers['content-type'], HTML, context);
      } else {
        expectError(response, 404, 'resolve link', context);
      }
      return;
    }
    if (link.maxVisits !== null && link.accesses >= link.maxVisits) {
      note(`resolve ${how} 410`);
      if (!head) note('resolve 410');
      assert.equal(response.statusCode, 410, `${context}: ${response.body}`);
      if (head) return;
      if (redirect) {
        assert.equal(response.headers['content-type'], HTML, context);
      } else {
        expectError(response, 410, 'resolve link', context);
        assert.equal(response.body, 'Unable to resolve link: the link has reached its visit limit');
      }
      return;
    }
    if (!head) link.accesses++;
    note(`resolve ${how} hit`);
    if (redirect) {
      assert.equal(response.statusCode, 302, `${context}: ${response.body}`);
      assert.equal(response.headers.location, new URL(link.pointsTo).href);
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      return;
    }
    assert.equal(response.statusCode, 200, `${context}: ${response.body}`);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    if (head) return;
    const body = response.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses']);
    assert.deepEqual(body, { ShortCode: code, PointsTo: link.pointsTo, CreatedBy: link.owner, Accesses: link.accesses }, context);
  });
}

function deleteLink(who: number, pick: number, mode: number): Command {
  const name = `DeleteLink(who=${who}, pick=${pick}, mode=${mode})`;
  return command(name, async (model, real) => {
    const account = model.accounts[who % model.accounts.length]!;
    const code = pickCode(model, pick, mode);
    const link = model.links.get(code);
    const response = await real.app.inject({ method: 'DELETE', url: '/v1/link', query: { short: code }, headers: auth(account) });
    const context = `${name} on ${code.slice(0, 40)}`;
    if (link === undefined) return expectError(response, 404, 'delete link', context);
    if (link.owner !== account.uid) return expectError(response, 403, 'delete link', context);
    assert.equal(response.statusCode, 200, `${context}: ${response.body}`);
    assert.equal(response.body, 'Success');
    model.links.delete(code);
    note('delete link 200');
  }, needsAccount);
}

type Edit = 'url' | 'title' | 'tags' | 'limit' | 'none' | 'empty-url';

/** PATCH /v1/link: one field (or none, or an empty url) of a live, chosen or unknown link. */
function editLink(who: number, pick: number, mode: number, edit: Edit, value: number): Command {
  const name = `EditLink(who=${who}, pick=${pick}, mode=${mode}, ${edit}, value=${value})`;
  return command(name, async (model, real) => {
    const account = model.accounts[who % model.accounts.length]!;
    const code = pickCode(model, pick, mode);
    const link = model.links.get(code);
    const params: Record<string, string> = { short: code };
    let valid = true;
    let apply: (target: ModelLink) => void = () => {};
    if (edit === 'url') {
      const [url, ok] = TARGETS[value % TARGETS.length]!;
      params.url = url;
      valid = ok && url !== '';
      apply = (target) => void (target.pointsTo = url);
    } else if (edit === 'title') {
      const title = TITLES[value % TITLES.length]!;
      params.title = title;
      valid = title.length <= 200;
      apply = (target) => void (target.title = title === '' ? null : title);
    } else if (edit === 'tags') {
      const tags = TAG_LISTS[value % TAG_LISTS.length]!;
      params.tags = tags;
      valid = !tags.includes(' ');
      apply = (target) => void (target.tags = tags === '' ? [] : tags.toLowerCase().split(','));
    } else if (edit === 'limit') {
      const limit = LIMITS[value % LIMITS.length]!;
      params.max_visits = limit;
      apply = (target) => void (target.maxVisits = limit === '' ? null : Number(limit));
    } else if (edit === 'empty-url') {
      params.url = '';
      valid = false;
    } else {
      valid = false;
    }
    const response = await real.app.inject({ method: 'PATCH', url: '/v1/link', query: params, headers: auth(account) });
    const context = `${name} on ${code.slice(0, 40)}`;
    // Contract order for §7: parameters (400), then unknown (404), then another's link (403).
    if (!valid) return expectError(response, 400, 'update link', context);
    if (link === undefined) return expectError(response, 404, 'update link', context);
    if (link.owner !== account.uid) return expectError(response, 403, 'update link', context);
    assert.equal(response.statusCode, 200, `${context}: ${response.body}`);
    apply(link);
    assert.deepEqual(detailsWithoutDate(response.json()), expectedDetails(code, link), context);
    note('update link 200');
  }, needsAccount);
}

function expectedDetails(code: string, link: ModelLink) {
  return {
    ShortCode: code, PointsTo: link.pointsTo, CreatedBy: link.owner, Accesses: link.accesses,
    Title: link.title, Tags: link.tags, ExpiresAt: null, MaxVisits: link.maxVisits, Domain: null, ForwardQuery: false, Protected: false, Rules: [],
  };
}

/** LinkDetails with DateCreated checked for form and then left out (the model has no clock). */
function detailsWithoutDate(body: Record<string, unknown>): Record<string, unknown> {
  assert.deepEqual(Object.keys(body), ['ShortCode', 'PointsTo', 'CreatedBy', 'Accesses', 'DateCreated', 'Title', 'Tags', 'ExpiresAt', 'MaxVisits', 'Domain', 'ForwardQuery', 'Protected', 'Rules']);
  const { DateCreated: created, ...rest } = body;
  assert.equal(new Date(created as string).toISOString(), created);
  return rest;
}

function listLinks(who: number): Command {
  return command(`ListLinks(who=${who})`, async (model, real) => {
    await assertListed(real.app, model, model.accounts[who % model.accounts.length]!);
  }, needsAccount);
}

function getAccount(who: number): Command {
  return command(`GetAccount(who=${who})`, async (model, real) => {
    const account = model.accounts[who % model.accounts.length]!;
    const response = await real.app.inject({ method: 'GET', url: '/v1/get_account', query: { auth: account.code.toUpperCase() } });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as Account;
    assert.equal(body.Uid, account.uid);
    assert.equal(body.AccessCode, account.code);
    assert.equal(body.MaxLinks, MAX_LINKS);
  }, needsAccount);
}

/** A protected call with a code no account has: 401, and nothing changes. */
function wrongCode(what: 'list' | 'create' | 'delete', pick: number): Command {
  const name = `WrongCode(${what}, pick=${pick})`;
  return command(name, async (model, real) => {
    const headers = { authorization: randomUUID() };
    const code = pickCode(model, pick, 0);
    const response =
      what === 'list' ? await real.app.inject({ method: 'GET', url: '/v1/links', headers })
      : what === 'create' ? await real.app.inject({ method: 'GET', url: '/v1/link', query: { url: 'https://example.org/x', short: code }, headers })
      : await real.app.inject({ method: 'DELETE', url: '/v1/link', query: { short: code }, headers });
    const operation = { list: 'list links', create: 'create link', delete: 'delete link' }[what];
    expectError(response, 401, operation, name);
    assert.equal(response.headers['www-authenticate'], 'Bearer realm="shortlink"');
  });
}

async function assertListed(app: FastifyInstance, model: Model, account: ModelAccount): Promise<void> {
  const response = await app.inject({ method: 'GET', url: '/v1/links', headers: auth(account) });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], JSON_TYPE);
  const expected = linksOf(model, account.uid).map(([code, link]) => expectedDetails(code, link));
  assert.deepEqual((response.json() as Record<string, unknown>[]).map(detailsWithoutDate), expected, `links of account ${account.uid}, oldest first`);
}

// Mostly the first two accounts and valid parameters, so that caps and taken codes come up.
const who = fc.oneof({ weight: 3, arbitrary: fc.nat(1) }, { weight: 1, arbitrary: fc.nat(7) });
const indexWhere = <T>(list: readonly (readonly [T, boolean])[], valid: boolean) =>
  list.flatMap(([, ok], index) => (ok === valid ? [index] : []));
const target = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...indexWhere(TARGETS, true)) },
  { weight: 1, arbitrary: fc.constantFrom(...indexWhere(TARGETS, false)) },
);
const chosen = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...indexWhere(CHOSEN, true)) },
  { weight: 1, arbitrary: fc.constantFrom(...indexWhere(CHOSEN, false)) },
  { weight: 1, arbitrary: fc.constant('reserved' as const) },
);
const pick = fc.nat(1000);
const mode = fc.nat(9);
/**
 * The same link resolved three times in a row: with limits of 1 and 2 visits in play, this is
 * what makes a sequence reach a link's limit (and its 410) often enough to rely on.
 */
function resolveThrice(pick: number, mode: number, how: How): Command {
  const once = resolve(pick, mode, how);
  return command(`Thrice(${String(once)})`, async (model, real) => {
    for (let i = 0; i < 3; i++) await once.run(model, real);
  });
}

/**
 * Four creations in a row by one account: with a cap of MAX_LINKS (3), this is what makes a
 * sequence reach the cap's 403 often enough to rely on, whatever else it did before.
 */
function createFour(who: number, target: number, viaJson: boolean): Command {
  const once = createLink(who, target, undefined, viaJson);
  return command(`Four(${String(once)})`, async (model, real) => {
    for (let i = 0; i < 4; i++) await once.run(model, real);
  });
}

const commands = fc.commands(
  [
    fc.constant(newAccount()),
    // Creation twice over: caps and taken codes need links to pile up.
    fc.tuple(who, target, chosen, fc.boolean()).map(([w, t, c, j]) => createLink(w, t, c, j)),
    fc.tuple(who, target, chosen, fc.boolean()).map(([w, t, c, j]) => createLink(w, t, c, j)),
    fc.tuple(who, target, fc.boolean(), fc.nat(3)).map(([w, t, j, l]) => createLink(w, t, undefined, j, l)),
    fc.tuple(who, target, fc.boolean()).map(([w, t, j]) => createFour(w, t, j)),
    fc.tuple(who, pick, mode, fc.constantFrom<Edit>('url', 'title', 'tags', 'limit', 'limit', 'none', 'empty-url'), fc.nat(20))
      .map(([w, p, m, e, v]) => editLink(w, p, m, e, v)),
    fc.tuple(pick, mode, fc.constantFrom<How>('get', 'redirect', 'head-get', 'head-redirect')).map(([p, m, h]) => resolve(p, m, h)),
    fc.tuple(pick, mode, fc.constantFrom<How>('get', 'redirect')).map(([p, m, h]) => resolve(p, m, h)),
    fc.tuple(pick, mode, fc.constantFrom<How>('get', 'redirect')).map(([p, m, h]) => resolveThrice(p, m, h)),
    fc.tuple(who, pick, mode).map(([w, p, m]) => deleteLink(w, p, m)),
    who.map((w) => listLinks(w)),
    who.map((w) => getAccount(w)),
    fc.tuple(fc.constantFrom('list' as const, 'create' as const, 'delete' as const), pick).map(([w, p]) => wrongCode(w, p)),
  ],
  { maxCommands: 60, size: 'max' },
);

// ----------------------------------------------------------------------------------- running

interface Backend {
  /** A fresh app; `close()` releases it (and its database, for SQLite). */
  open(): Promise<{ app: FastifyInstance; close(): Promise<void> }>;
}

const config = testConfig({ defaultMaxLinks: MAX_LINKS });

async function appOn(store: Store): Promise<FastifyInstance> {
  const app = await buildApp({ config, store });
  await app.ready();
  return app;
}

let sequence = 0;

/** Runs `numRuns` random sequences, then checks that they reached every interesting outcome. */
async function runModel(t: TestContext, backend: Backend, numRuns: number): Promise<void> {
  seen.clear();
  await fc.assert(
    fc.asyncProperty(commands, async (cmds) => {
      const { app, close } = await backend.open();
      const model: Model = { accounts: [], links: new Map(), prefix: `s${++sequence}-${process.pid}-`, lastUid: 0 };
      try {
        // Two accounts to start with; sequences add more.
        for (let i = 0; i < 2; i++) await newAccount().run(model, { app });
        await fc.asyncModelRun(() => ({ model, real: { app } }), cmds);
        // Whatever the sequence did, every account's list ends equal to the model.
        for (const account of model.accounts) await assertListed(app, model, account);
      } finally {
        await close();
      }
    }),
    { numRuns },
  );
  t.diagnostic([...seen].sort().map(([what, n]) => `${what}: ${n}`).join('; '));
  for (const outcome of [
    'create link 200 (generated)', 'create link 200 (chosen)', 'create link 400', 'create link 403', 'create link 409',
    'resolve get hit', 'resolve redirect hit', 'resolve link 404', 'delete link 200', 'delete link 403', 'delete link 404',
    'list links 401', 'resolve 410', 'update link 200', 'update link 400', 'update link 403', 'update link 404',
  ]) {
    assert.ok((seen.get(outcome) ?? 0) > 0, `the sequences reached "${outcome}"`);
  }
}

describe('the app against a model of the contract', () => {
  test('SQLite: random sequences over several accounts agree with the model at every step', { timeout: 300_000 }, async (t) => {
    await runModel(
      t,
      {
        async open() {
          const dir = tempDir('shortlink-model-');
          const store = await openSqliteStore({ path: join(dir.path, 'model.db'), checkpointer: false });
          const app = await appOn(store);
          return {
            app,
            async close() {
              await app.close();
              await store.close();
              dir.remove();
            },
          };
        },
      },
      60,
    );
  });

  const gate = postgresGate();
  describe('PostgreSQL', { skip: gate.skip }, () => {
    let database: { url: string; drop(): Promise<void> } | undefined;
    let store: Store | undefined;
    before(async () => {
      database = await createPostgresDatabase(gate.value!);
      store = await openPostgresStore({ url: database.url, max: 4 });
    });
    after(async () => {
      await store?.close();
      await database?.drop();
    });

    test('random sequences over several accounts agree with the model at every step', { timeout: 300_000 }, async (t) => {
      await runModel(
        t,
        {
          async open() {
            const app = await appOn(store!);
            return { app, close: () => app.close() };
          },
        },
        60,
      );
    });
  });
});
