import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account, AccountService } from '../accounts/account-service.ts';
import { DomainError, ErrorCode } from '../errors.ts';
import type { CountedEvent } from '../metrics/metrics.ts';
import { extractAccessCode } from './credentials.ts';
import type { RateLimitChecks } from './rate-limit-checks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account, set by the `authenticate` hook on protected routes. */
    account: Account | null;
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
 * without a valid access code is refused (401) before any parameter is looked at. `fresh`
 * bypasses the account cache, for routes whose answer is the account itself.
 */
export function createAuthenticate(accounts: AccountService, rateLimits: RateLimitChecks, options: { fresh?: boolean } = {}): Authenticate {
  return async (request) => {
    const limited = rateLimits.applies(request);
    if (limited) await rateLimits.beforeAuthentication(request);
    try {
      request.account = await accounts.authenticate(extractAccessCode(request.query, request.raw), options);
    } catch (error) {
      if (limited && error instanceof DomainError && error.code === ErrorCode.Unauthenticated) {
        await rateLimits.failedAuthentication(request);
      }
      throw error;
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
