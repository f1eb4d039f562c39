/**
 * API keys (CONTRACT §8.5): credentials an account makes for scripts and integrations, each
 * allowed only what its scopes name, shown once and stored as a digest.
 *
 * - A key is `slk_` and the base64url of 32 random bytes (43 characters): 256 bits, so a fast
 *   unsalted SHA-256 of its exact text is enough to store and look it up by (as access codes).
 *   The fixed prefix lets secret scanners find leaked keys (docs/security.md).
 * - Authentication goes through a cache of its own, of the account cache's kind (500 ms,
 *   evicted here at once on deletion): a deleted key stops working on every process and
 *   instance within that, as a rotated access code does (ADR 18). The access codes' cache and
 *   path are untouched.
 * - LastUsed is not written per request: each process remembers its keys' latest use and
 *   writes them all in one call every `useFlushMs` (30 s), at close, and before it lists keys.
 */
import { hash, randomBytes } from 'node:crypto';
import { DomainError, ErrorCode, invalid } from '../errors.ts';
import { ACCOUNT_CACHE_MS, assertActive } from './account-service.ts';
import { createAccountCache } from './account-cache.ts';
import type { AccountRecord } from './account-store.ts';
import type { ApiKeyRecord, ApiKeyScope, ApiKeyStore } from './api-key-store.ts';

/** Every scope, in the order answers list them. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['links:read', 'links:write', 'stats:read', 'webhooks'];

/** The most keys an account may hold. */
export const MAX_API_KEYS = 20;

/** How long a name may be, in code points. */
export const API_KEY_NAME_MAX = 100;

export const API_KEY_PREFIX = 'slk_';

/** A key's shape: the prefix and 43 base64url characters (32 bytes). */
export const API_KEY_PATTERN = /^slk_[A-Za-z0-9_-]{43}$/;

/** How often a process writes its keys' latest uses (the contract allows a minute). */
export const API_KEY_USE_FLUSH_MS = 30_000;

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** True when the credential is meant as an API key (its prefix), well-formed or not. */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}

export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key: the hex SHA-256 of its exact text (keys are case-sensitive). */
export function hashApiKey(key: string): string {
  // The one-shot hash() makes no Hash object (as hashAccessCode).
  return hash('sha256', key, 'hex');
}

/** A new key's record as answered once, with the key itself. */
export interface CreatedApiKey extends ApiKeyRecord {
  readonly key: string;
}

/** What a request authenticated with a key may do, and which key it was. */
export interface ApiKeyCredential {
  readonly id: string;
  readonly scopes: readonly ApiKeyScope[];
}

/** A key's account as remembered with the key. */
interface CachedGrant extends AccountRecord {
  readonly credential: ApiKeyCredential;
}

export interface ApiKeyService {
  /** A new key for the account (name and scopes as sent); the answer is the only time the key is shown. */
  create(account: AccountRecord, input: { name: string | undefined; scopes: string | undefined }): Promise<CreatedApiKey>;
  /** The account's keys, oldest first, without the keys themselves. */
  list(account: AccountRecord): Promise<ApiKeyRecord[]>;
  /** Deletes one of the account's keys: from then on it is 401 here, and everywhere within the cache's lifetime. */
  remove(account: AccountRecord, id: string | undefined): Promise<void>;
  /**
   * The account and credential a key opens; throws Unauthenticated for anything else. Like
   * access codes, a disabled account is still returned (its calls are refused after their
   * parameters are checked).
   */
  authenticate(key: string): Promise<{ account: AccountRecord; credential: ApiKeyCredential }>;
  /** Forgets what this process remembers of the account's keys (an administrator changed it, or it was deleted). */
  forget(uid: number): void;
  /** Writes the latest uses remembered so far. */
  flushUses(): Promise<void>;
  /** Stops the periodic writes, after writing what is pending. */
  close(): Promise<void>;
}

export interface ApiKeyServiceDeps {
  readonly store: ApiKeyStore;
  readonly clock: () => Date;
  /** The cache lifetime; 0 looks every key up. Default: the account cache's (500 ms). */
  readonly cacheMs?: number;
  /** How often the latest uses are written. Default API_KEY_USE_FLUSH_MS. */
  readonly useFlushMs?: number;
  /** Told when a write of the latest uses fails (they are kept for the next one). */
  readonly onFlushError?: (error: unknown) => void;
}

function notValid(): DomainError {
  return new DomainError(ErrorCode.Unauthenticated, 'the API key is not valid');
}

