import { Type, type Static } from 'typebox';
import { LOOKUP_MIN, SHORTCODE_MAX, SHORTCODE_MIN, SHORTCODE_PATTERN } from '../links/shortcode.ts';
import { URL_MAX } from '../links/target-url.ts';
import { LinkDetailsSchema } from '../links/link-details-schema.ts';
import { LIST_LIMIT_MAX, MAX_VISITS_MAX, TAG_MAX, TAGS_MAX, TITLE_MAX } from '../links/link-details.ts';

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

/** LinkDetails lives beside the link rules, so events and webhooks share it without HTTP. */
export { LinkDetailsSchema, type LinkDetails } from '../links/link-details-schema.ts';

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

export const AdminAccountSchema = Type.Object(
  {
    Uid: Type.Integer({ description: 'Account number' }),
    DateCreated: Type.String({ description: 'ISO 8601 creation time' }),
    MaxLinks: Type.Integer({ description: 'How many links the account may hold at once' }),
    Links: Type.Integer({ description: 'How many links it holds now' }),
    Disabled: Type.Boolean({ description: 'True when its calls answer 403 and its links 410' }),
  },
  { $id: 'AdminAccount', description: 'An account as an administrator sees it (never its access code)' },
);

/** An account on the wire of `/v1/admin/accounts` and `/v1/admin/account`. */
export type AdminAccount = Static<typeof AdminAccountSchema>;

export const AdminAccountsQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Accounts per page, 1 to 1000 (default 100)' })),
  cursor: Type.Optional(Type.String({ description: 'Opaque: from the previous page\'s Link header' })),
});

export const AdminAccountUpdate = Type.Object({
  uid: Type.Optional(Type.String({ description: 'Uid of the account (required)' })),
  max_links: Type.Optional(Type.String({ description: 'New MaxLinks, 0 to 1000000000, not below the links it holds' })),
  disabled: Type.Optional(Type.String({ enum: ['true', 'false'], description: 'true disables the account, false enables it' })),
});

export const AdminLinksQuery = Type.Object({
  host: Type.Optional(Type.String({ description: 'Targets on this host or its subdomains (e.g. example.com)' })),
  q: Type.Optional(Type.String({ description: 'Case-insensitive text in the shortcode, target or title' })),
  limit: Type.Optional(Type.String({ description: 'Links per page, 1 to 1000 (default 100)' })),
  cursor: Type.Optional(Type.String({ description: 'Opaque: from the previous page\'s Link header' })),
});


