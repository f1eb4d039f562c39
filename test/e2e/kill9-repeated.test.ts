/**
 * `kill -9` in the middle of mixed load, twelve times on one SQLite database. The load mixes
 * account creation, link creation (chosen and generated codes), deletion, resolution (JSON and
 * redirect) and listing; the kill comes at a random moment with requests in flight.
 *
 * After each kill, before the next start, the file is opened directly with node:sqlite (as
 * any SQLite client would find it) and checked: `PRAGMA integrity_check` is ok, foreign keys
 * hold, every acknowledged account, create and delete is there, each account's link counter
 * equals the links it holds (and never exceeds its cap), and every link's stored Accesses lies
 * between the resolutions answered and those plus the ones cut off by kills (contract §6.3,
 * §6.4). Answered Accesses of a link are never repeated and never go backwards.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { cleanup, E2E_BASE_URL, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const CYCLES = 12;
const REQUEST_TIMEOUT_MS = 15_000;
const ENV = { DEFAULT_MAX_LINKS: '1000000' };

interface Tally {
  /** Resolutions answered (200 or 302), over all cycles. */
  answered: number;
  /** Resolutions sent that got no answer: cut off by a kill. */
  unanswered: number;
  /** Accesses answered by GET /v1/get, to catch a repeated or backward count. */
  readonly seen: Set<number>;
  /** Lowest count an answer may carry now: above everything stored at the last check. */
  floor: number;
  readonly problems: string[];
}

interface Account {
  readonly uid: number;
  readonly code: string;
}

const targetOf = (code: string) => `https://example.org/k9/${code}`;
const sha256 = (text: string) => createHash('sha256').update(text.toLowerCase()).digest('hex');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: string; location: string | null }> {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  return { status: response.status, body: await response.text(), location: response.headers.get('location') };
}

