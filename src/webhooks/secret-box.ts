/**
 * Webhook signing secrets (CONTRACT §7.5): `whsec_` and the base64 of 32 random bytes, shown
 * once at creation. The service must sign with the secret itself, so it cannot keep a digest
 * as it does for access codes; it keeps it sealed with AES-256-GCM under WEBHOOK_SECRET_KEY
 * instead, so a copy of the database alone signs nothing (ADR 21).
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

/** Seals under SHA-256 of the configured key; `v1.<iv>.<tag>.<ciphertext>`, each base64url. */
export function createSecretBox(configuredKey: string): SecretBox {
  const key = createHash('sha256').update(configuredKey).digest();
  return {
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
    },
    open(stored) {
      const [version, iv, tag, sealed] = stored.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || sealed === undefined) throw new Error('not a sealed webhook secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