export const ShortcodeParams = Type.Object({
  code: Type.String({
    description:
      'The shortcode (case-sensitive): 1-2000 unreserved characters, since links imported from other shorteners keep ' +
      'their codes, however short; codes chosen through the API have 5 or more',
    minLength: LOOKUP_MIN,
    maxLength: SHORTCODE_MAX,
  }),
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
// Empty counts as omitted, so the schema admits it beside 5 or more allowed characters.
const SHORT_PARAMETER = Type.String({
  maxLength: SHORTCODE_MAX,
  pattern: `^(?:${SHORTCODE_PATTERN.slice(1, -2)}{${SHORTCODE_MIN},})?$`,
  description:
    `Custom shortcode, ${SHORTCODE_MIN}–${SHORTCODE_MAX} of A–Z a–z 0–9 - . _ ~ (case-sensitive, not a reserved name); ` +
    'empty or omitted: 6 random letters and digits',
});

const TITLE_DESCRIPTION = `Title: at most ${TITLE_MAX} characters, no control characters`;
const TITLE_PARAMETER = Type.String({ maxLength: TITLE_MAX, description: TITLE_DESCRIPTION });
const TAGS_DESCRIPTION =
  `Tags, comma-separated (or a JSON array in a JSON body): at most ${TAGS_MAX}, each 1-${TAG_MAX} characters from ` +
  'A-Z a-z 0-9 - _ . ; stored lower case';
const TAGS_PARAMETER = Type.String({ description: TAGS_DESCRIPTION });
const EXPIRES_DESCRIPTION = 'When the link stops resolving: RFC 3339 with Z or a numeric offset, in the future';
const EXPIRES_PARAMETER = Type.String({ format: 'date-time', description: EXPIRES_DESCRIPTION });
const MAX_VISITS_DESCRIPTION = `How many resolutions the link allows in all (1 to ${MAX_VISITS_MAX})`;
const MAX_VISITS_PARAMETER = Type.String({ pattern: '^[0-9]+$', description: MAX_VISITS_DESCRIPTION });
/** `domain`: which domain a link is on (CONTRACT §8.1). */
export const DOMAIN_PARAMETER = Type.String({
  description: 'Host of a registered domain (see GET /v1/domains); omitted, empty or the default host: the default domain',
});
const FORWARD_QUERY_DESCRIPTION =
  'true: a redirect appends the visitor\'s query string to the target\'s (joined with & when the target has one, the ' +
  'target\'s fragment kept last); false: it does not. Omitted on create: FORWARD_QUERY (default false)';
const RULES_DESCRIPTION =
  'Redirect rules, first match wins: a JSON array of at most 10 {"if": {…}, "to": "<url>"} (JSON text in a query or form). ' +
  'Conditions, all of which must hold: device (desktop, mobile, tablet), os (android, ios, windows, macos, linux), ' +
  'country (ISO 3166 alpha-2), language (primary subtags, against every language of Accept-Language with q above 0), ' +
  'query (name → value or list of values); each other value one string or a list. Empty clears them';
const PASSWORD_DESCRIPTION =
  'Password (8-200 characters) a visitor must give; stored only as a salted scrypt hash and never shown. Empty: none ' +
  '(on edit, removes it)';
const ROUTING_PARAMETERS = {
  domain: Type.Optional(DOMAIN_PARAMETER),
  forward_query: Type.Optional(Type.String({ enum: ['true', 'false', ''], description: FORWARD_QUERY_DESCRIPTION })),
  rules: Type.Optional(Type.String({ description: RULES_DESCRIPTION })),
  password: Type.Optional(Type.String({ description: PASSWORD_DESCRIPTION })),
};
const ROUTING_BODY_PARAMETERS = {
  domain: Type.Optional(DOMAIN_PARAMETER),
  forward_query: Type.Optional(Type.Union([Type.String({ enum: ['true', 'false', ''] }), Type.Boolean()], { description: FORWARD_QUERY_DESCRIPTION })),
  rules: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))], { description: RULES_DESCRIPTION })),
  password: Type.Optional(Type.String({ description: PASSWORD_DESCRIPTION })),
};
export const AdminTakeDownQuery = Type.Object({
  short: Type.Optional(Type.String({ description: 'Shortcode of the link to take down (required)' })),
  domain: Type.Optional(DOMAIN_PARAMETER),
});

/** `GET /v1/get/{code}`'s query: the domain and, for a protected link, its password. */
export const ResolveQuery = Type.Object({
  domain: Type.Optional(DOMAIN_PARAMETER),
  password: Type.Optional(Type.String({ description: 'The password of a protected link (or in a form or JSON body)' })),
});

const DETAIL_PARAMETERS = {
  title: Type.Optional(TITLE_PARAMETER),
  tags: Type.Optional(TAGS_PARAMETER),
  expires: Type.Optional(EXPIRES_PARAMETER),
  max_visits: Type.Optional(MAX_VISITS_PARAMETER),
  ...ROUTING_PARAMETERS,
};
const DETAIL_BODY_PARAMETERS = {
  title: Type.Optional(TITLE_PARAMETER),
  tags: Type.Optional(Type.Union([TAGS_PARAMETER, Type.Array(Type.String())], { description: TAGS_DESCRIPTION })),
  expires: Type.Optional(EXPIRES_PARAMETER),
  max_visits: Type.Optional(Type.Union([MAX_VISITS_PARAMETER, Type.Integer({ minimum: 1, maximum: MAX_VISITS_MAX })])),
  ...ROUTING_BODY_PARAMETERS,
};

/** `GET /v1/link`: everything in the query, so `url` is required there. */
export const CreateLinkQuery = Type.Object({
  url: URL_PARAMETER,
  short: Type.Optional(SHORT_PARAMETER),
  ...DETAIL_PARAMETERS,
  auth: AUTH,
});

/** `POST /v1/link`'s query: `url` may come from here or from the body (not both). */
export const CreateLinkPostQuery = Type.Object({
  url: Type.Optional(URL_PARAMETER),
  short: Type.Optional(SHORT_PARAMETER),
  ...DETAIL_PARAMETERS,
  auth: AUTH,
});

/** `POST /v1/link`'s body; each parameter may come from the query or the body, not both. */
export const CreateLinkBody = Type.Object({
  url: Type.Optional(URL_PARAMETER),
  short: Type.Optional(SHORT_PARAMETER),
  ...DETAIL_BODY_PARAMETERS,
});

