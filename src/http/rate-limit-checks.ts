import type { FastifyRequest } from 'fastify';
import type { RateLimitPolicies, RateLimitPolicy } from '../config.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import { clientAddress } from './client-address.ts';
import { canonicalAddress, createClientKey } from '../rate-limit/client-key.ts';
import type { Counters } from '../rate-limit/counters.ts';

/**
 * The abuse controls of the HTTP layer. Each check throws RateLimited (429 with
 * Retry-After) when its window is used up; when rate limiting is off, or the client address is
 * exempt, every check returns at once without touching the counters.
 */
export interface RateLimitChecks {
  /** False when rate limiting is off or the client is exempt: callers on hot paths skip the checks. */
  applies(request: FastifyRequest): boolean;
  newAccount(request: FastifyRequest): Promise<void>;
  /** Refuses a client that has failed authentication too often, before trying its code. */
  beforeAuthentication(request: FastifyRequest): Promise<void>;
  failedAuthentication(request: FastifyRequest): Promise<void>;
  createLink(request: FastifyRequest, accountUid: number): Promise<void>;
  /** Counts a resolution, and refuses a client that has probed too many unknown codes. */
  resolve(request: FastifyRequest): Promise<void>;
  unknownCode(request: FastifyRequest): Promise<void>;
  /** Counts a webhook registration attempt of the account, before its target is resolved. */
  createWebhook(request: FastifyRequest, accountUid: number): Promise<void>;
  /**
   * Refuses a client that has guessed this link's password wrong too often, before its
   * password is tried (counts nothing): past the limit every attempt, right or wrong, is
   * refused (CONTRACT §8.3). `linkKey` names the link (domain and shortcode).
   */
  passwordGuess(request: FastifyRequest, linkKey: string): Promise<void>;
  /** Records one wrong password for this link from this client. */
  wrongPassword(request: FastifyRequest, linkKey: string): Promise<void>;
}

export interface RateLimitOptions {
  readonly enabled: boolean;
  readonly policies: RateLimitPolicies;
  readonly exempt: readonly string[];
  /** IPv6 clients are counted per network of this many bits (RATE_LIMIT_IPV6_PREFIX). */
  readonly ipv6Prefix: number;
  /** Where the windows are counted; required when enabled. */
  readonly counters: Counters | undefined;
}

const NONE: RateLimitChecks = {
  applies: () => false,
  newAccount: async () => {},
  beforeAuthentication: async () => {},
  failedAuthentication: async () => {},
  createLink: async () => {},
  resolve: async () => {},
  unknownCode: async () => {},
  createWebhook: async () => {},
  passwordGuess: async () => {},
  wrongPassword: async () => {},
};

/**
 * The counter of one client's wrong guesses at one link. The link key comes first with its
 * length, so no pair of link key and client can spell another pair's key.
 */
function passwordKey(client: string, linkKey: string): string {
  return `pass:${linkKey.length}:${linkKey}:${client}`;
}

function limited(resetMs: number): DomainError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new DomainError(ErrorCode.RateLimited, `too many requests; try again in ${seconds} s`, { retryAfter: seconds });
}

export function createRateLimitChecks({ enabled, policies, exempt, ipv6Prefix, counters: maybeCounters }: RateLimitOptions): RateLimitChecks {
  if (!enabled || maybeCounters === undefined) return NONE;
  const counters = maybeCounters;
  // Compared in one spelling: `::ffff:127.0.0.1` and `127.0.0.1` are the same client.
  const exemptSet = new Set(exempt.map(canonicalAddress));
  const keyOf = createClientKey(ipv6Prefix);
  /** The key a client's limits are counted under. */
  const clientOf = (request: FastifyRequest): string => keyOf(clientAddress(request));
  const isExempt = exemptSet.size === 0 ? () => false : (request: FastifyRequest) => exemptSet.has(canonicalAddress(clientAddress(request)));

  async function count(key: string, policy: RateLimitPolicy): Promise<void> {
    const state = await counters.hit(key, policy.windowMs);
    if (state.count > policy.limit) throw limited(state.resetMs);
  }
  async function refuseIfSpent(key: string, policy: RateLimitPolicy): Promise<void> {
    const state = await counters.peek(key);
    if (state.count >= policy.limit) throw limited(state.resetMs);
  }

  return {
    applies: (request) => !isExempt(request),
    async newAccount(request) {
      if (!isExempt(request)) await count(`acct:${clientOf(request)}`, policies.newAccount);
    },
    async beforeAuthentication(request) {
      if (!isExempt(request)) await refuseIfSpent(`auth:${clientOf(request)}`, policies.failedAuth);
    },
    async failedAuthentication(request) {
      if (!isExempt(request)) await count(`auth:${clientOf(request)}`, policies.failedAuth);
    },
    async createLink(request, accountUid) {
      if (!isExempt(request)) await count(`link:${accountUid}`, policies.createLink);
    },
    async resolve(request) {
      if (isExempt(request)) return;
      const client = clientOf(request);
      await refuseIfSpent(`miss:${client}`, policies.unknownCode);
      await count(`get:${client}`, policies.resolve);
    },
    async unknownCode(request) {
      if (!isExempt(request)) await count(`miss:${clientOf(request)}`, policies.unknownCode);
    },
    async createWebhook(request, accountUid) {
      if (!isExempt(request)) await count(`hook:${accountUid}`, policies.createWebhook);
    },
    async passwordGuess(request, linkKey) {
      if (!isExempt(request)) await refuseIfSpent(passwordKey(clientOf(request), linkKey), policies.password);
    },
    async wrongPassword(request, linkKey) {
      // Recorded, never refused here: the guess was already allowed by passwordGuess, and its
      // answer is the 401; the next attempt meets the limit.
      if (!isExempt(request)) await counters.hit(passwordKey(clientOf(request), linkKey), policies.password.windowMs);
    },
  };
}
