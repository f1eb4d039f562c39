/**
 * A bounded map that forgets the least recently used entry first. A Map keeps insertion
 * order, so a hit is moved to the end by deleting and setting it again, and the oldest entry
 * is the first key.
 */
export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  readonly size: number;
}

export function createLru<K, V>(capacity: number): Lru<K, V> {
  const entries = new Map<K, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > capacity) entries.delete(entries.keys().next().value as K);
    },
    get size() {
      return entries.size;
    },
  };
}
