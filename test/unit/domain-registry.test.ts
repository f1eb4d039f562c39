/**
 * The domain registry's refresh: a refresh asked for while another read is in flight must not
 * answer with that read, which may have begun before the caller's change.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDomainRegistry } from '../../src/domains/domain-registry.ts';
import type { DomainRecord } from '../../src/domains/domain-store.ts';

const domain = (host: string): DomainRecord => ({
  host, origin: `https://${host}`, notFoundUrl: null, rootUrl: null, expiredUrl: null, dateCreated: '2026-11-26T10:00:00.000Z',
});

test('a refresh asked for during a read in flight reads again after it, and sees a change made meanwhile', async () => {
  let table: DomainRecord[] = [];
  const pending: (() => void)[] = [];
  let reads = 0;
  let hold = false;
  const store = {
    listDomains(): Promise<DomainRecord[]> {
      reads++;
      const snapshot = [...table];
      if (!hold) return Promise.resolve(snapshot);
      return new Promise((resolve) => pending.push(() => resolve(snapshot)));
    },
  };
  const registry = await createDomainRegistry({ store, baseUrl: 'https://sho.rt', refreshMs: 60_000 });
  hold = true;
  const inFlight = registry.refresh();        // reads the table before the change
  table = [domain('go.example.com')];         // the change
  const afterChange = registry.refresh();     // must see it
  const alsoAfter = registry.refresh();       // shares the queued read
  assert.equal(pending.length, 1, 'one read at a time');
  hold = false;
  pending.shift()!();
  await inFlight;
  await afterChange;
  await alsoAfter;
  assert.equal(reads, 3, 'the first read, the one at start, and one more after the change');
  assert.deepEqual(registry.registeredHosts(), ['go.example.com']);
  assert.equal(registry.forHost('GO.example.com:443').host, 'go.example.com');
  assert.equal(registry.forHost('other.example').isDefault, true);
});
