/**
 * Live events across instances through PostgreSQL LISTEN/NOTIFY (PostgreSQL without Redis):
 * channel `shortlink_events` of the service's database (another for another schema). A NOTIFY payload holds at most 8000
 * bytes: a longer message (a link with a 2000-character target and title, a large visit
 * batch) is sent as numbered parts, reassembled by each listener, and dropped if a part
 * never comes. Parts of one message go out on one connection, in order.
 */
import postgres from '../store/postgres/driver.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { LiveMessage, LiveTransport } from './live-events.ts';

/** The channel of a database whose tables are in `public`; another schema gets its own. */
export const NOTIFY_CHANNEL = 'shortlink_events';

/**
 * Deployments (and test runs) that share a database in different schemas (search_path) must
 * not hear each other: account numbers repeat across schemas.
 */
export function channelFor(schema: string): string {
  return schema === 'public' ? NOTIFY_CHANNEL : `${NOTIFY_CHANNEL}_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}
/** Below PostgreSQL's 8000-byte limit, with room for the part header. */
const MAX_PAYLOAD_BYTES = 7900;
/** Bytes of the message per part, before base64 (4/3 larger). */
const PART_BYTES = 5700;
/** A message whose parts have not all come within this is forgotten. */
const PARTS_TIMEOUT_MS = 30_000;

export interface PostgresTransportOptions {
  readonly url: string;
  readonly onError?: (error: unknown) => void;
}

/** The payloads that carry `text`: itself when it fits, else `#id:i:n:` + base64 parts. */
export function notifyPayloads(text: string): string[] {
  if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) return [text];
  const bytes = Buffer.from(text);
  const id = randomBytes(6).toString('hex');
  const n = Math.ceil(bytes.length / PART_BYTES);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(`#${id}:${i}:${n}:${bytes.subarray(i * PART_BYTES, (i + 1) * PART_BYTES).toString('base64')}`);
  }
  return parts;
}

/** Reassembles parted payloads; answers each whole message's text once. */
export function createPayloadAssembler(clock: () => number = Date.now): (payload: string) => string | undefined {
  const pending = new Map<string, { parts: (string | undefined)[]; left: number; since: number }>();
  return (payload) => {
    if (!payload.startsWith('#')) return payload;
    const match = /^#([0-9a-f]+):(\d+):(\d+):(.*)$/s.exec(payload);
    if (match === null) return undefined;
    const [, id, index, count, part] = match as unknown as [string, string, string, string, string];
    const now = clock();
    for (const [key, entry] of pending) if (now - entry.since > PARTS_TIMEOUT_MS) pending.delete(key);
    let entry = pending.get(id);
    if (entry === undefined) pending.set(id, (entry = { parts: new Array<string | undefined>(Number(count)), left: Number(count), since: now }));
    const i = Number(index);
    if (i >= entry.parts.length || entry.parts[i] !== undefined) return undefined;
    entry.parts[i] = part;
    if (--entry.left > 0) return undefined;
    pending.delete(id);
    return Buffer.concat(entry.parts.map((p) => Buffer.from(p!, 'base64'))).toString();
  };
}

/** Pause before listening again after the connection was lost. */
const RELISTEN_MS = 1000;

export function createPostgresTransport({ url, onError = () => undefined }: PostgresTransportOptions): LiveTransport {
  const assemble = createPayloadAssembler();
  let closed = false;
  let channel = NOTIFY_CHANNEL;
  let receive: (message: LiveMessage) => void = () => undefined;
  let relistenTimer: NodeJS.Timeout | undefined;

  // The driver's option for notifications, missing from its typings.
  const notifications: Record<string, unknown> = {
    onnotify(from: string, payload: string) {
      if (from !== channel) return;
      const text = assemble(payload);
      if (text === undefined) return;
      try {
        receive(JSON.parse(text) as LiveMessage);
      } catch (error) {
        onError(error);
      }
    },
  };

  // Its own client of one connection, never the store's pool (the hot path uses that): it
  // LISTENs, and its NOTIFYs keep a message's parts in order. Not the driver's sql.listen(),
  // whose reconnection timers outlive end() and would hold the process up at shutdown.
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    connect_timeout: 5,
    // 0: never closed for idleness or age (a closed connection stops listening until relisten).
    idle_timeout: 0,
    max_lifetime: 0,
    // Fail at once while the database is away (the next LISTEN is this module's business).
    backoff: () => 0,
    connection: { application_name: 'shortlink-events' },
    ...notifications,
    // A new connection has not LISTENed: do it again (soon, on a timer that holds nothing up).
    onclose: () => relisten(),
  });

  function listen(): Promise<void> {
    return sql.unsafe(`LISTEN "${channel}"`).then(() => undefined);
  }

  function relisten(): void {
    if (closed || relistenTimer !== undefined) return;
    relistenTimer = setTimeout(() => {
      relistenTimer = undefined;
      listen().catch((error: unknown) => {
        onError(error);
        relisten();
      });
    }, RELISTEN_MS);
    relistenTimer.unref();
  }

  return {
    name: 'postgres',
    async start(receiver) {
      receive = receiver;
      try {
        const [row] = await sql<{ schema: string }[]>`SELECT current_schema() AS schema`;
        channel = channelFor(row?.schema ?? 'public');
        await listen();
      } catch (error) {
        // The store opened, so the database was there a moment ago: try again later.
        onError(error);
        relisten();
      }
    },
    send(message) {
      if (closed) return;
      for (const payload of notifyPayloads(JSON.stringify(message))) {
        sql.notify(channel, payload).catch(onError);
      }
    },
    async close() {
      closed = true;
      clearTimeout(relistenTimer);
      await sql.end({ timeout: 1 });
    },
  };
}
