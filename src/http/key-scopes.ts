/**
 * Which API-key scope each route needs (CONTRACT §8.5), declared once per route: the
 * authentication hook (route-helpers.ts) checks it right after authenticating a key, so a
 * key answers 401 (not valid), then 403 (no scope), then the rest of the usual order. A route
 * missing here takes the access code only: account calls (get_account, rotate, delete
 * account), the keys themselves, and any route added later until it is declared here.
 * test/http/api-keys.test.ts checks that every entry names a registered route.
 */
import type { ApiKeyScope } from '../accounts/api-key-store.ts';
import { DomainError, ErrorCode } from '../errors.ts';

export const ROUTE_SCOPES: Readonly<Record<string, ApiKeyScope>> = {
  'GET /v1/links': 'links:read',
  'HEAD /v1/links': 'links:read',
  'GET /v1/domains': 'links:read',
  'GET /v1/link': 'links:write',
  'POST /v1/link': 'links:write',
  'PATCH /v1/link': 'links:write',
  'DELETE /v1/link': 'links:write',
  'POST /v1/links': 'links:write',
  'GET /v1/stats': 'stats:read',
  'POST /v1/webhooks': 'webhooks',
  'GET /v1/webhooks': 'webhooks',
  'DELETE /v1/webhooks': 'webhooks',
  'GET /v1/webhooks/deliveries': 'webhooks',
  'GET /v1/events': 'webhooks',
};

/** The scope a route needs from a key, or undefined when keys may not call it at all. */
export function scopeOf(method: string, url: string | undefined): ApiKeyScope | undefined {
  return url === undefined ? undefined : ROUTE_SCOPES[`${method} ${url}`];
}

export function keyNotAllowed(): DomainError {
  return new DomainError(ErrorCode.KeyNotAllowed, 'the key does not allow this');
}
