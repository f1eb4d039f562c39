import { DomainError, ErrorCode } from '../errors.ts';

/** What an error becomes on the wire; the body is always `Unable to <operation>: <reason>`. */
export interface ErrorReply {
  readonly status: number;
  readonly reason: string;
  readonly retryAfter?: number;
}

/** The single table from domain error code to HTTP status. */
const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.InvalidParameter]: 400,
  [ErrorCode.DuplicateParameter]: 400,
  [ErrorCode.ConflictingCredentials]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.LinkCapReached]: 403,
  [ErrorCode.NotOwner]: 403,
  [ErrorCode.RegistrationClosed]: 403,
  [ErrorCode.AccountNotFound]: 404,
  [ErrorCode.LinkNotFound]: 404,
  [ErrorCode.WebhookNotFound]: 404,
  [ErrorCode.WebhookCapReached]: 403,
  [ErrorCode.ApiKeyCapReached]: 403,
  [ErrorCode.ApiKeyNotFound]: 404,
  [ErrorCode.KeyNotAllowed]: 403,
  [ErrorCode.LinkGone]: 410,
  [ErrorCode.AccountDisabled]: 403,
  [ErrorCode.MethodNotAllowed]: 405,
  [ErrorCode.ShortcodeTaken]: 409,
  [ErrorCode.DomainNotFound]: 404,
  [ErrorCode.DomainInUse]: 409,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.StorageUnavailable]: 503,
};

/**
 * Fastify's own 4xx errors (body parsing, content type), reworded. Their default messages
 * are fine for developers but name internals; these say what the client should change.
 */
const FRAMEWORK_REASONS: Readonly<Record<string, ErrorReply>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, reason: 'the request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, reason: 'the body must be JSON or a URL-encoded form' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, reason: 'the Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, reason: 'the JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, reason: 'the body is not valid JSON' },
  FST_ERR_CTP_INVALID_TYPE: { status: 415, reason: 'the content type is not valid' },
  FST_ERR_BAD_URL: { status: 400, reason: 'the request path is not valid' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, reason: 'the request could not be routed' },
  FST_ERR_HANDLER_TIMEOUT: { status: 503, reason: 'the request took too long', retryAfter: 1 },
};

interface ErrorLike {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  message?: unknown;
}

/** Decides status and reason for any error thrown while handling a request. */
export function describeError(error: unknown): ErrorReply {
  if (error instanceof DomainError) {
    const status = STATUS_BY_CODE[error.code];
    return error.retryAfter === undefined
      ? { status, reason: error.message }
      : { status, reason: error.message, retryAfter: error.retryAfter };
  }
  const e = (typeof error === 'object' && error !== null ? error : {}) as ErrorLike;
  if (typeof e.code === 'string') {
    const known = FRAMEWORK_REASONS[e.code];
    if (known !== undefined) return known;
  }
  if (error instanceof SyntaxError && e.statusCode === 400) {
    return { status: 400, reason: 'the body is not valid JSON' };
  }
  if (e.validation !== undefined && typeof e.message === 'string') {
    return { status: 400, reason: oneLine(e.message) };
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, reason: 'the request is not valid' };
  }
  return { status: 500, reason: 'an unexpected error occurred' };
}

/** Keeps an error body to one line whatever the message held. */
export function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
