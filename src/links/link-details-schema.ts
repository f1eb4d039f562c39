/**
 * LinkDetails on the wire (CONTRACT §7.1), the one source of its shape: the routes serialise
 * with it and the OpenAPI document shows it (src/http/schemas.ts re-exports it), and events
 * and webhooks build their `data` as its Static type (src/events/payloads.ts). Keys in the
 * contract's order.
 */
import { Type, type Static } from 'typebox';

const Values = Type.Array(Type.String());

/** One redirect rule as LinkDetails shows it (CONTRACT §8.2): every condition's value a list. */
export const RuleSchema = Type.Object(
  {
    If: Type.Object(
      {
        device: Type.Optional(Values),
        os: Type.Optional(Values),
        country: Type.Optional(Values),
        language: Type.Optional(Values),
        query: Type.Optional(Type.Record(Type.String(), Values)),
      },
      { description: 'Conditions, all of which must hold' },
    ),
    To: Type.String({ description: 'Where a visit that meets the conditions is sent' }),
  },
  { description: 'A redirect rule' },
);

export const LinkDetailsSchema = Type.Object(
  {
    ShortCode: Type.String({ description: 'The shortcode, without the base URL or the domain' }),
    PointsTo: Type.String({ description: 'The target URL, exactly as given' }),
    CreatedBy: Type.Integer({ description: 'Uid of the account that created the link' }),
    Accesses: Type.Integer({ description: 'Resolutions counted so far' }),
    DateCreated: Type.String({ description: 'Creation time, e.g. 2026-11-22T04:12:49.123Z' }),
    Title: Type.Union([Type.String(), Type.Null()], { description: 'The title, or null' }),
    Tags: Type.Array(Type.String(), { description: 'Tags, lower case; [] when none' }),
    ExpiresAt: Type.Union([Type.String(), Type.Null()], {
      description: 'When the link stops resolving (UTC, toISOString form), or null',
    }),
    MaxVisits: Type.Union([Type.Integer(), Type.Null()], {
      description: 'How many resolutions the link allows in all, or null for no limit',
    }),
    Domain: Type.Union([Type.String(), Type.Null()], {
      description: 'The host of the domain the link is on, or null for the default domain (BASE_URL\'s)',
    }),
    ForwardQuery: Type.Boolean({ description: 'Whether a visitor\'s query string is appended to the target on redirect' }),
    Protected: Type.Boolean({ description: 'Whether a password protects the link (the password itself is never shown)' }),
    Rules: Type.Array(RuleSchema, { description: 'Redirect rules, first match wins; [] when none' }),
  },
  { $id: 'LinkDetails', description: 'A short link with the details its owner sees' },
);

/** A link as its owner sees it (`GET /v1/links`, `PATCH /v1/link`) or an administrator (`GET /v1/admin/links`). */
export type LinkDetails = Static<typeof LinkDetailsSchema>;
