/**
 * `/v1/webhooks` (CONTRACT §7.5): create, list, delete, and the recent delivery attempts.
 * Always registered; the secrets are sealed when WEBHOOK_SECRET_KEY is set (ADR 21).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { DeliveryRecord, WebhookRecord } from '../../store/webhooks.ts';
import type { CreatedWebhook, WebhookService } from '../../webhooks/webhook-service.ts';
import { Operation } from '../operations.ts';
import { parameterNames, readParameters } from '../parameters.ts';
import { accountOf, type Authenticate } from '../route-helpers.ts';
import type { RateLimitChecks } from '../rate-limit-checks.ts';
import {
  ACCESS_CODE_SECURITY, CreatedWebhookSchema, CreateWebhookBody, CreateWebhookQuery, DeliverySchema, errorResponses, textResponse,
  WebhookIdQuery, WebhookSchema,
  type CreatedWebhook as CreatedWebhookBody, type Delivery, type Webhook,
} from '../schemas.ts';
import { PLAIN_TEXT } from '../send-error.ts';

export interface WebhookRoutesDeps {
  readonly webhooks: WebhookService;
  readonly authenticate: Authenticate;
  readonly rateLimits: RateLimitChecks;
}

export function webhookBody(webhook: WebhookRecord): Webhook {
  return { Id: webhook.id, Url: webhook.url, Events: [...webhook.events], DateCreated: webhook.dateCreated };
}

export function createdWebhookBody(webhook: CreatedWebhook): CreatedWebhookBody {
  return { Id: webhook.id, Url: webhook.url, Events: [...webhook.events], Secret: webhook.secret, DateCreated: webhook.dateCreated };
}

export function deliveryBody(delivery: DeliveryRecord): Delivery {
  return {
    EventId: delivery.eventId, Type: delivery.type, Attempt: delivery.attempt, Time: delivery.time, Status: delivery.status, Error: delivery.error,
  };
}

export function registerWebhookRoutes(app: FastifyInstance, { webhooks, authenticate, rateLimits }: WebhookRoutesDeps): void {
  app.post(
    '/v1/webhooks',
    {
      config: { operation: Operation.ManageWebhooks },
      onRequest: authenticate,
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook',
        description:
          'Parameters in the query string or in a JSON or URL-encoded form body. At most 5 per account. Events are POSTed as ' +
          '`{type, timestamp, data}` with the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), ' +
          'signed with the `Secret` of this answer, which is never shown again. Targets on loopback, private or link-local ' +
          'addresses are refused. Limited per account (`RATE_LIMIT_CREATE_WEBHOOK`, 20 per hour by default): past it, 429 ' +
          'with `Retry-After`.',
        tags: ['webhooks'],
        security: ACCESS_CODE_SECURITY,
        querystring: CreateWebhookQuery,
        body: CreateWebhookBody,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: {
          200: CreatedWebhookSchema,
          ...errorResponses(Operation.ManageWebhooks, [400, 401, 403, 413, 415, 429, 503]),
        },
      },
    },
    async (request, reply) => {
      const account = accountOf(request);
      // Before the parameters and the target's DNS lookup: every attempt counts, refused ones too.
      if (rateLimits.applies(request)) await rateLimits.createWebhook(request, account.uid);
      const { url, events } = readParameters(parameterNames(CreateWebhookBody), request.query, request.body);
      const created = await webhooks.create(account, { url, events });
      // The secret is in this answer only.
      reply.header('cache-control', 'no-store');
      return createdWebhookBody(created);
    },
  );

  // HEAD answers GET's headers without the body on both reading routes (reading changes nothing).
  const listOptions = (suffix: string) => ({
    config: { operation: Operation.ManageWebhooks },
    onRequest: authenticate,
    schema: {
      operationId: `listWebhooks${suffix}`,
      summary: 'List your webhooks, without their secrets',
      tags: ['webhooks'],
      security: ACCESS_CODE_SECURITY,
      querystring: Type.Object({ auth: WebhookIdQuery.properties.auth }),
      response: {
        200: Type.Array(WebhookSchema, { description: 'The account\'s webhooks, oldest first' }),
        ...errorResponses(Operation.ManageWebhooks, [400, 401, 403, 429, 503]),
      },
    },
  });
  const list = async (request: FastifyRequest) => {
    readParameters([], request.query, undefined);
    return (await webhooks.list(accountOf(request))).map(webhookBody);
  };
  app.get('/v1/webhooks', listOptions(''), list);
  app.head('/v1/webhooks', listOptions('Head'), list);

  app.delete(
    '/v1/webhooks',
    {
      config: { operation: Operation.ManageWebhooks },
      onRequest: authenticate,
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete one of your webhooks',
        description: 'Its pending events are dropped with it.',
        tags: ['webhooks'],
        security: ACCESS_CODE_SECURITY,
        querystring: WebhookIdQuery,
        response: {
          200: textResponse('Deleted', 'Success'),
          ...errorResponses(Operation.ManageWebhooks, [400, 401, 403, 404, 429, 503]),
        },
      },
    },
    async (request, reply) => {
      const { id } = readParameters(parameterNames(WebhookIdQuery), request.query, request.body);
      await webhooks.delete(accountOf(request), id);
      reply.type(PLAIN_TEXT);
      return 'Success';
    },
  );

  const deliveriesOptions = (suffix: string) => ({
    config: { operation: Operation.ManageWebhooks },
    onRequest: authenticate,
    schema: {
      operationId: `listWebhookDeliveries${suffix}`,
      summary: 'The last 100 delivery attempts of one of your webhooks, newest first',
      tags: ['webhooks'],
      security: ACCESS_CODE_SECURITY,
      querystring: WebhookIdQuery,
      response: {
        200: Type.Array(DeliverySchema, { description: 'Attempts, newest first' }),
        ...errorResponses(Operation.ManageWebhooks, [400, 401, 403, 404, 429, 503]),
      },
    },
  });
  const deliveries = async (request: FastifyRequest) => {
    const { id } = readParameters(parameterNames(WebhookIdQuery), request.query, undefined);
    return (await webhooks.deliveries(accountOf(request), id)).map(deliveryBody);
  };
  app.get('/v1/webhooks/deliveries', deliveriesOptions(''), deliveries);
  app.head('/v1/webhooks/deliveries', deliveriesOptions('Head'), deliveries);
}
