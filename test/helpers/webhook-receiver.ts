/**
 * A webhook receiver on loopback for tests: records every request (headers and body) and
 * answers as the test says (a status, or never). Verification is the test's, with the
 * `standardwebhooks` package, as a real receiver would do it.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WAIT_BOUND_MS } from './wait-for.ts';

export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

export type Answer = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: ReceivedRequest[];
  /** How to answer the next requests, in order; afterwards `otherwise` (200 by default). */
  answer(...answers: Answer[]): void;
  otherwise(answer: Answer): void;
  /** Resolves once `predicate` holds for what was received, polling; rejects after `timeoutMs`. */
  until(predicate: (received: readonly ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const queue: Answer[] = [];
  let fallback: Answer = 200;
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body, at: Date.now() });
      const answer = queue.shift() ?? fallback;
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer: (...answers) => void queue.push(...answers),
    otherwise: (answer) => void (fallback = answer),
    async until(predicate, timeoutMs = WAIT_BOUND_MS) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms (got ${received.length} requests)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