/** `POST /v1/links`: the single create's body parameters, for each of 1 to 100 links. */
export const BulkCreateBody = Type.Array(
  Type.Object({ url: URL_PARAMETER, short: Type.Optional(SHORT_PARAMETER), ...DETAIL_BODY_PARAMETERS }),
  { minItems: 1, maxItems: 100, description: '1 to 100 links, each with the parameters of a single create' },
);

export const BulkCreatedSchema = Type.Object(
  { ShortUrl: Type.String({ description: 'The short URL: BASE_URL/ShortCode' }) },
  { $id: 'BulkCreated', description: 'A bulk create item that was created' },
);

export const BulkRefusedSchema = Type.Object(
  {
    Status: Type.Integer({ description: 'The status a single create would have answered' }),
    Error: Type.String({ description: 'The text a single create would have answered: Unable to create link: …' }),
  },
  { $id: 'BulkRefused', description: 'A bulk create item that was not created' },
);

/** One item's outcome on the wire (`POST /v1/links`). */
export type BulkCreateResult = Static<typeof BulkCreatedSchema> | Static<typeof BulkRefusedSchema>;

const EDIT_NOTE = ' On edit, an empty value clears it.';
const SHORT_TO_EDIT = Type.String({ description: 'Shortcode of the link to edit (required)' });

export const UpdateLinkQuery = Type.Object({
  short: Type.Optional(SHORT_TO_EDIT),
  url: Type.Optional(Type.String({ maxLength: URL_MAX, description: 'New target, checked as on create; not empty' })),
  title: Type.Optional(Type.String({ maxLength: TITLE_MAX, description: TITLE_DESCRIPTION + '.' + EDIT_NOTE })),
  tags: Type.Optional(Type.String({ description: TAGS_DESCRIPTION + '.' + EDIT_NOTE + ' Replaces the tags.' })),
  expires: Type.Optional(Type.String({ description: EXPIRES_DESCRIPTION + '.' + EDIT_NOTE })),
  max_visits: Type.Optional(Type.String({ description: MAX_VISITS_DESCRIPTION + '.' + EDIT_NOTE })),
  ...ROUTING_PARAMETERS,
  auth: AUTH,
});

/** `PATCH /v1/link`'s body (JSON or form); as for create, each parameter in one place only. */
export const UpdateLinkBody = Type.Object({
  short: Type.Optional(SHORT_TO_EDIT),
  url: Type.Optional(URL_PARAMETER),
  ...DETAIL_BODY_PARAMETERS,
});

export const ListLinksQuery = Type.Object({
  q: Type.Optional(Type.String({ description: 'Only links whose shortcode, target or title contains this text (case-insensitive)' })),
  tag: Type.Optional(Type.String({ description: 'Only links carrying all these tags (comma-separated)' })),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: `At most this many links (1 to ${LIST_LIMIT_MAX}); all when omitted` })),
  order: Type.Optional(Type.Union([Type.Literal('oldest'), Type.Literal('newest'), Type.Literal('visits')], {
    description: 'oldest first (the default), newest first, or most visits first (ties newest first); a cursor keeps its order',
  })),
  cursor: Type.Optional(Type.String({ description: 'Where the page starts: the cursor of the previous answer\'s Link rel="next" header' })),
  format: Type.Optional(Type.String({
    description: 'csv: the links as CSV, the columns of `shortlink export` (as `Accept: text/csv` does); json (default)',
  })),
  domain: Type.Optional(Type.String({ description: 'Only the links of this domain (a registered host, or the default host); every domain when omitted' })),
  auth: AUTH,
});

export const DeleteLinkQuery = Type.Object({
  short: Type.Optional(Type.String({ description: 'Shortcode of the link to delete (required; imported links may have codes of 1-4 characters)' })),
  domain: Type.Optional(DOMAIN_PARAMETER),
  auth: AUTH,
});

const NamedCountSchema = Type.Object(
  {
    Name: Type.String({ description: 'The value; `(other)` sums the values beyond the first 50' }),
    Visits: Type.Integer({ description: 'Visits with this value in the period' }),
  },
  { description: 'A value and its visits' },
);

const topList = (what: string) =>
  Type.Array(NamedCountSchema, { description: `${what}, most visits first: at most 50, then the rest summed as (other)` });

