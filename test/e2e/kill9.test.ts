/**
 * `kill -9` in the middle of load, three times on one database. What was answered must have
 * happened (contract §6.3, §6.4): acknowledged creates exist, acknowledged deletes stay
 * deleted, and each link's stored Accesses lies between the resolutions answered 200 and
 * those plus the resolutions cut off by the kill; no two answers of a link share a count, and
 * counts never go backwards across restarts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup, E2E_BASE_URL, startServer, tempDatabase, type ServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait-for.ts';

const CYCLES = 3;
// Work each cycle does before the kill (about a second's worth on a busy 2-core machine).
const LOAD = { creates: 100, deletes: 30, resolves: 300 };
const CREATE_WORKERS = 4;
const RESOLVE_WORKERS = 8;
const REQUEST_TIMEOUT_MS = 15_000;
// Accounts get a cap far above what a run can create.
const ENV = { DEFAULT_MAX_LINKS: '1000000' };

interface LinkJson {
  ShortCode: string;
  PointsTo: string;
  CreatedBy: number;
  Accesses: number;
}

/** What the clients know about one link they resolve. */
interface Tally {
  answered: number;
  /** Requests sent that got no answer: in flight when the server died. */
  unanswered: number;
  seen: Set<number>;
  max: number;
  duplicates: number[];
  /** Lowest count a resolution may answer now: above everything stored or answered before. */
  floor: number;
  /** Answers below `floor`: a count that went backwards. */
  backwards: number[];
}

const targetOf = (code: string) => `https://example.org/target/${code}`;

