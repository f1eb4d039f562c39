/**
 * A bounded cache that keeps what was used recently, in two generations of at most `capacity`
 * entries each. A hit in the newer generation is one Map lookup that changes nothing (the hot
 * path's common case: the same clients come back); a hit in the older one copies the entry
 * into the newer. When the newer is full it becomes the older, and the older is dropped
 * whole. So an entry used since the last `capacity` insertions is always kept, and at most
 * 2 × capacity entries are held.
 */
export interface Lru<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  /** Entries held, at most 2 × capacity (an entry in both generations counts twice). */
  readonly size: number;
}

export function createLru<K, V>(capacity: number): Lru<K, V> {
  let newer = new Map<K, V>();
  let older = new Map<K, V>();

  function set(key: K, value: V): void {
    newer.set(key, value);
    if (newer.size >= capacity) {
      older = newer;
      newer = new Map();
    }
  }

  return {
    get(key) {
      const value = newer.get(key);
      if (value !== undefined) return value;
      const old = older.get(key);
      if (old !== undefined) set(key, old);
      return old;
    },
    set,
    get size() {
      return newer.size + older.size;
    },
  };
}
