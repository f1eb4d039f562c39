/**
 * Calls that share one timeout, oldest first: the whole-request deadline
 * (http/request-deadline.ts) and the storage deadline (store/batcher.ts). With one timeout for
 * all, insertion order is deadline order, so one timer armed for the oldest entry stands for
 * every call, and a call that finishes leaves in O(1).
 *
 * Why a linked list of our own and not a Map or Set keyed by the call: both are rewritten on
 * every request (one insert, one delete), so V8 rehashes their table every few requests, and
 * a rehashed table keeps a pointer to its successor and the entries it held (for iterators
 * still walking it). Once one such table was promoted to the old generation, it kept its
 * successor alive through the next scavenge, which promoted that one with every request it
 * held, and so on: from then until the next full collection, whole requests (IncomingMessage,
 * ServerResponse, Fastify's request and reply, the batch) were copied to the old generation,
 * 8 MB per scavenge at 30,000 redirects a second. That cost the redirect about 4 µs of CPU in
 * garbage collection (docs/performance.md). Here an entry that leaves is unlinked and its
 * pointers cleared, so nothing dead points at anything younger.
 */
export interface DeadlineEntry<T> {
  /** The call; undefined once it has left the list. */
  readonly value: T | undefined;
  /** When it must be answered (the clock the caller uses). */
  readonly deadline: number;
}

interface Node<T> {
  value: T | undefined;
  deadline: number;
  prev: Node<T> | undefined;
  next: Node<T> | undefined;
}

export class DeadlineList<T> {
  #head: Node<T> | undefined;
  #tail: Node<T> | undefined;

  /** Appends a call whose deadline is no earlier than any already in the list. */
  add(value: T, deadline: number): DeadlineEntry<T> {
    const node: Node<T> = { value, deadline, prev: this.#tail, next: undefined };
    if (this.#tail === undefined) this.#head = node;
    else this.#tail.next = node;
    this.#tail = node;
    return node;
  }

  /** Takes an entry out; nothing happens when it has left already. */
  remove(entry: DeadlineEntry<T>): void {
    const node = entry as Node<T>;
    if (node.value === undefined) return;
    if (node.prev === undefined) this.#head = node.next;
    else node.prev.next = node.next;
    if (node.next === undefined) this.#tail = node.prev;
    else node.next.prev = node.prev;
    node.value = undefined;
    node.prev = undefined;
    node.next = undefined;
  }

  /** The entry added first of those still in the list. */
  oldest(): DeadlineEntry<T> | undefined {
    return this.#head;
  }

  /** Takes out and hands over, oldest first, every call whose deadline is at or before `time`. */
  takeDue(time: number): T[] {
    const due: T[] = [];
    for (let node = this.#head; node !== undefined && node.deadline <= time; node = this.#head) {
      due.push(node.value!);
      this.remove(node);
    }
    return due;
  }
}
