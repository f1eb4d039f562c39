/**
 * The live side of CONTRACT §7.5 (ADR 19): events published after their change committed,
 * heard by every `GET /v1/events` stream of the account on this process and, through a
 * transport, on every other process (Redis pub/sub, PostgreSQL LISTEN/NOTIFY, or the cluster
 * primary for WORKERS > 1 on SQLite).
 *
 * Publishing must cost nothing when nobody listens, since visits are published from the count
 * batch: an event crosses to other processes only for accounts that some process listens to.
 * Each process announces the accounts its streams listen to (at once when one starts
 * listening, then every `announceMs`), and remembers what the others announced for three
 * periods. `wants(uid)` is a lookup in two maps.
 */
import { randomUUID } from 'node:crypto';
import type { EventType, LiveEvents, ServiceEvent } from './events.ts';
import { newEventId } from './payloads.ts';

/** What processes tell each other: the accounts they listen to, an event, or "announce now". */
export type LiveMessage =
  | { readonly kind: 'interest'; readonly origin: string; readonly uids: readonly string[] }
  | { readonly kind: 'event'; readonly origin: string; readonly event: ServiceEvent }
  | { readonly kind: 'hello'; readonly origin: string };

/**
 * How messages reach the other processes. A transport may hand a process its own messages
 * back (Redis and PostgreSQL do): they are recognised by `origin` and dropped.
 */
export interface LiveTransport {
  /** Which transport, for the start log. */
  readonly name: string;
  /** Starts receiving; resolves once messages sent from now on are heard (best effort). */
  start(receive: (message: LiveMessage) => void): Promise<void>;
  send(message: LiveMessage): void;
  close(): Promise<void>;
}

export interface LiveEventsOptions {
  readonly transport?: LiveTransport | undefined;
  /** How often this process repeats the accounts it listens to (5 s). */
  readonly announceMs?: number;
  /** Told when a listener throws or the transport fails; never rethrown. */
  readonly onError?: (error: unknown) => void;
  readonly clock?: () => number;
}

export interface LiveEventsHub extends LiveEvents {
  /** True when some stream, here or on another process, listens to the account. */
  wants(accountUid: string): boolean;
  /** True when any stream anywhere listens to anything: the count batch's first check. */
  anyone(): boolean;
  /** Connects the transport, if any. */
  start(): Promise<void>;
  /** The transport's name, or `in-process`. */
  readonly transportName: string;
}

type Listener = (event: ServiceEvent) => void;

/** A new event with its id (a change's outbox event id, or a fresh one) and time. */
export function serviceEvent(type: EventType, accountUid: number | string, data: unknown, time: Date = new Date(), id: string = newEventId()): ServiceEvent {
  return { id, accountUid: String(accountUid), type, timestamp: time.toISOString(), data };
}

export function createLiveEvents({
  transport, announceMs = 5_000, onError = () => undefined, clock = Date.now,
}: LiveEventsOptions = {}): LiveEventsHub {
  const origin = randomUUID();
  const local = new Map<string, Set<Listener>>();
  // Accounts other processes listen to, and until when that is believed.
  const remote = new Map<string, number>();
  let announcer: NodeJS.Timeout | undefined;
  let closed = false;

  function deliver(event: ServiceEvent): void {
    const listeners = local.get(event.accountUid);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        onError(error);
      }
    }
  }

  function send(message: LiveMessage): void {
    if (transport === undefined || closed) return;
    try {
      transport.send(message);
    } catch (error) {
      onError(error);
    }
  }

  function announce(): void {
    if (local.size > 0) send({ kind: 'interest', origin, uids: [...local.keys()] });
  }

  function receive(message: LiveMessage): void {
    if (message.origin === origin) return;
    switch (message.kind) {
      case 'event':
        deliver(message.event);
        return;
      case 'interest': {
        const until = clock() + 3 * announceMs;
        for (const uid of message.uids) remote.set(uid, until);
        return;
      }
      case 'hello':
        announce();
    }
  }

  function remoteWants(uid: string): boolean {
    const until = remote.get(uid);
    if (until === undefined) return false;
    if (until >= clock()) return true;
    remote.delete(uid);
    return false;
  }

  return {
    transportName: transport?.name ?? 'in-process',

    async start() {
      if (transport === undefined) return;
      await transport.start(receive);
      // Whoever listens already says so now, not at its next announcement.
      send({ kind: 'hello', origin });
      announcer = setInterval(() => {
        announce();
        const now = clock();
        for (const [uid, until] of remote) if (until < now) remote.delete(uid);
      }, announceMs);
      announcer.unref();
    },

    publish(event) {
      deliver(event);
      if (remote.size > 0 && remoteWants(event.accountUid)) send({ kind: 'event', origin, event });
    },

    subscribe(accountUid, listener) {
      let listeners = local.get(accountUid);
      if (listeners === undefined) {
        local.set(accountUid, (listeners = new Set()));
        send({ kind: 'interest', origin, uids: [accountUid] });
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        // Others forget the account once its announcements stop.
        if (listeners.size === 0 && local.get(accountUid) === listeners) local.delete(accountUid);
      };
    },

    wants(accountUid) {
      return local.has(accountUid) || (remote.size > 0 && remoteWants(accountUid));
    },

    anyone() {
      return local.size > 0 || remote.size > 0;
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(announcer);
      local.clear();
      remote.clear();
      await transport?.close();
    },
  };
}