function parseName(name: string | undefined): string {
  if (name === undefined || name === '') throw invalid('the parameter "name" is required');
  if (CONTROL.test(name)) throw invalid('name must not contain control characters');
  if ([...name].length > API_KEY_NAME_MAX) throw invalid(`name must be at most ${API_KEY_NAME_MAX} characters long`);
  return name;
}

function parseScopes(scopes: string | undefined): ApiKeyScope[] {
  if (scopes === undefined || scopes.trim() === '') throw invalid('the parameter "scopes" is required');
  const wanted = new Set<string>();
  for (const part of scopes.split(',')) {
    const scope = part.trim();
    if (!(API_KEY_SCOPES as readonly string[]).includes(scope)) {
      throw invalid(`unknown scope ${JSON.stringify(scope)}; scopes are ${API_KEY_SCOPES.join(', ')}`);
    }
    wanted.add(scope);
  }
  return API_KEY_SCOPES.filter((scope) => wanted.has(scope));
}

export function createApiKeyService({
  store, clock, cacheMs = ACCOUNT_CACHE_MS, useFlushMs = API_KEY_USE_FLUSH_MS, onFlushError = () => undefined,
}: ApiKeyServiceDeps): ApiKeyService {
  const cache = createAccountCache<CachedGrant>({ ttlMs: cacheMs, maxEntries: 10_000 });
  // Key id → the latest use not yet written (epoch ms, made ISO text only when written). One
  // Map entry per key in use, whatever the traffic.
  let pending = new Map<string, number>();
  let flushing: Promise<void> | undefined;
  const timer = setInterval(() => void flushUses(), useFlushMs);
  timer.unref();

  async function flushUses(): Promise<void> {
    while (flushing !== undefined) await flushing;
    if (pending.size === 0) return;
    const taken = pending;
    pending = new Map();
    const uses = [...taken].map(([id, at]) => ({ id, lastUsed: new Date(at).toISOString() }));
    flushing = store.recordApiKeyUses(uses).catch((error: unknown) => {
      // Kept for the next write, unless a later use of the same key came in meanwhile.
      for (const [id, at] of taken) if (!pending.has(id)) pending.set(id, at);
      onFlushError(error);
    }).finally(() => (flushing = undefined));
    await flushing;
  }

  function evictKey(id: string): void {
    // Entries are keyed by digest; a scan of at most 10,000 for a rare deletion.
    cache.evictWhere((grant) => grant.credential.id === id);
  }

  return {
    async create(account, input) {
      const name = parseName(input.name);
      const scopes = parseScopes(input.scopes);
      assertActive(account);
      const key = newApiKey();
      const result = await store.createApiKey({
        id: `key_${randomBytes(12).toString('hex')}`,
        accountUid: account.uid,
        name,
        scopes,
        keyHash: hashApiKey(key),
        dateCreated: clock().toISOString(),
      }, MAX_API_KEYS);
      if (result === undefined) throw new DomainError(ErrorCode.Unauthenticated, 'the access code is not valid');
      if (result === 'cap_reached') {
        throw new DomainError(ErrorCode.ApiKeyCapReached, `the account already holds its maximum of ${MAX_API_KEYS} API keys`);
      }
      return { ...result, key };
    },

    async list(account) {
      assertActive(account);
      await flushUses();
      return store.listApiKeys(account.uid);
    },

    async remove(account, id) {
      if (id === undefined || id === '') throw invalid('the parameter "id" is required');
      assertActive(account);
      const deleted = await store.deleteApiKey(account.uid, id);
      evictKey(id);
      pending.delete(id);
      if (!deleted) throw new DomainError(ErrorCode.ApiKeyNotFound, 'no API key of this account has this id');
    },

    async authenticate(key) {
      if (!API_KEY_PATTERN.test(key)) throw notValid();
      const keyHash = hashApiKey(key);
      let grant = cache.get(keyHash);
      if (grant === undefined) {
        const found = await store.findApiKeyByHash(keyHash);
        if (found === undefined) {
          cache.evict(keyHash);
          throw notValid();
        }
        grant = { ...found.account, credential: { id: found.key.id, scopes: found.key.scopes } };
        cache.set(keyHash, grant);
      }
      pending.set(grant.credential.id, clock().getTime());
      // The cached record serves as the account (its extra `credential` field is harmless).
      return { account: grant, credential: grant.credential };
    },

    forget(uid) {
      cache.evictAccount(uid);
    },

    flushUses,

    async close() {
      clearInterval(timer);
      await flushUses();
    },
  };
}