test('kill -9 under mixed load, twelve times on one database: nothing acknowledged is lost, the file stays sound', { timeout: 600_000 }, async (t) => {
  const database = tempDatabase();
  t.after(async () => {
    await cleanup();
    database.remove();
  });

  const accounts = new Map<number, Account>();
  const owners: Account[] = [];
  /** Acknowledged creates: code → owner uid. */
  const created = new Map<string, number>();
  const deleted = new Set<string>();
  // Deletes sent but not answered when the kill came: each may or may not have committed.
  const deleting = new Set<string>();
  const tallies = new Map<string, Tally>();
  const resolvable: string[] = [];
  const unexpected: string[] = [];
  const totals = { accounts: 0, creates: 0, deletes: 0, resolutions: 0, lists: 0, cutOff: 0, killAfterRequests: [] as number[] };
  const answeredSoFar = () => totals.accounts + totals.creates + totals.deletes + totals.resolutions + totals.lists;

  function track(code: string): void {
    tallies.set(code, { answered: 0, unanswered: 0, seen: new Set(), floor: 1, problems: [] });
    resolvable.push(code);
  }

  let server: ServerProcess = await startServer({ databasePath: database.path, env: ENV });
  for (let i = 0; i < 3; i++) {
    const { body } = await call(`${server.url}/v1/new_account`, { method: 'POST' });
    const account = JSON.parse(body) as { Uid: number; AccessCode: string };
    const owner = { uid: account.Uid, code: account.AccessCode };
    accounts.set(owner.uid, owner);
    owners.push(owner);
  }

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const base = server.url;
    let stopped = false;
    // A few links to resolve from the first moment of the cycle.
    for (let i = 0; i < 3; i++) {
      const code = `seed${cycle}-${i}`;
      const owner = owners[i % owners.length]!;
      const reply = await call(`${base}/v1/link?${new URLSearchParams({ url: targetOf(code), short: code })}`, { headers: { authorization: owner.code } });
      assert.equal(reply.status, 200, reply.body);
      created.set(code, owner.uid);
      track(code);
    }
    const hot = resolvable.slice(-3);

    /** Runs `step` until the kill; a failure while the server was up is unexpected. */
    async function loop(name: string, step: (n: number) => Promise<void>): Promise<void> {
      for (let n = 0; !stopped; n++) {
        try {
          await step(n);
        } catch (error) {
          if (!stopped) unexpected.push(`${name} failed while the server was up: ${String(error)}`);
        }
      }
    }

    const accountWorker = () =>
      loop('new_account', async () => {
        const reply = await call(`${base}/v1/new_account`, { method: 'POST' });
        if (reply.status !== 200) return void unexpected.push(`new_account: ${reply.status} ${reply.body}`);
        const body = JSON.parse(reply.body) as { Uid: number; AccessCode: string };
        accounts.set(body.Uid, { uid: body.Uid, code: body.AccessCode });
        totals.accounts++;
        // Pacing, not waiting for anything: accounts are a small part of the mix.
        await pause(20);
      });

    const createWorker = (worker: number) =>
      loop('create', async (n) => {
        const owner = owners[(worker + n) % owners.length]!;
        const chosen = n % 4 !== 3;
        const code = chosen ? `c${cycle}w${worker}n${n}` : undefined;
        const params = new URLSearchParams({ url: targetOf(code ?? `generated-${cycle}-${worker}-${n}`) });
        if (code !== undefined) params.set('short', code);
        const reply = await call(`${base}/v1/link?${params}`, { headers: { authorization: `Bearer ${owner.code}` } });
        if (reply.status !== 200 || !reply.body.startsWith(`${E2E_BASE_URL}/`)) {
          return void unexpected.push(`create ${code}: ${reply.status} ${reply.body}`);
        }
        const made = reply.body.slice(E2E_BASE_URL.length + 1);
        if (code !== undefined) assert.equal(made, code);
        created.set(made, owner.uid);
        totals.creates++;
        if (code === undefined) return;
        if (n % 3 !== 1) return track(made);
        // Every third chosen link is deleted again at once.
        if (stopped) return;
        deleting.add(made);
        const gone = await call(`${base}/v1/link?short=${made}`, { method: 'DELETE', headers: { authorization: owner.code } });
        if (gone.status !== 200 || gone.body !== 'Success') return void unexpected.push(`delete ${made}: ${gone.status} ${gone.body}`);
        deleting.delete(made);
        deleted.add(made);
        totals.deletes++;
      });

    const resolveWorker = (worker: number) =>
      loop('resolve', async (n) => {
        const pool = (n + worker) % 2 === 0 ? hot : resolvable;
        const code = pool[Math.floor(Math.random() * pool.length)]!;
        const tally = tallies.get(code)!;
        const viaRedirect = n % 3 === 0;
        let reply: Awaited<ReturnType<typeof call>>;
        try {
          reply = await call(viaRedirect ? `${base}/${code}` : `${base}/v1/get/${code}`);
        } catch (error) {
          tally.unanswered++;
          totals.cutOff++;
          throw error;
        }
        if (viaRedirect) {
          if (reply.status !== 302 || reply.location !== targetOf(code)) return void unexpected.push(`redirect ${code}: ${reply.status}`);
        } else {
          const link = reply.status === 200 ? (JSON.parse(reply.body) as { ShortCode: string; Accesses: number }) : undefined;
          if (link?.ShortCode !== code) return void unexpected.push(`resolve ${code}: ${reply.status} ${reply.body}`);
          if (tally.seen.has(link.Accesses)) tally.problems.push(`count ${link.Accesses} answered twice`);
          if (link.Accesses < tally.floor) tally.problems.push(`count ${link.Accesses} below the stored ${tally.floor - 1}`);
          tally.seen.add(link.Accesses);
        }
        tally.answered++;
        totals.resolutions++;
      });

    const listWorker = () =>
      loop('list', async (n) => {
        const owner = owners[n % owners.length]!;
        const reply = await call(`${base}/v1/links`, { headers: { authorization: owner.code } });
        if (reply.status !== 200 || !reply.body.startsWith('[')) return void unexpected.push(`list: ${reply.status}`);
        totals.lists++;
      });

    const answeredBefore = answeredSoFar();
    const workers = [
      accountWorker(),
      ...[0, 1, 2].map(createWorker),
      ...[0, 1, 2, 3, 4, 5].map(resolveWorker),
      listWorker(),
    ];
    // The kill comes at a random point of the load, counted in answered requests rather than
    // milliseconds, so that on a slow machine it still comes with the load well under way.
    const killAfter = 100 + Math.floor(Math.random() * 300);
    totals.killAfterRequests.push(killAfter);
    await waitFor(
      () => answeredSoFar() - answeredBefore >= killAfter,
      () => `cycle ${cycle} to have ${killAfter} requests answered (${answeredSoFar() - answeredBefore} so far; ${unexpected.length} unexpected)`,
      { timeoutMs: 30_000, intervalMs: 1 },
    );
    const killed = server.kill9();
    stopped = true;
    assert.equal((await killed).signal, 'SIGKILL');
    await Promise.all(workers);
    assert.deepEqual(unexpected, [], `cycle ${cycle}: every request the server answered succeeded`);

    // The file as any SQLite client finds it after the crash.
    const db = new DatabaseSync(database.path);
    try {
      assert.deepEqual(db.prepare('PRAGMA integrity_check').all().map((row) => ({ ...row })), [{ integrity_check: 'ok' }], `cycle ${cycle}: integrity_check`);
      assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), [], `cycle ${cycle}: foreign keys`);

      const storedAccounts = new Map(
        (db.prepare('SELECT uid, code_hash AS hash, link_count AS held, max_links AS cap FROM accounts').all() as { uid: number; hash: string; held: number; cap: number }[])
          .map((row) => [row.uid, row]),
      );
      for (const account of accounts.values()) {
        assert.equal(storedAccounts.get(account.uid)?.hash, sha256(account.code), `cycle ${cycle}: acknowledged account ${account.uid} was lost`);
      }
      const links = new Map(
        (db.prepare('SELECT short_code AS code, created_by AS owner, points_to AS target, accesses FROM links').all() as { code: string; owner: number; target: string; accesses: number }[])
          .map((row) => [row.code, row]),
      );
      const held = new Map<number, number>();
      for (const link of links.values()) held.set(link.owner, (held.get(link.owner) ?? 0) + 1);
      for (const row of storedAccounts.values()) {
        assert.equal(row.held, held.get(row.uid) ?? 0, `cycle ${cycle}: account ${row.uid}'s link counter matches its links`);
        assert.ok(row.held <= row.cap);
      }
      for (const [code, owner] of created) {
        if (deleted.has(code)) {
          assert.equal(links.has(code), false, `cycle ${cycle}: acknowledged delete of ${code} was lost`);
          continue;
        }
        const link = links.get(code);
        if (link === undefined && deleting.has(code)) {
          // Its delete was cut off by the kill after committing: gone for good, legitimately.
          created.delete(code);
          continue;
        }
        assert.ok(link !== undefined, `cycle ${cycle}: acknowledged create of ${code} was lost`);
        assert.equal(link.owner, owner);
      }
      let answered = 0;
      let stored = 0;
      for (const [code, tally] of tallies) {
        const link = links.get(code);
        assert.ok(link !== undefined, `cycle ${cycle}: resolved link ${code} is gone`);
        assert.deepEqual(tally.problems, [], `cycle ${cycle}: ${code}`);
        assert.ok(link.accesses >= tally.answered, `cycle ${cycle}: ${code} stores ${link.accesses} < ${tally.answered} answered`);
        assert.ok(
          link.accesses <= tally.answered + tally.unanswered,
          `cycle ${cycle}: ${code} stores ${link.accesses} > ${tally.answered} answered + ${tally.unanswered} cut off`,
        );
        tally.floor = link.accesses + 1;
        answered += tally.answered;
        stored += link.accesses;
      }
      assert.ok(stored >= answered && stored <= answered + totals.cutOff, `cycle ${cycle}: ${stored} stored, ${answered} answered`);
    } finally {
      db.close();
    }

    server = await startServer({ databasePath: database.path, env: ENV });
  }

  t.diagnostic(
    `${CYCLES} kills after ${totals.killAfterRequests.join(', ')} requests answered; acknowledged: ${totals.accounts} accounts, ` +
      `${totals.creates} creates, ${totals.deletes} deletes, ${totals.resolutions} resolutions, ${totals.lists} lists; ` +
      `${totals.cutOff} resolutions cut off`,
  );
  // The service still works on the file, and stops cleanly.
  const owner = owners[0]!;
  const list = await call(`${server.url}/v1/links`, { headers: { authorization: owner.code } });
  assert.equal(list.status, 200);
  const stop = await server.stop('SIGTERM');
  assert.equal(stop.code, 0);
});