async function listLinks(server: ServerProcess, accessCode: string): Promise<Map<string, LinkJson>> {
  const response = await fetch(`${server.url}/v1/links`, {
    headers: { authorization: accessCode },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  assert.equal(response.status, 200);
  const links = (await response.json()) as LinkJson[];
  return new Map(links.map((link) => [link.ShortCode, link]));
}

test('acknowledged creates, deletes and counts survive kill -9 under load, three times over', { timeout: 600_000 }, async (t) => {
  const database = tempDatabase();
  t.after(async () => {
    await cleanup();
    database.remove();
  });

  let server = await startServer({ databasePath: database.path, env: ENV });
  const accountResponse = await fetch(`${server.url}/v1/new_account`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const account = (await accountResponse.json()) as { Uid: number; AccessCode: string };
  const auth = { authorization: `Bearer ${account.AccessCode}` };

  const createdAcked = new Set<string>();
  const deletedAcked = new Set<string>();
  // Deletes cut off by a kill: each may or may not have committed before it.
  const deletesCutOff = new Set<string>();
  const tallies = new Map<string, Tally>();
  const resolvable: string[] = [];
  const unexpected: string[] = [];

  function track(code: string): void {
    tallies.set(code, { answered: 0, unanswered: 0, seen: new Set(), max: 0, duplicates: [], floor: 1, backwards: [] });
    resolvable.push(code);
  }

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const base = server.url;
    let stopped = false;
    const cycleStats = { creates: 0, deletes: 0, resolves: 0, cutOff: 0 };

    // A few links to resolve from the first moment; later cycles also reuse older links.
    for (let i = 0; i < 4; i++) {
      const code = `seed${cycle}-${i}`;
      const response = await fetch(`${base}/v1/link?${new URLSearchParams({ url: targetOf(code), short: code })}`, {
        headers: auth,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      assert.equal(response.status, 200, await response.text());
      createdAcked.add(code);
      track(code);
    }
    const hot = resolvable.slice(-4);

    async function createWorker(worker: number): Promise<void> {
      for (let n = 0; !stopped; n++) {
        const code = `c${cycle}w${worker}n${n}`;
        let created = false;
        try {
          const response = await fetch(`${base}/v1/link?${new URLSearchParams({ url: targetOf(code), short: code })}`, {
            headers: auth,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          const body = await response.text();
          if (response.status === 200 && body === `${E2E_BASE_URL}/${code}`) {
            createdAcked.add(code);
            cycleStats.creates++;
            created = true;
          } else {
            unexpected.push(`create ${code}: ${response.status} ${body}`);
          }
        } catch (error) {
          // Cut off by the kill: it may or may not have happened.
          if (!stopped) unexpected.push(`create ${code} failed while the server was up: ${String(error)}`);
        }
        if (!created) continue;
        // Every third link is deleted again; the rest join the resolvable pool.
        if (n % 3 !== 2) {
          track(code);
          continue;
        }
        if (stopped) continue;
        try {
          const response = await fetch(`${base}/v1/link?short=${code}`, {
            method: 'DELETE',
            headers: auth,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          const body = await response.text();
          if (response.status === 200 && body === 'Success') {
            deletedAcked.add(code);
            cycleStats.deletes++;
          } else {
            unexpected.push(`delete ${code}: ${response.status} ${body}`);
          }
        } catch (error) {
          // Cut off by the kill.
          if (!stopped) unexpected.push(`delete ${code} failed while the server was up: ${String(error)}`);
          deletesCutOff.add(code);
        }
      }
    }

    async function resolveWorker(worker: number): Promise<void> {
      for (let n = 0; !stopped; n++) {
        // Half the resolutions go to a few hot links, so one batch counts a link many times.
        const pool = (n + worker) % 2 === 0 ? hot : resolvable;
        const code = pool[Math.floor(Math.random() * pool.length)]!;
        const tally = tallies.get(code)!;
        let response: Response;
        let body: string;
        try {
          response = await fetch(`${base}/v1/get/${code}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          body = await response.text();
        } catch (error) {
          if (!stopped) unexpected.push(`resolve ${code} failed while the server was up: ${String(error)}`);
          tally.unanswered++;
          cycleStats.cutOff++;
          continue;
        }
        const link = response.status === 200 ? (JSON.parse(body) as LinkJson) : undefined;
        if (link?.ShortCode !== code) {
          unexpected.push(`resolve ${code}: ${response.status} ${body}`);
          continue;
        }
        tally.answered++;
        cycleStats.resolves++;
        if (tally.seen.has(link.Accesses)) tally.duplicates.push(link.Accesses);
        if (link.Accesses < tally.floor) tally.backwards.push(link.Accesses);
        tally.seen.add(link.Accesses);
        tally.max = Math.max(tally.max, link.Accesses);
      }
    }

    const workers = [
      ...Array.from({ length: CREATE_WORKERS }, (_, i) => createWorker(i)),
      ...Array.from({ length: RESOLVE_WORKERS }, (_, i) => resolveWorker(i)),
    ];
    // Load until the cycle has done its share of work, then kill -9 with requests in flight.
    // The signal goes out first and the workers stop issuing requests in the same tick, so
    // everything after is a cut-off.
    await waitFor(
      () => cycleStats.creates >= LOAD.creates && cycleStats.deletes >= LOAD.deletes && cycleStats.resolves >= LOAD.resolves,
      () => `cycle ${cycle} to do ${JSON.stringify(LOAD)} (done: ${JSON.stringify(cycleStats)}; ${unexpected.length} unexpected)`,
      { timeoutMs: 30_000 },
    );
    const killed = server.kill9();
    stopped = true;
    const exit = await killed;
    assert.equal(exit.signal, 'SIGKILL');
    await Promise.all(workers);
    assert.deepEqual(unexpected, [], 'every request the server answered succeeded');
    assert.ok(cycleStats.creates > 0 && cycleStats.resolves > 0, `cycle ${cycle} did some work: ${JSON.stringify(cycleStats)}`);

    // Restart on the same file and compare with what the clients were told.
    server = await startServer({ databasePath: database.path, env: ENV });
    const stored = await listLinks(server, account.AccessCode);
    for (const code of createdAcked) {
      if (deletedAcked.has(code)) {
        assert.equal(stored.has(code), false, `acknowledged delete of ${code} was lost`);
        continue;
      }
      const link = stored.get(code);
      if (link === undefined && deletesCutOff.has(code)) {
        createdAcked.delete(code); // its delete committed just before the kill
        continue;
      }
      assert.ok(link !== undefined, `acknowledged create of ${code} was lost`);
      assert.equal(link.PointsTo, targetOf(code));
      assert.equal(link.CreatedBy, account.Uid);
    }
    for (const [code, link] of stored) {
      const tally = tallies.get(code);
      if (tally === undefined) {
        assert.equal(link.Accesses, 0, `${code} was never resolved`);
        continue;
      }
      assert.ok(link.Accesses >= tally.answered, `${code}: stored ${link.Accesses} < ${tally.answered} answered`);
      assert.ok(link.Accesses >= tally.max, `${code}: stored ${link.Accesses} < ${tally.max} answered before`);
      assert.ok(
        link.Accesses <= tally.answered + tally.unanswered,
        `${code}: stored ${link.Accesses} > ${tally.answered} answered + ${tally.unanswered} cut off`,
      );
      assert.deepEqual(tally.duplicates, [], `${code}: two resolutions answered the same count`);
      assert.deepEqual(tally.backwards, [], `${code}: a count went backwards`);
      tally.floor = link.Accesses + 1;
    }
    for (const code of tallies.keys()) assert.ok(stored.has(code), `resolved link ${code} is gone`);
    t.diagnostic(
      `cycle ${cycle}: ${cycleStats.creates} creates and ${cycleStats.deletes} deletes acknowledged, ` +
        `${cycleStats.resolves} resolutions answered, ${cycleStats.cutOff} cut off; ` +
        `checked ${createdAcked.size} acknowledged creates (${deletedAcked.size} deleted) and ${tallies.size} counts`,
    );
  }

  // The account itself survived too, and the last restart shuts down cleanly.
  const accountAfter = await fetch(`${server.url}/v1/get_account`, { headers: auth, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  assert.equal(accountAfter.status, 200);
  assert.equal(((await accountAfter.json()) as { Uid: number }).Uid, account.Uid);
  const stop = await server.stop('SIGTERM');
  assert.equal(stop.code, 0);
});
