/**
 * A reader of `GET /v1/events` over a real socket (app.inject cannot stream): parses the
 * Server-Sent Events frames as they come, so a test can wait for the event it needs.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { WAIT_BOUND_MS, waitFor } from './wait-for.ts';

export interface StreamedEvent {
  readonly id: string;
  readonly event: string;
  readonly data: { type: string; timestamp: string; data: Record<string, unknown> };
}

export interface EventStream {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** Events so far, in order. */
  readonly events: StreamedEvent[];
  /** Comment lines so far (heartbeats, `connected`, `closing`). */
  readonly comments: string[];
  /** The body when the answer was not a stream (an error). */
  body(): string;
  /** True once the server ended the stream. */
  ended(): boolean;
  /** Stops reading (the server's writes then queue up). */
  pause(): void;
  /** Waits for the first event (from `from` on) that `match` accepts. */
  next(match: (event: StreamedEvent) => boolean, what: string, options?: { from?: number; timeoutMs?: number }): Promise<StreamedEvent>;
  close(): void;
}

export function openEventStream(baseUrl: string, headers: Record<string, string> = {}, path = '/v1/events'): Promise<EventStream> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      const events: StreamedEvent[] = [];
      const comments: string[] = [];
      let text = '';
      let buffer = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: Record<string, string> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
          }
          if (fields.data !== undefined) {
            events.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: JSON.parse(fields.data) as StreamedEvent['data'] });
          }
        }
      });
      const finish = () => {
        ended = true;
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const stream: EventStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        body: () => text,
        ended: () => ended,
        next: (match, what, { from = 0, timeoutMs = WAIT_BOUND_MS } = {}) =>
          waitFor(() => events.slice(from).find(match), () => `${what} (got ${JSON.stringify(events.map((e) => e.event))})`, { timeoutMs }),
        close: () => {
          req.destroy();
        },
        pause: () => {
          res.pause();
        },
      };
      if ((res.statusCode ?? 0) !== 200) {
        res.on('end', () => resolve(stream));
        return;
      }
      // Open once the server's first comment has come: it listens from then on.
      waitFor(() => comments.includes('connected') || ended, 'the stream to open').then(() => resolve(stream), reject);
    });
    req.on('error', reject);
    req.end();
  });
}
