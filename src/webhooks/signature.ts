/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the three headers of one
 * attempt. `webhook-id` stays the same on every retry of an event; the timestamp is the
 * attempt's, so receivers can refuse replays.
 */
import { createHmac } from 'node:crypto';
import { secretKey } from './secret-box.ts';

/** `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one delivery attempt. */
export function webhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': sign(secret, id, timestampSeconds, body),
  };
}
