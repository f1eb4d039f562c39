/**
 * Webhooks (CONTRACT §7.5, ADR 21): the `/v1/webhooks` routes and, unless told not to, the
 * dispatcher that delivers the outbox. Secrets are sealed under WEBHOOK_SECRET_KEY when set.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { RateLimitChecks } from '../http/rate-limit-checks.ts';
import type { Authenticate } from '../http/route-helpers.ts';
import { registerWebhookRoutes } from '../http/routes/webhooks.ts';
import { createSpacedLog } from '../http/spaced-log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Store } from '../store/store.ts';
import { startDispatcher, type DispatcherOptions } from '../webhooks/dispatcher.ts';
import { createSecretBox } from '../webhooks/secret-box.ts';
import type { ResolveAll } from '../webhooks/target-address.ts';
import { createWebhookService } from '../webhooks/webhook-service.ts';

/**
 * Delivery settings (tests shorten the poll or resolve names their own way); with
 * `dispatch: false` the app registers webhooks but delivers nothing.
 */
export type WebhookOptions = Partial<Omit<DispatcherOptions, 'store' | 'secrets' | 'allowPrivate'>> & {
  readonly dispatch?: boolean;
  readonly resolve?: ResolveAll;
};

export function setUpWebhooks(
  app: FastifyInstance,
  { config, store, clock, authenticate, rateLimits, metrics, options }: {
    config: Config; store: Store; clock: () => Date; authenticate: Authenticate; rateLimits: RateLimitChecks;
    metrics: Metrics; options: WebhookOptions;
  },
): void {
  const secrets = createSecretBox(config.webhookSecretKey);
  const { dispatch = true, resolve, ...dispatchOptions } = options;
  const resolving = resolve === undefined ? {} : { resolve };
  const webhooks = createWebhookService({
    store: store.webhooks, secrets, clock, allowPrivate: config.webhookAllowPrivate, ...resolving,
    log: (detail, message) => app.log.info(detail, message),
  });
  registerWebhookRoutes(app, { webhooks, authenticate, rateLimits });
  if (!dispatch) return;
  const dispatcherLog = createSpacedLog();
  const dispatcher = startDispatcher({
    store: store.webhooks,
    secrets,
    allowPrivate: config.webhookAllowPrivate,
    observer: metrics.webhooks,
    // One line per cause per 10 s, as for 503s: an outage must not write a line a second.
    onError: (error, what) => dispatcherLog.report(what, (suppressed) => app.log.warn(
      { err: error, ...(suppressed > 0 ? { suppressed } : {}) }, `webhooks: ${what} failed; tried again later`,
    )),
    // The account's deliveries say only that the target was refused; the operator reads why.
    onRefused: (refusal) => dispatcherLog.report(`refused ${refusal.webhookId}`, (suppressed) => app.log.warn(
      { ...refusal, ...(suppressed > 0 ? { suppressed } : {}) }, 'webhooks: a delivery\'s target was refused after DNS',
    )),
    ...resolving,
    ...dispatchOptions,
  });
  metrics.watchWebhooks(() => store.webhooks.pending());
  app.log.debug({ dispatcher: dispatcher.owner }, 'webhook dispatcher started');
  // Before the store closes (start-server.ts closes it after the app): attempts in flight
  // are cut and their events released, due again at once here or on another instance.
  app.addHook('onClose', () => dispatcher.stop());
}
