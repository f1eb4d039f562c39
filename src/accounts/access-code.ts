import { hash, randomUUID } from 'node:crypto';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** A fresh access code: a v4 UUID from the platform CSPRNG, in lower case. */
export function newAccessCode(): string {
  return randomUUID();
}

/** True when the text has the shape of a v4 UUID (any letter case). */
export function isWellFormedAccessCode(text: string): boolean {
  return text.length === 36 && UUID_V4.test(text);
}

/**
 * The only form in which an access code is stored: the hex SHA-256 digest of its lower-case
 * text. A v4 UUID carries 122 random bits, so a fast unsalted hash is enough: there is
 * nothing to brute-force from a leaked digest, and lookups stay one indexed equality.
 */
export function hashAccessCode(code: string): string {
  // The one-shot hash() makes no Hash object: half the time of createHash() for a UUID.
  return hash('sha256', code.toLowerCase(), 'hex');
}