export const StatsSchema = Type.Object(
  {
    ShortCode: Type.Union([Type.String(), Type.Null()], { description: 'The link, or null for the whole account' }),
    From: Type.String({ description: 'Start of the period (RFC 3339, UTC)' }),
    To: Type.String({ description: 'End of the period (RFC 3339, UTC)' }),
    Interval: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')], { description: 'Length of each Series entry (UTC)' }),
    Visits: Type.Integer({ description: 'Counted resolutions in the period' }),
    Humans: Type.Integer({ description: 'Visits not judged bots' }),
    Bots: Type.Integer({ description: 'Visits judged bots (by User-Agent; none is a bot)' }),
    Series: Type.Array(
      Type.Object({
        Time: Type.String({ description: 'Start of the interval (RFC 3339, UTC)' }),
        Visits: Type.Integer(),
        Bots: Type.Integer(),
      }),
      { description: 'One entry per interval of the period, zeros included' },
    ),
    Referrers: topList('Referrer hosts, (direct) without a Referer'),
    Countries: topList('ISO 3166 alpha-2 countries, ZZ unknown'),
    Browsers: topList('Browsers'),
    OperatingSystems: topList('Operating systems'),
    Devices: topList('Device classes: desktop, mobile, tablet, bot, other'),
  },
  { $id: 'Statistics', description: 'Visit statistics of one link or of the whole account (CONTRACT §7.4)' },
);

/** Statistics on the wire (`GET /v1/stats`). */
export type Statistics = Static<typeof StatsSchema>;

export const StatsQuery = Type.Object({
  short: Type.Optional(Type.String({ description: 'The link; omitted: every link of the account' })),
  from: Type.Optional(Type.String({ description: 'Start, RFC 3339 with Z or an offset; default 30 days before `to`' })),
  to: Type.Optional(Type.String({ description: 'End, RFC 3339 with Z or an offset; default now' })),
  interval: Type.Optional(Type.String({ description: 'hour, day (default) or month; UTC' })),
  format: Type.Optional(Type.String({ description: 'csv: the series as CSV (as `Accept: text/csv` does); json (default)' })),
  domain: Type.Optional(DOMAIN_PARAMETER),
  auth: AUTH,
});

/** Names of the security schemes in the OpenAPI document (components.securitySchemes). */
export const SecurityScheme = {
  Query: 'accessCodeQuery',
  Bearer: 'bearerAccessCode',
  Header: 'accessCodeHeader',
  Metrics: 'metricsToken',
  Admin: 'adminToken',
} as const;

/**
 * Public operations (no credentials): declared explicitly, since the document's default is
 * ACCESS_CODE_SECURITY (an operation that forgets its `security` is documented as protected).
 */
export const PUBLIC_SECURITY: readonly Readonly<Record<string, readonly string[]>>[] = [];

/** The admin token (`ADMIN_TOKEN`) as a Bearer token; no access code opens these routes. */
export const ADMIN_SECURITY: readonly Readonly<Record<string, readonly string[]>>[] = [{ [SecurityScheme.Admin]: [] }];

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
  403: { when: 'Link cap reached, the link belongs to another account, or the account is disabled', reason: 'the account already holds its maximum of 20 links' },
  404: { when: 'No such shortcode', reason: 'no link has this shortcode' },
  410: { when: 'The link exists but no longer resolves: expired, at its visit limit, or disabled', reason: 'the link has expired' },
  405: { when: 'A method this path does not serve (HEAD never creates or changes anything)', reason: 'HEAD is not allowed here; use GET, POST' },
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
 * The 400 any route answers to a request HTTP itself forbids (no Host header, or several),
 * for routes that take no parameters.
 */
export const MALFORMED_REQUEST_RESPONSE = textResponse(
  'A request without a Host header, or with several',
  'Unable to handle request: the Host header is required',
);

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

const EVENTS_DESCRIPTION = 'Comma-separated, from link.created, link.updated, link.deleted, link.visited, account.rotated';

export const WebhookSchema = Type.Object(
  {
    Id: Type.String({ description: 'The webhook\'s id: wh_ and 24 hex digits' }),
    Url: Type.String({ description: 'Where events are POSTed' }),
    Events: Type.Array(Type.String(), { description: 'The event types it receives' }),
    DateCreated: Type.String({ description: 'Creation time (UTC)' }),
  },
  { $id: 'Webhook', description: 'A webhook registration, without its secret' },
);

