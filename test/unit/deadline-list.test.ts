/**
 * The list of calls sharing one timeout (src/deadline-list.ts): oldest first, O(1) removal
 * anywhere, and an entry that has left points at nothing, so a dead entry promoted to V8's
 * old generation cannot keep younger calls alive through scavenges.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeadlineList, type DeadlineEntry } from '../../src/deadline-list.ts';

/** Everything an entry holds that is an object (its links to other entries and its call). */
function objectsHeldBy(entry: DeadlineEntry<unknown>): unknown[] {
  return Object.values(entry).filter((value) => typeof value === 'object' && value !== null);
}

test('entries come out oldest first, whatever was removed in between', () => {
  const list = new DeadlineList<string>();
  const a = list.add('a', 10);
  const b = list.add('b', 20);
  const c = list.add('c', 30);
  const d = list.add('d', 40);
  assert.equal(list.oldest(), a);
  list.remove(b); // middle
  list.remove(a); // head
  assert.equal(list.oldest(), c);
  list.remove(d); // tail
  const e = list.add('e', 50);
  assert.deepEqual(list.takeDue(100), ['c', 'e']);
  assert.equal(list.oldest(), undefined);
  assert.equal(e.value, undefined);
});

test('takeDue hands over only the calls whose deadline has come, and leaves the rest', () => {
  const list = new DeadlineList<number>();
  for (let i = 1; i <= 5; i++) list.add(i, i * 10);
  assert.deepEqual(list.takeDue(30), [1, 2, 3]);
  assert.deepEqual(list.takeDue(30), []);
  assert.equal(list.oldest()?.value, 4);
  assert.deepEqual(list.takeDue(Infinity), [4, 5]);
});

test('removing an entry twice, or after takeDue took it, changes nothing', () => {
  const list = new DeadlineList<string>();
  const a = list.add('a', 1);
  const b = list.add('b', 2);
  assert.deepEqual(list.takeDue(1), ['a']);
  list.remove(a);
  list.remove(b);
  list.remove(b);
  assert.equal(list.oldest(), undefined);
  const c = list.add('c', 3);
  assert.equal(list.oldest(), c);
});

test('an entry that has left holds no call and no link to another entry', () => {
  const list = new DeadlineList<{ request: number }>();
  const entries = Array.from({ length: 6 }, (_, i) => list.add({ request: i }, i));
  // While in the list, an inner entry links both ways and holds its call.
  assert.equal(objectsHeldBy(entries[2]!).length, 3);
  list.remove(entries[2]!);
  list.remove(entries[0]!);
  list.remove(entries[5]!);
  list.takeDue(3);
  for (const entry of [entries[0]!, entries[1]!, entries[2]!, entries[3]!, entries[5]!]) {
    assert.deepEqual(objectsHeldBy(entry), [], 'a removed entry keeps nothing alive');
  }
  assert.equal(list.oldest(), entries[4]);
  assert.deepEqual(objectsHeldBy(entries[4]!), [{ request: 4 }]);
});
