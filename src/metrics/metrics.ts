/**
 * The service's Prometheus metrics: requests by route pattern and status, what the requests
 * achieved (resolutions, redirects, links and accounts created or deleted), storage latency,
 * and the group commit's batches. Label values are route patterns, methods, status codes
 * and store operation names: never a shortcode, an access code or a raw URL.
 */
import cluster from 'node:cluster';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { GROUP_COMMIT_CHANNEL, type BatchEvent } from '../store/group-commit.ts';
import { clusterExposition } from './cluster-metrics.ts';
import { createFastHistogram, type HistogramSeries } from './histogram.ts';

/**
 * The business events a route's successful answer counts (`shortlink_resolutions_total`, …); a
 * route names its own in its config (`countedEvent`).
 */
export const CountedEvent = {
  Resolution: 'resolution',
  Redirect: 'redirect',
  LinkCreated: 'link_created',
  LinkDeleted: 'link_deleted',
  AccountCreated: 'account_created',
} as const;

export type CountedEvent = (typeof CountedEvent)[keyof typeof CountedEvent];

/** Route label of requests that matched no route (404s, and requests refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds; from a cached resolution (~0.1 ms) to a request stuck on a dead database. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];

export interface Metrics {
  /** Content-Type of `render()`'s text. */
  readonly contentType: string;
  /**
   * Records one finished request. Called once per request, so it must stay cheap: three map
   * lookups and a histogram observation.
   */
  observeRequest(route: string | undefined, method: string, status: number, countedEvent: CountedEvent | undefined, elapsedMs: number): void;
  /** A timer for one store operation: call `observe(seconds)` when it settles. */
  storeTimer(operation: string): { observe(seconds: number): void; failed(): void };
  /** Counts one resolution recorded in visit statistics, as a human's or a bot's. */
  visitRecorded(bot: boolean): void;
  /** Counts a connection the server closed because of how the client behaved. */
  connectionClosed(reason: string): void;
  /** What the webhook dispatcher reports (src/webhooks/dispatcher.ts). */
  readonly webhooks: {
    delivered(type: string, seconds: number): void;
    failed(type: string): void;
    attempted(type: string, ok: boolean, seconds: number): void;
  };
  /** Reads the webhook outbox's size at each scrape. */
  watchWebhooks(pending: () => Promise<number>): void;
  /** The Prometheus text exposition. */
  render(): Promise<string>;
  /** Stops watching the group commit. */
  close(): void;
}

let processRegistry: Registry | undefined;

/**
 * Node's process metrics (CPU, memory, event-loop delay, GC), collected once per process:
 * every app built in this process (tests build many) shares them.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** One route pattern, method and status: its latency series and the event it counts, if any. */
interface RequestSeries {
  readonly latency: HistogramSeries;
  readonly event: Counter | undefined;
}

export interface MetricsOptions {
  /**
   * True in a `WORKERS` process: the exposition is the whole group's, collected by the primary
   * (cluster-metrics.ts). Whether this process is a cluster worker when omitted.
   */
  readonly clusterWorker?: boolean;
}

