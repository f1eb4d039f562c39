import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account, AccountService } from '../accounts/account-service.ts';
import { looksLikeApiKey, type ApiKeyCredential, type ApiKeyService } from '../accounts/api-keys.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { CountedEvent } from '../metrics/metrics.ts';
import { extractAccessCode } from './credentials.ts';
import { keyNotAllowed, scopeOf } from './key-scopes.ts';
import type { RateLimitChecks } from './rate-limit-checks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account, set by the `authenticate` hook on protected routes. */
    account: Account | null;
    /** The API key that authenticated the request, or null (an access code, or no credential). */
    apiKey: ApiKeyCredential | null;
  }
  interface FastifyContextConfig {
    /** Names the operation in `Unable to <operation>: …` error bodies. */
    operation?: string;
    /** What a successful (non-HEAD, below 400) answer of this route achieved, for metrics. */
    countedEvent?: CountedEvent;
    /** Log the request line at debug rather than info (probes and scrapes, every few seconds). */
    quietLog?: boolean;
  }
}

export type Authenticate = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The onRequest hook of protected routes. It runs before the body is read, so a request
 * without a valid access code or API key is refused (401) before any parameter is looked at.
 * A key is then checked against the scope its route needs (key-scopes.ts): 403 right after
 * authentication, before the rest of the usual order. `fresh` bypasses the account cache, for
 * routes whose answer is the account itself (none of which a key may call).
 */
export function createAuthenticate(
  accounts: AccountService, rateLimits: RateLimitChecks, options: { fresh?: boolean; apiKeys?: ApiKeyService } = {},
): Authenticate {
  const { apiKeys } = options;
  return async (request) => {
    const limited = rateLimits.applies(request);
    if (limited) await rateLimits.beforeAuthentication(request);
    try {
      const credential = extractAccessCode(request.query, request.raw);
      if (apiKeys !== undefined && credential !== undefined && looksLikeApiKey(credential)) {
        const { account, credential: key } = await apiKeys.authenticate(credential);
        // No access code is known; the routes that would use it (the account's own) refuse keys below.
        request.account = { ...account, accessCode: '' };
        request.apiKey = key;
      } else {
        request.account = await accounts.authenticate(credential, options);
      }
    } catch (error) {
      if (limited && error instanceof DomainError && error.code === ErrorCode.Unauthenticated) {
        await rateLimits.failedAuthentication(request);
      }
      throw error;
    }
    if (request.apiKey !== null) {
      const scope = scopeOf(request.method, request.routeOptions.url);
      if (scope === undefined || !request.apiKey.scopes.includes(scope)) throw keyNotAllowed();
    }
  };
}

/** The authenticated account of a protected route's request. */
export function accountOf(request: FastifyRequest): Account {
  if (request.account === null) throw new Error('protected route registered without the authenticate hook');
  return request.account;
}

/** A handler answering 405 with an Allow header. */
export function methodNotAllowed(allow: string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<never> => {
    reply.header('allow', allow);
    throw new DomainError(ErrorCode.MethodNotAllowed, `${request.method} is not allowed here; use ${allow}`);
  };
}
