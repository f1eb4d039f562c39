import { Type, type Static } from 'typebox';
import { SHORTCODE_MAX, SHORTCODE_MIN, SHORTCODE_PATTERN } from '../links/shortcode.ts';
import { URL_MAX } from '../links/target-url.ts';

/**
 * Route schemas: the one source of the OpenAPI document (`/openapi.json`). Response schemas
 * also drive serialisation (fast, and fixing the key order the contract requires); request
 * schemas only document the parameters. Requests are checked by the domain, not by these
 * schemas: see docs/adr/0003-validation-in-the-domain.md.
 */

export const LinkSchema = Type.Object(
  {
    ShortCode: Type.String({ description: 'The shortcode, without the base URL' }),
    PointsTo: Type.String({ description: 'The target URL, exactly as given' }),
    CreatedBy: Type.Integer({ description: 'Uid of the account that created the link' }),
    Accesses: Type.Integer({ description: 'Resolutions so far, this one included' }),
  },
  { $id: 'Link', description: 'A short link' },
);

/** A link on the wire (`GET /v1/get/{shortcode}`, `GET /v1/links`): the server's, the client's and the tests' type. */
export type Link = Static<typeof LinkSchema>;

export const AccountSchema = Type.Object(
  {
    Uid: Type.Integer({ description: 'Unique, increasing account number' }),
    AccessCode: Type.String({ description: 'The account\'s only credential (v4 UUID, lower case)' }),
    DateCreated: Type.String({ description: 'ISO 8601 creation time, e.g. 2026-11-22T04:12:49.123Z' }),
    MaxLinks: Type.Integer({ description: 'How many links the account may hold at once' }),
  },
  { $id: 'Account', description: 'An account' },
);

/** An account on the wire (`/v1/new_account`, `/v1/get_account`), its access code included. */
export type Account = Static<typeof AccountSchema>;

export const ShortcodeParams = Type.Object({
  code: Type.String({ description: 'The shortcode (case-sensitive)', minLength: 1, maxLength: SHORTCODE_MAX }),
});

const AUTH = Type.Optional(Type.String({ description: 'Access code (or use the Authorization header)' }));

export const AuthQuery = Type.Object({ auth: AUTH });

const URL_PARAMETER = Type.String({
  minLength: 1,
  maxLength: URL_MAX,
  description:
    'Absolute http(s) target URL with a host, no whitespace, control characters or credentials, not pointing at this ' +
    'service; stored exactly as given',
});
const SHORT_PARAMETER = Type.String({
  minLength: SHORTCODE_MIN,
  maxLength: SHORTCODE_MAX,
  pattern: SHORTCODE_PATTERN,
  description: 'Custom shortcode (case-sensitive, not a reserved name); empty or omitted: 6 random letters and digits',
});

export const CreateLinkQuery = Type.Object({
  url: Type.Optional(URL_PARAMETER),
  short: Type.Optional(SHORT_PARAMETER),
  auth: AUTH,
});

/** `POST /v1/link`'s body; each parameter may come from the query or the body, not both. */
export const CreateLinkBody = Type.Object({ url: Type.Optional(URL_PARAMETER), short: Type.Optional(SHORT_PARAMETER) });

export const DeleteLinkQuery = Type.Object({
  short: Type.Optional(Type.String({ description: 'Shortcode of the link to delete (required)' })),
  auth: AUTH,
});

/** Names of the security schemes in the OpenAPI document (components.securitySchemes). */
export const SecurityScheme = {
  Query: 'accessCodeQuery',
  Bearer: 'bearerAccessCode',
  Header: 'accessCodeHeader',
  Metrics: 'metricsToken',
} as const;

/** Any one of the three ways of sending an access code (contract §3). */
export const ACCESS_CODE_SECURITY: readonly Readonly<Record<string, readonly string[]>>[] = [
  { [SecurityScheme.Query]: [] },
  { [SecurityScheme.Bearer]: [] },
  { [SecurityScheme.Header]: [] },
];

const TEXT_MEDIA = 'text/plain';

/** A plain-text answer (its body schema is a string; serialisation never touches it). */
export function textResponse(description: string, example?: string) {
  return {
    description,
    content: { [TEXT_MEDIA]: { schema: { type: 'string', ...(example === undefined ? {} : { examples: [example] }) } } },
  };
}

/** When each error status happens, as in the Errors table of docs/api.md. */
const ERROR_WHEN: Readonly<Record<number, { when: string; reason: string }>> = {
  400: { when: 'Missing or invalid parameter, a parameter given twice, two different access codes or two Authorization headers', reason: 'the parameter "url" is required' },
  401: { when: 'No valid access code (missing, malformed, unknown, or sent with a scheme other than Bearer)', reason: 'the access code is not valid' },
  403: { when: 'Link cap reached, or the link belongs to another account', reason: 'the account already holds its maximum of 20 links' },
  404: { when: 'No such shortcode', reason: 'no link has this shortcode' },
  405: { when: 'HEAD on an endpoint that creates things', reason: 'HEAD is not allowed here; use GET, POST' },
  409: { when: 'The chosen shortcode is already taken', reason: 'the shortcode "my-link" is already taken' },
  413: { when: 'Request body over 64 KiB', reason: 'the request body is too large' },
  415: { when: 'A body that is neither JSON nor a URL-encoded form', reason: 'the body must be JSON or a URL-encoded form' },
  429: { when: 'Rate limited; retry after Retry-After seconds', reason: 'too many requests; try again in 30 s' },
  500: { when: 'Unexpected failure (logged with detail, answered without)', reason: 'an unexpected error occurred' },
  503: { when: 'Storage unavailable; retry after Retry-After seconds', reason: 'storage unavailable' },
};

const ERROR_HEADERS: Readonly<Record<number, Record<string, { type: string; description: string }>>> = {
  401: { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="shortlink"' } },
  405: { Allow: { type: 'string', description: 'The methods this path serves' } },
  429: { 'Retry-After': { type: 'string', description: 'Seconds to wait before trying again' } },
  503: { 'Retry-After': { type: 'string', description: 'Seconds to wait before trying again' } },
};

/**
 * The error answers of one operation: `text/plain; charset=utf-8`, one line,
 * `Unable to <operation>: <reason>`. Statuses every route can answer (500) are added here.
 */
export function errorResponses(operation: string, statuses: readonly number[]) {
  const responses: Record<string, unknown> = {};
  for (const status of [...statuses, 500]) {
    const { when, reason } = ERROR_WHEN[status]!;
    const headers = ERROR_HEADERS[status];
    responses[status] = { ...textResponse(when, `Unable to ${operation}: ${reason}`), ...(headers === undefined ? {} : { headers }) };
  }
  return responses;
}
