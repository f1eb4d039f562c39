import { hash, randomUUID } from 'node:crypto';
import type { AccountRecord, AccountStore } from './account-store.ts';

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

/**
 * Creates an account with a fresh access code, storing only the code's digest, and answers
 * the account with its code (shown this once). The one way accounts are made: by the
 * service, the CLI's `accounts create --direct` and the importer.
 */
export async function createAccountWithCode(
  store: Pick<AccountStore, 'createAccount'>,
  { maxLinks, dateCreated }: { maxLinks: number; dateCreated: string },
): Promise<AccountRecord & { accessCode: string }> {
  const accessCode = newAccessCode();
  const record = await store.createAccount({ codeHash: hashAccessCode(accessCode), dateCreated, maxLinks });
  return { ...record, accessCode };
}
