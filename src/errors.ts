/**
 * Domain errors. They carry a stable code and a human reason; which HTTP status and text
 * they become is decided in one place, `http/error-table.ts`.
 */

export const ErrorCode = {
  /** A parameter is missing, malformed or out of bounds. */
  InvalidParameter: 'invalid_parameter',
  /** A parameter was given more than once. */
  DuplicateParameter: 'duplicate_parameter',
  /** Two different access codes in one request, or two Authorization headers. */
  ConflictingCredentials: 'conflicting_credentials',
  /** No access code, or one that is malformed, unknown or sent with a foreign scheme. */
  Unauthenticated: 'unauthenticated',
  /** The account already holds MaxLinks links. */
  LinkCapReached: 'link_cap_reached',
  /** REGISTRATION=closed: accounts are made by operators only. */
  RegistrationClosed: 'registration_closed',
  /** No account has this uid (administration). */
  AccountNotFound: 'account_not_found',
  /** The link exists but belongs to another account. */
  NotOwner: 'not_owner',
  /** The link exists but no longer resolves: expired, at its visit limit, or disabled. */
  LinkGone: 'link_gone',
  /** The caller's account has been disabled by an administrator. */
  AccountDisabled: 'account_disabled',
  /** No webhook has this id. */
  WebhookNotFound: 'webhook_not_found',
  /** The account already holds the most webhooks it may (5). */
  WebhookCapReached: 'webhook_cap_reached',
  /** The account already holds the most API keys it may (20). */
  ApiKeyCapReached: 'api_key_cap_reached',
  /** No API key of the account has this id. */
  ApiKeyNotFound: 'api_key_not_found',
  /** The request's API key has no scope for this operation, or the operation takes the access code only. */
  KeyNotAllowed: 'key_not_allowed',
  /** No registered domain has this host (administration). */
  DomainNotFound: 'domain_not_found',
  /** The domain cannot be removed while links use it. */
  DomainInUse: 'domain_in_use',
  /** No live link has this shortcode. */
  LinkNotFound: 'link_not_found',
  /** The chosen shortcode is held by another link. */
  ShortcodeTaken: 'shortcode_taken',
  /** The method is not served on this path (HEAD on the creating endpoints). */
  MethodNotAllowed: 'method_not_allowed',
  /** The database cannot be reached or cannot write. */
  StorageUnavailable: 'storage_unavailable',
  /** Too many requests from this client. */
  RateLimited: 'rate_limited',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class DomainError extends Error {
  readonly code: ErrorCode;
  /** Seconds the client should wait, for rate limits and storage outages. */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, reason: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.retryAfter = options.retryAfter;
  }
}

export function invalid(reason: string): DomainError {
  return new DomainError(ErrorCode.InvalidParameter, reason);
}