export function createMetrics({ clusterWorker = cluster.isWorker }: MetricsOptions = {}): Metrics {
  const registry = new Registry();

  const requests = createFastHistogram(registry, {
    name: 'shortlink_http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its answer, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status_code'],
    buckets: REQUEST_BUCKETS,
  });
  requests.exposeCountAs('shortlink_http_requests_total', 'Requests answered, by route pattern, method and status.');

  const events: Readonly<Record<CountedEvent, Counter>> = {
    resolution: new Counter({ name: 'shortlink_resolutions_total', help: 'Links resolved through GET /v1/get/{shortcode} (each counted one access).', registers: [registry] }),
    redirect: new Counter({ name: 'shortlink_redirects_total', help: 'Short URLs followed (redirects answered; each counted one access).', registers: [registry] }),
    link_created: new Counter({ name: 'shortlink_links_created_total', help: 'Links created.', registers: [registry] }),
    link_deleted: new Counter({ name: 'shortlink_links_deleted_total', help: 'Links deleted.', registers: [registry] }),
    account_created: new Counter({ name: 'shortlink_accounts_created_total', help: 'Accounts created.', registers: [registry] }),
  };

  const store = createFastHistogram(registry, {
    name: 'shortlink_store_duration_seconds',
    help: 'Time a storage call took, by operation (resolveLink includes waiting for its group commit).',
    labelNames: ['operation'],
    buckets: STORE_BUCKETS,
  });
  const storeErrors = new Counter({
    name: 'shortlink_store_errors_total',
    help: 'Storage calls that failed, by operation.',
    labelNames: ['operation'],
    registers: [registry],
  });

  const visits = new Counter({
    name: 'shortlink_visits_total',
    help: 'Resolutions recorded in visit statistics, by kind (human or bot, judged from the User-Agent).',
    labelNames: ['kind'],
    registers: [registry],
  });
  const humanVisits = visits.labels({ kind: 'human' });
  const botVisits = visits.labels({ kind: 'bot' });

  const closedConnections = new Counter({
    name: 'shortlink_connections_closed_total',
    help: 'Connections the server closed: answers left unread (stalled) or too many pipelined requests waiting (queue_full).',
    labelNames: ['reason'],
    registers: [registry],
  });

  const batchSizes = createFastHistogram(registry, {
    name: 'shortlink_access_batch_size',
    help: 'Accesses written per group commit (one transaction each), by result.',
    labelNames: ['result'],
    buckets: BATCH_SIZE_BUCKETS,
  });
  const batchTimes = createFastHistogram(registry, {
    name: 'shortlink_access_batch_commit_seconds',
    help: 'Time one group commit of access counts took to become durable, by result.',
    labelNames: ['result'],
    buckets: STORE_BUCKETS,
  });
  const committed = { size: batchSizes.series({ result: 'ok' }), time: batchTimes.series({ result: 'ok' }) };
  const failed = { size: batchSizes.series({ result: 'error' }), time: batchTimes.series({ result: 'error' }) };
  const onBatch = (message: unknown) => {
    const event = message as BatchEvent;
    const target = event.ok ? committed : failed;
    target.size.observe(event.accesses);
    target.time.observe(event.durationMs / 1000);
  };
  subscribe(GROUP_COMMIT_CHANNEL, onBatch);

  const webhookDelivered = new Counter({
    name: 'shortlink_webhook_events_delivered_total',
    help: 'Webhook events delivered (the receiver answered 2xx), by event type.',
    labelNames: ['type'],
    registers: [registry],
  });
  const webhookFailed = new Counter({
    name: 'shortlink_webhook_events_failed_total',
    help: 'Webhook events given up: 24 h of retries passed, or the receiver answered 410.',
    labelNames: ['type'],
    registers: [registry],
  });
  const webhookLatency = createFastHistogram(registry, {
    name: 'shortlink_webhook_delivery_latency_seconds',
    help: 'From a change to its webhook event being delivered (retries included).',
    labelNames: ['type'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
  });
  const webhookAttempts = createFastHistogram(registry, {
    name: 'shortlink_webhook_attempt_duration_seconds',
    help: 'Time one delivery attempt took, by result.',
    labelNames: ['result'],
    buckets: REQUEST_BUCKETS,
  });
  let pendingWebhookEvents: (() => Promise<number>) | undefined;
  new Gauge({
    name: 'shortlink_webhook_events_pending',
    help: 'Webhook events waiting in the outbox (being delivered or due for a retry).',
    registers: [registry],
    async collect() {
      if (pendingWebhookEvents === undefined) return;
      try {
        this.set(await pendingWebhookEvents());
      } catch {
        // storage down: the scrape still answers, without a fresh value
      }
    },
  });

  const exposition = Registry.merge([processMetrics(), registry]);
  const render = clusterWorker ? clusterExposition(exposition) : () => exposition.metrics();

  // route pattern → method → status → series. Route patterns and methods are the same string
  // objects on every request (their hashes are cached), so a lookup costs little.
  const byRoute = new Map<string, Map<string, Map<number, RequestSeries>>>();

  function seriesFor(route: string, method: string, status: number, countedEvent: CountedEvent | undefined): RequestSeries {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        latency: requests.series({ route, method, status_code: String(status) }),
        // A HEAD never counts an access or changes anything; an error achieves nothing.
        event: countedEvent !== undefined && method !== 'HEAD' && status < 400 ? events[countedEvent] : undefined,
      };
      byStatus.set(status, series);
    }
    return series;
  }

  return {
    contentType: exposition.contentType,
    observeRequest(route = UNMATCHED_ROUTE, method, status, countedEvent, elapsedMs) {
      const series = byRoute.get(route)?.get(method)?.get(status) ?? seriesFor(route, method, status, countedEvent);
      series.latency.observe(elapsedMs / 1000);
      series.event?.inc();
    },
    storeTimer(operation) {
      const series = store.series({ operation });
      const errors = storeErrors.labels(operation);
      return { observe: (seconds) => series.observe(seconds), failed: () => errors.inc() };
    },
    visitRecorded(bot) {
      (bot ? botVisits : humanVisits).inc();
    },
    connectionClosed(reason) {
      closedConnections.inc({ reason });
    },
    webhooks: {
      delivered(type, seconds) {
        webhookDelivered.inc({ type });
        webhookLatency.series({ type }).observe(seconds);
      },
      failed(type) {
        webhookFailed.inc({ type });
      },
      attempted(_type, ok, seconds) {
        webhookAttempts.series({ result: ok ? 'ok' : 'error' }).observe(seconds);
      },
    },
    watchWebhooks(pending) {
      pendingWebhookEvents = pending;
    },
    render,
    close() {
      unsubscribe(GROUP_COMMIT_CHANNEL, onBatch);
    },
  };
}