/** A webhook on the wire (`GET /v1/webhooks`). */
export type Webhook = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Type.Object(
  {
    Id: Type.String({ description: 'The webhook\'s id: wh_ and 24 hex digits' }),
    Url: Type.String({ description: 'Where events are POSTed' }),
    Events: Type.Array(Type.String(), { description: 'The event types it receives' }),
    Secret: Type.String({ description: 'The signing secret, whsec_ and base64 of 32 bytes: shown this once' }),
    DateCreated: Type.String({ description: 'Creation time (UTC)' }),
  },
  { $id: 'CreatedWebhook', description: 'A new webhook with its signing secret, shown only in this answer' },
);

/** A new webhook on the wire (`POST /v1/webhooks`). */
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export const DeliverySchema = Type.Object(
  {
    EventId: Type.String({ description: 'The event\'s webhook-id (the same on every attempt)' }),
    Type: Type.String({ description: 'The event type' }),
    Attempt: Type.Integer({ description: '1 for the first attempt' }),
    Time: Type.String({ description: 'When the attempt ended (UTC)' }),
    Status: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver\'s HTTP status, or null without an answer' }),
    Error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed, or null' }),
  },
  { $id: 'Delivery', description: 'One delivery attempt' },
);

/** A delivery attempt on the wire (`GET /v1/webhooks/deliveries`). */
export type Delivery = Static<typeof DeliverySchema>;

export const CreateWebhookQuery = Type.Object({
  url: Type.Optional(Type.String({ description: 'http(s) URL of the receiver (required); not a loopback, private or link-local address' })),
  events: Type.Optional(Type.String({ description: `${EVENTS_DESCRIPTION} (required)` })),
  auth: AUTH,
});

export const CreateWebhookBody = Type.Object({
  url: Type.Optional(Type.String({ description: 'http(s) URL of the receiver' })),
  events: Type.Optional(Type.String({ description: EVENTS_DESCRIPTION })),
});

export const WebhookIdQuery = Type.Object({
  id: Type.Optional(Type.String({ description: 'The webhook\'s id (required)' })),
  auth: AUTH,
});

const VisitItemSchema = Type.Object(
  {
    ShortCode: Type.String(),
    Time: Type.String({ description: 'When it was counted (UTC); the hour\'s start for visits folded while the receiver was down' }),
    Bot: Type.Boolean(),
    Referrer: Type.String({ description: 'Referrer host, (direct) without one' }),
    Country: Type.String({ description: 'ISO 3166 alpha-2, ZZ unknown' }),
    Browser: Type.String(),
    OperatingSystem: Type.String(),
    Device: Type.String({ description: 'desktop, mobile, tablet, bot or other' }),
  },
  { description: 'One counted visit' },
);

/** The `{type, timestamp, data}` body of one event type. */
function eventSchema(type: string, data: Parameters<typeof Type.Object>[0], description: string) {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ description: 'When the change happened (UTC)' }),
      data: Type.Object(data),
    },
    { description },
  );
}

/** One schema per event payload type (CONTRACT §7.5), for the OpenAPI document's `webhooks`. */
export const EventSchemas = {
  'link.created': eventSchema('link.created', LinkDetailsSchema.properties, 'A link was created; data is its LinkDetails'),
  'link.updated': eventSchema('link.updated', LinkDetailsSchema.properties, 'A link was edited; data is its LinkDetails after the edit'),
  'link.deleted': eventSchema('link.deleted', LinkDetailsSchema.properties, 'A link was deleted; data is its last LinkDetails'),
  'link.visited': eventSchema('link.visited', {
    visits: Type.Array(VisitItemSchema, { description: 'The visits since the previous delivery, at most 10,000 per delivery' }),
  }, 'Links were visited (batched: at most one delivery per second per webhook)'),
  'account.rotated': eventSchema('account.rotated', { Uid: Type.Integer() }, 'The account\'s access code was rotated'),
} as const;

const KEY_ID = Type.String({ description: 'The key\'s id: key_ and 24 hex digits (not secret)' });
const KEY_NAME = Type.String({ description: 'The name given at creation' });
const KEY_SCOPES = Type.Array(Type.String(), { description: 'What the key may do: links:read, links:write, stats:read, webhooks' });
const KEY_DATE = Type.String({ description: 'Creation time (UTC)' });
const KEY_LAST_USED = Type.Union([Type.String(), Type.Null()], { description: 'When it last authenticated a request (at most a minute stale), or null' });

