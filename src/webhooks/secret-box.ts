/**
 * Webhook signing secrets (CONTRACT §7.5): `whsec_` and the base64 of 32 random bytes, shown
 * once at creation. The service must sign with the secret itself, so it cannot keep a digest
 * as it does for access codes. With WEBHOOK_SECRET_KEY it keeps it sealed with AES-256-GCM,
 * so a copy of the database alone signs nothing; without one (webhooks work out of the box,
 * as CONTRACT §7.5 has them) it keeps it as `plain.<secret>`, readable to whoever reads the
 * database, and says so in the docs (ADR 21). Stored forms of either kind are opened under a
 * key set later, so an operator can add one at any time.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export interface SecretBox {
  /** The stored form of a secret. */
  seal(secret: string): string;
  /** The secret of a stored form; throws when it was sealed under another key or altered. */
  open(sealed: string): string;
}

/** A new signing secret. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a secret: the base64-decoded bytes after `whsec_` (Standard Webhooks). */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

const PLAIN = 'plain.';

/**
 * Seals under SHA-256 of the configured key, as `v1.<iv>.<tag>.<ciphertext>` (each base64url);
 * without a key, stores `plain.<secret>`.
 */
export function createSecretBox(configuredKey: string | undefined): SecretBox {
  const key = configuredKey === undefined ? undefined : createHash('sha256').update(configuredKey).digest();
  return {
    seal(secret) {
      if (key === undefined) return `${PLAIN}${secret}`;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
    },
    open(stored) {
      if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
      const [version, iv, tag, sealed] = stored.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || sealed === undefined) throw new Error('not a sealed webhook secret');
      if (key === undefined) throw new Error('the webhook secret is sealed and WEBHOOK_SECRET_KEY is not set');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
