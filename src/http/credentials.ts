import type { IncomingMessage } from 'node:http';
import { DomainError, ErrorCode } from '../errors.ts';

/**
 * Finds the access code a request carries, from `auth=` in the query or the Authorization
 * header (`Bearer <code>` or the bare code). Returns undefined when there is none.
 * Throws ConflictingCredentials for two different codes or two Authorization headers, and
 * Unauthenticated for a foreign scheme such as `Basic`, even around a valid code.
 */
export function extractAccessCode(query: unknown, raw: IncomingMessage): string | undefined {
  const fromQuery = queryCode(query);
  const fromHeader = headerCode(raw);
  // Access codes compare case-insensitively, API keys (`slk_…`) exactly.
  if (fromQuery !== undefined && fromHeader !== undefined && fromQuery !== fromHeader &&
      (fromQuery.startsWith('slk_') || fromHeader.startsWith('slk_') || fromQuery.toLowerCase() !== fromHeader.toLowerCase())) {
    throw new DomainError(
      ErrorCode.ConflictingCredentials,
      'the request carries two different access codes (auth parameter and Authorization header)',
    );
  }
  return fromHeader ?? fromQuery;
}

function queryCode(query: unknown): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.auth;
  if (Array.isArray(value)) {
    throw new DomainError(ErrorCode.DuplicateParameter, 'the parameter "auth" was given more than once');
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function headerCode(raw: IncomingMessage): string | undefined {
  const header = raw.headers.authorization;
  if (header === undefined) return undefined;
  // Node keeps only the first of repeated Authorization headers; count them in the raw list.
  let seen = 0;
  const list = raw.rawHeaders;
  for (let i = 0; i < list.length; i += 2) {
    if (list[i]!.length === 13 && list[i]!.toLowerCase() === 'authorization') seen++;
  }
  if (seen > 1) {
    throw new DomainError(ErrorCode.ConflictingCredentials, 'the request carries more than one Authorization header');
  }
  const value = header.trim();
  if (value === '') return undefined;
  const space = value.indexOf(' ');
  if (space === -1) return value;
  if (value.slice(0, space).toLowerCase() !== 'bearer') {
    throw new DomainError(ErrorCode.Unauthenticated, 'the Authorization header must use the Bearer scheme');
  }
  const code = value.slice(space + 1).trim();
  if (code === '') throw new DomainError(ErrorCode.Unauthenticated, 'the Authorization header carries no access code');
  return code;
}