export const ApiKeySchema = Type.Object(
  { Id: KEY_ID, Name: KEY_NAME, Scopes: KEY_SCOPES, DateCreated: KEY_DATE, LastUsed: KEY_LAST_USED },
  { $id: 'ApiKey', description: 'An API key, without the key itself' },
);

/** An API key on the wire (`GET /v1/keys`). */
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object(
  {
    Id: KEY_ID,
    Name: KEY_NAME,
    Scopes: KEY_SCOPES,
    Key: Type.String({ description: 'The key: slk_ and 43 base64url characters. Shown this once; only its digest is stored' }),
    DateCreated: KEY_DATE,
    LastUsed: KEY_LAST_USED,
  },
  { $id: 'CreatedApiKey', description: 'A new API key with the key itself, shown only in this answer' },
);

/** A new API key on the wire (`POST /v1/keys`). */
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

const KEY_NAME_PARAMETER = Type.String({ description: 'A name for the key: 1-100 characters, no control characters (required)' });
const KEY_SCOPES_PARAMETER = Type.String({ description: 'Comma-separated, from links:read, links:write, stats:read, webhooks (required)' });

export const CreateApiKeyQuery = Type.Object({
  name: Type.Optional(KEY_NAME_PARAMETER),
  scopes: Type.Optional(KEY_SCOPES_PARAMETER),
  auth: AUTH,
});

export const CreateApiKeyBody = Type.Object({
  name: Type.Optional(KEY_NAME_PARAMETER),
  scopes: Type.Optional(Type.Union([KEY_SCOPES_PARAMETER, Type.Array(Type.String())], { description: 'Comma-separated, or a JSON array in a JSON body' })),
});

export const ApiKeyIdQuery = Type.Object({
  id: Type.Optional(Type.String({ description: 'The key\'s id (required)' })),
  auth: AUTH,
});

const DOMAIN_HOST = Type.String({ description: 'The host name in lower case, without a port (e.g. go.example.com)' });
const DOMAIN_ORIGIN = Type.String({ description: 'Scheme, host and port as short URLs use them (e.g. https://go.example.com)' });
const FALLBACK = (what: string) => Type.Union([Type.String(), Type.Null()], { description: `${what}, or null` });

export const DomainSchema = Type.Object(
  { Host: DOMAIN_HOST, Origin: DOMAIN_ORIGIN },
  { $id: 'Domain', description: 'A domain short links may use: its short URLs are `Origin + "/" + ShortCode`' },
);

/** A domain on the wire of `GET /v1/domains`. */
export type Domain = Static<typeof DomainSchema>;

export const AdminDomainSchema = Type.Object(
  {
    Host: DOMAIN_HOST,
    Origin: DOMAIN_ORIGIN,
    NotFoundUrl: FALLBACK('Where a visit to an unknown shortcode of this domain is sent (302)'),
    RootUrl: FALLBACK('Where a visit to `/` of this domain is sent (302)'),
    ExpiredUrl: FALLBACK('Where a visit to an expired, used-up or disabled link of this domain is sent (302)'),
    Links: Type.Integer({ description: 'How many links the domain holds now' }),
    DateCreated: Type.Union([Type.String(), Type.Null()], { description: 'When it was registered (UTC); null for the default domain (BASE_URL\'s)' }),
  },
  { $id: 'AdminDomain', description: 'A domain as an administrator sees it, with its fallbacks' },
);

/** A domain on the wire of `/v1/admin/domain` and `/v1/admin/domains`. */
export type AdminDomain = Static<typeof AdminDomainSchema>;

const FALLBACK_PARAMETER = (what: string) => Type.String({
  description: `${what}: an absolute http(s) URL (it may point at this service); empty or omitted for none`,
});

export const AdminDomainPut = Type.Object({
  origin: Type.Optional(Type.String({ description: 'The domain\'s origin, like https://go.example.com: scheme, host and optional port, no path (required)' })),
  not_found_url: Type.Optional(FALLBACK_PARAMETER('Where an unknown shortcode of the domain is sent')),
  root_url: Type.Optional(FALLBACK_PARAMETER('Where `/` of the domain is sent; not the domain\'s own root')),
  expired_url: Type.Optional(FALLBACK_PARAMETER('Where an expired, used-up or disabled link of the domain is sent')),
});

export const AdminDomainDeleteQuery = Type.Object({
  host: Type.Optional(Type.String({ description: 'The domain\'s host, like go.example.com (required)' })),
});
