/**
 * One delivery attempt over node:http(s): a POST of the body with the Standard Webhooks
 * headers, to an address checked after DNS (target-address.ts: the socket connects to the
 * address the check passed, through a custom lookup), redirects not followed (a 3xx is a
 * failed attempt like any non-2xx), the whole attempt bounded by a timeout, and at most
 * 64 KiB of the answer read. Never throws: the outcome says what happened.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { checkedAddresses, NOT_PUBLIC, RefusedTarget, refusalDetail, resolveAll, type ResolveAll } from './target-address.ts';

export interface DeliveryRequest {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface DeliveryOutcome {
  /** The receiver's status, or null when it did not answer. */
  readonly status: number | null;
  /** Why the attempt failed (null for a 2xx), as the account reads it in its deliveries. */
  readonly error: string | null;
  /**
   * For the operator's log only: what the name resolved to when the target was refused, or
   * the resolver's error (NOT_PUBLIC stands for both in `error`).
   */
  readonly detail?: string;
}

export interface DeliverOptions {
  readonly timeoutMs: number;
  readonly allowPrivate: boolean;
  /** Aborted at shutdown: the attempt ends at once (it is then not recorded, see the dispatcher). */
  readonly signal?: AbortSignal;
  readonly resolve?: ResolveAll;
  /** Sent as User-Agent. */
  readonly userAgent?: string;
}

export type Deliver = (request: DeliveryRequest, options: DeliverOptions) => Promise<DeliveryOutcome>;

const MAX_ANSWER_BYTES = 64 * 1024;

export const deliver: Deliver = async ({ url, headers, body }, { timeoutMs, allowPrivate, signal, resolve = resolveAll, userAgent = 'Shortlink-Webhooks/1' }) => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { status: null, error: 'the url is not valid' };
  }
  const timeout = AbortSignal.timeout(timeoutMs);
  const abort = signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
  let addresses: LookupAddress[];
  try {
    // The lookup counts toward the attempt's timeout and ends at shutdown too: a resolver
    // that does not answer (getaddrinfo tries each nameserver for seconds) would otherwise
    // hold the attempt, and the shutdown waiting for it, well past both.
    addresses = await untilAborted(checkedAddresses(target.hostname, allowPrivate, resolve), abort);
  } catch (error) {
    if (timeout.aborted) return { status: null, error: `DNS: no answer within ${timeoutMs / 1000} s` };
    if (signal?.aborted === true) return { status: null, error: 'stopped: the service shut down' };
    // Refused or not resolvable read the same to the account (target-address.ts: NOT_PUBLIC).
    if (error instanceof RefusedTarget || !allowPrivate) return { status: null, error: `refused: ${NOT_PUBLIC}`, detail: refusalDetail(error) };
    return { status: null, error: `DNS: ${(error as Error).message}` };
  }
  const first = addresses[0]!;
  const options: RequestOptions = {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': userAgent },
    signal: abort,
    agent: false,
    // The connection goes to the address that was checked, never to a second lookup's answer.
    lookup: (_hostname, lookupOptions, callback) => {
      if ((lookupOptions as { all?: boolean }).all === true) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    },
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<DeliveryOutcome>((settle) => {
    let done = false;
    const finish = (outcome: DeliveryOutcome) => {
      if (done) return;
      done = true;
      settle(outcome);
    };
    const req = send(target, options, (response: IncomingMessage) => {
      const status = response.statusCode ?? null;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) response.destroy();
      });
      const answered = () => finish({ status, error: status !== null && status >= 200 && status < 300 ? null : `the receiver answered ${status}` });
      response.on('end', answered);
      response.on('close', answered);
      response.on('error', answered);
    });
    req.on('error', (error) => {
      if (timeout.aborted) finish({ status: null, error: `no answer within ${timeoutMs / 1000} s` });
      else if (signal?.aborted === true) finish({ status: null, error: 'stopped: the service shut down' });
      else finish({ status: null, error: describe(error) });
    });
    req.end(body);
  });
};

/** `work`, or a rejection as soon as `signal` aborts (the work itself goes on, its outcome ignored). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describe(error: Error): string {
  const code = (error as { code?: string }).code;
  return code === undefined ? error.message : `${code}: ${error.message}`;
}
